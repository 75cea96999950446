"""SQLite-specific behaviour: bad files are refused and left untouched."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from changewatch.store import StoreError, open_store, store_from_uri
from changewatch.store.sqlite import SCHEMA_VERSION, SQLiteStore


def test_creates_missing_directories(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/a/b/state.db")
    store.close()
    assert (tmp_path / "a" / "b" / "state.db").exists()


def test_relative_uri_is_relative_to_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    open_store("sqlite:///.changewatch/state.db").close()
    assert (tmp_path / ".changewatch" / "state.db").exists()


def test_uses_wal(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    store.open()
    try:
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        store.close()


@pytest.mark.parametrize("content", [b"hello, not a database", b"\x00" * 4096, b"%PDF-1.7 ..."])
def test_refuses_a_file_that_is_not_a_database(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(content)
    with pytest.raises(StoreError, match="not a changewatch store"):
        SQLiteStore(path).open()
    assert path.read_bytes() == content


def test_refuses_another_applications_database(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE customers (id INTEGER)")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="another application"):
        SQLiteStore(path).open()
    assert path.read_bytes() == before


def test_refuses_a_newer_schema(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    SQLiteStore(path).open()
    db = sqlite3.connect(path)
    db.execute("UPDATE changewatch_meta SET value=? WHERE name='schema_version'", (str(SCHEMA_VERSION + 1),))
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer than this changewatch"):
        SQLiteStore(path).open()


def test_upgrades_a_version_1_store_in_place(tmp_path: Path) -> None:
    from changewatch.store.sqlite import _SCHEMA as SCHEMA_1  # the tables of changewatch 0.1

    path = tmp_path / "state.db"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_1)
    db.executemany("INSERT INTO changewatch_meta VALUES (?, ?)", [("app", "changewatch"), ("schema_version", "1")])
    db.execute("INSERT INTO observations (spider, key, url, fields, last_good) VALUES (?,?,?,?,?)",
               ("spider", "k", "https://s.example/", '{"raw": {"a": "1"}, "norm": {"a": "1"}}', "2026-11-29T00:00:00Z"))
    db.execute("INSERT INTO changes (spider, key, kind, observed_at, record) VALUES (?,?,?,?,?)",
               ("spider", "k", "field", "2026-11-29T00:00:00Z", '{"kind": "field"}'))
    db.commit()
    db.close()
    store = SQLiteStore(path)
    store.open()
    try:
        state = store.get("spider", "k")
        assert state is not None and state.snapshot.fields == {"a": "1"}
        assert store.validators("spider", "https://s.example/") == []
        assert store.undelivered("spider") == []  # history before the upgrade is not exported again
        version = store.db.execute("SELECT value FROM changewatch_meta WHERE name='schema_version'").fetchone()[0]
        assert version == str(SCHEMA_VERSION) == "2"
    finally:
        store.close()


def test_refuses_a_corrupt_database(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = SQLiteStore(path)
    store.open()
    store.close()
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # keep the SQLite header, wreck the schema page
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match=r"corrupt|not a changewatch"):
        SQLiteStore(path).open()
    assert path.read_bytes() == bytes(data)


def test_unwritable_locations_give_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="cannot create the store's directory"):
        SQLiteStore(tmp_path / "file" / "state.db").open()
    # /proc refuses new entries even to root, where chmod-based read-only tests would pass
    with pytest.raises(StoreError, match="cannot create the store's directory"):
        SQLiteStore("/proc/self/changewatch/state.db").open()
    with pytest.raises(StoreError, match="is a directory"):
        SQLiteStore(tmp_path).open()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions; /proc covers read-only above")
def test_read_only_directory(tmp_path: Path) -> None:  # pragma: no cover - only as non-root
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    with pytest.raises(StoreError):
        SQLiteStore(ro / "state.db").open()


@pytest.mark.parametrize("uri", ["sqlite://", "sqlite:///", "mysql://x/y", "state.db"])
def test_bad_uris(uri: str) -> None:
    with pytest.raises(StoreError):
        store_from_uri(uri)


_WRITER = """
import sys
from changewatch.core.compare import Kind, page_snapshot
from changewatch.store import Outcome
from changewatch.store.sqlite import SQLiteStore
store = SQLiteStore(sys.argv[1]); store.open()
snap = page_snapshot("<p>" + "word " * 2000 + "</p>", None, None, False)
i = 0
print("ready", flush=True)
while True:
    i += 1
    store.apply("s", f"k{i % 50}", lambda st: Outcome(Kind.CONTENT, "u", "t", snapshot=snap, record={"i": i}))
"""


def test_survives_sigkill_mid_write(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    store = SQLiteStore(path)
    store.open()  # runs SQLite's quick_check
    try:
        changes = list(store.changes("s"))
        states = [store.get("s", k) for k in store.keys("s")]
        # every logged change moved its state in the same transaction: the counters agree
        assert sum(s.counters.get("content", 0) for s in states if s) == len(changes) > 0
    finally:
        store.close()
