"""SQLite-specific behaviour: WAL, bad files refused and left untouched, a writer killed at any
instant. Schema and migrations: test_sqlite_schema.py; unwritable stores: test_sqlite_unwritable.py."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from changewatch.core.comparisons import Kind
from changewatch.store import StoreError, open_store, store_from_uri
from changewatch.store.sqlite import SQLiteStore

from ..polling import wait_until
from ._support import T1, encoded, outcome


def test_creates_missing_directories(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/a/b/state.db")
    store.close()
    assert (tmp_path / "a" / "b" / "state.db").exists()


def test_relative_uri_is_relative_to_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    open_store("sqlite:///.changewatch/state.db").close()
    assert (tmp_path / ".changewatch" / "state.db").exists()


def test_a_new_store_says_where_it_was_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crawl started in another folder than the usual one (a subfolder of the project) makes a
    store of its own, where every page is a silent baseline again: the crawl says so, in full."""
    monkeypatch.chdir(tmp_path)
    store = SQLiteStore(".changewatch/state.db")
    store.open()
    store.close()
    assert store.created == str(tmp_path.resolve() / ".changewatch" / "state.db")
    again = SQLiteStore(".changewatch/state.db")  # the usual store, found again: nothing to say
    again.open()
    again.close()
    assert again.created is None


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


def test_a_writer_that_holds_the_lock_too_long_is_named(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = store_from_uri(f"sqlite:///{path}?timeout=0.2")
    store.open()
    other = sqlite3.connect(path, isolation_level=None)
    try:
        store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded()))
        other.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        with pytest.raises(StoreError, match=r"stayed locked by another writer .*timeout"):
            store.commit("spider", "k", 1, outcome(Kind.NONE, at=T1))
        assert 0.15 < time.monotonic() - started < 5
        other.execute("ROLLBACK")
        assert store.commit("spider", "k", 1, outcome(Kind.NONE, at=T1)).version == 2
    finally:
        other.close()
        store.close()


def test_an_in_memory_store_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = open_store("sqlite:///:memory:")
    try:
        store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded()))
        assert store.read("spider", "k") is not None
    finally:
        store.close()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("uri", ["sqlite://", "sqlite:///", "mysql://x/y", "state.db"])
def test_bad_uris(uri: str) -> None:
    with pytest.raises(StoreError):
        store_from_uri(uri)


_WRITER = """
import os, sys
from changewatch.core.comparisons import Kind
from changewatch.store import Outcome, StaleObservation
from changewatch.store.sqlite import SQLiteStore
store = SQLiteStore(sys.argv[1]); store.open()
snapshot = os.urandom(20_000)
i = 0
print("ready", flush=True)
while True:
    i += 1
    key = f"k{i % 50}"
    state = store.read("s", key)
    store.commit("s", key, state.version if state else None,
                 Outcome(Kind.CONTENT, "u", "2024-01-01T00:00:00Z", snapshot=snapshot, record={"i": i}))
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
        states = [store.read("s", k) for k in store.keys("s")]
        # every logged change moved its state in the same transaction: counters and versions agree
        assert sum(s.counters.get("content", 0) for s in states if s) == len(changes) > 0
        assert sum(s.version for s in states if s) == len(changes)
    finally:
        store.close()


def open_at_once(path: Path, n: int = 4) -> list[str]:
    """Open the store at *path* from *n* connections released together; the errors."""
    barrier = threading.Barrier(n)
    errors: list[str] = []

    def open_one() -> None:
        store = SQLiteStore(path)
        barrier.wait()
        try:
            store.open()
        except StoreError as exc:
            errors.append(str(exc))
        finally:
            store.close()

    threads = [threading.Thread(target=open_one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_crawls_opening_a_new_store_at_once_all_succeed(tmp_path: Path) -> None:
    for i in range(10):
        assert open_at_once(tmp_path / f"state{i}.db") == []


def _truncate_wal(store: SQLiteStore) -> None:
    """Empty the log: retried while the store's own checkpoint thread (its own connection) holds
    the checkpoint, where TRUNCATE answers busy and leaves the log as it was."""
    for _ in range(200):
        if store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0:
            return
        time.sleep(0.025)
    raise AssertionError("the log could not be truncated in 5 s")


def _wal_bytes(store: SQLiteStore) -> int:
    return (store.path.parent / (store.path.name + "-wal")).stat().st_size


def test_an_observation_without_a_new_snapshot_does_not_rewrite_the_stored_one(tmp_path: Path) -> None:
    """Schema 8: the counters of a key change size on most observations, and SQLite
    rewrites a whole row when its size changes. With the snapshot in the key's row, every
    unchanged page rewrote its snapshot (~31 KB for a page kept unread, overflow pages and all)."""
    store = SQLiteStore(tmp_path / "s.db")
    store.open()
    try:
        snapshot = bytes(range(256)) * 256  # 64 KB
        store.commit("spider", "k", None, outcome(Kind.BASELINE, snapshot, at=T1))
        version = 1
        for day in range(2, 12):  # {"baseline": 1} → {"baseline": 1, "none": 1} → … "none": 10: sizes change
            _truncate_wal(store)
            assert _wal_bytes(store) == 0
            seen = outcome(Kind.NONE, at=f"2026-01-{day:02d}T00:00:00Z")
            version = store.commit("spider", "k", version, seen).version
            assert 0 < _wal_bytes(store) < len(snapshot) // 4, day
        state = store.read("spider", "k")
        assert state is not None and state.snapshot == snapshot and state.counters == {"baseline": 1, "none": 10}
        _truncate_wal(store)
        new = snapshot[::-1]
        store.commit("spider", "k", version, outcome(Kind.CONTENT, new, at="2026-01-20T00:00:00Z"))
        assert _wal_bytes(store) > len(new)  # a new snapshot is written, of course
        assert store.read("spider", "k").snapshot == new  # type: ignore[union-attr]
    finally:
        store.close()


def _fill(store: SQLiteStore, keys: range, size: int = 64 * 1024) -> None:
    for i in keys:  # each commit ~16 pages of log: 100 of them take it past SQLite's 1,000
        store.commit("spider", f"k{i}", None, outcome(Kind.BASELINE, bytes([i % 256]) * size, at=T1))


def test_the_log_is_checkpointed_outside_the_committing_thread(tmp_path: Path) -> None:
    """SQLite's automatic checkpoint runs inside the COMMIT that takes the log past 1,000 pages:
    on the reactor, with two fsyncs. The store's connection has it off, and a thread
    of the store's copies the log into the database while the store is still open."""
    store = SQLiteStore(tmp_path / "s.db")
    store.open()
    try:
        assert store.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        _fill(store, range(100))
        checkpointer = store._checkpointer
        assert checkpointer is not None
        # the store's thread ran a checkpoint, and the commits are in the database file
        assert wait_until(lambda: checkpointer.checkpoints > 0
                          and (tmp_path / "s.db").stat().st_size > 100 * 64 * 1024, timeout=15), \
            "the commits never reached the database file while the store was open"
    finally:
        store.close()
    assert not (tmp_path / "s.db-wal").exists()  # the last connection closed checkpoints the rest
    reopened = SQLiteStore(tmp_path / "s.db")
    reopened.open()
    try:
        assert len(reopened.keys("spider")) == 100
    finally:
        reopened.close()


def test_a_dead_checkpoint_thread_gives_the_checkpoint_back_to_sqlite(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Were the thread gone, the log would grow without bound: the store notices at its next commit
    and turns SQLite's own checkpoint back on."""
    store = SQLiteStore(tmp_path / "s.db")
    store.open()
    try:
        def refuse(*args: Any, **kwargs: Any) -> sqlite3.Connection:
            raise sqlite3.OperationalError("unable to open database file")
        monkeypatch.setattr("changewatch.store.sqlite.checkpoint.sqlite3.connect", refuse)
        _fill(store, range(1))
        checkpointer = store._checkpointer
        assert checkpointer is not None and checkpointer._thread is not None
        checkpointer._thread.join(10)
        monkeypatch.undo()
        _fill(store, range(1, 100))
        assert store.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
        assert "the checkpoint thread cannot open it" in caplog.text
        assert "checkpoints run in the committing thread from now on" in caplog.text
        assert (tmp_path / "s.db").stat().st_size > 50 * 64 * 1024  # SQLite checkpointed as it went
    finally:
        store.close()
