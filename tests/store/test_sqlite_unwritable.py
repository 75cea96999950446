"""A store that cannot be written raises a StoreError naming the file and the reason, and writes
nothing by halves: read-only at open (file, directory), read-only or full in mid-use.

Root ignores permission bits, so "read-only" is made in ways that hold for root too: an
immutable file or directory (``chattr +i``; chmod when not root) at open; SQLite's
``PRAGMA query_only`` on the store's own connection in mid-use (a file system cannot be made
read-only under a file open for writing: remounting it read-only fails with EBUSY); a full disk
as SQLite's ``max_page_count`` (every run) and as a real, tiny tmpfs in a private mount namespace
(where ``unshare`` may mount one).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from changewatch.core.comparisons import Kind
from changewatch.store import Lease, StoreError
from changewatch.store.sqlite import SQLiteStore

from ._support import T0, T1, encoded, outcome, with_http


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """*path* (a file or a directory) made read-only for this process, even as root."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(mode & ~0o222)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    try:
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    except FileNotFoundError:
        pytest.skip("as root, only an immutable file is read-only, and chattr is not installed")
    if done.returncode != 0:
        pytest.skip(f"as root, only an immutable file is read-only, and this file system refuses "
                    f"chattr +i: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def _existing_store(path: Path) -> bytes:
    store = SQLiteStore(path)
    store.open()
    store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded()))
    store.close()
    return path.read_bytes()


def test_a_read_only_store_file_is_refused_at_open(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    before = _existing_store(path)
    with read_only(path), pytest.raises(StoreError, match=r"cannot be written.*the file is read-only") as caught:
        SQLiteStore(path).open()
    assert str(path) in str(caught.value)
    assert path.read_bytes() == before


def test_a_store_in_a_read_only_directory_is_refused_at_open(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    before = _existing_store(path)
    with read_only(tmp_path), pytest.raises(StoreError, match=r"cannot be written.*directory .* is read-only"):
        SQLiteStore(path).open()
    assert path.read_bytes() == before


def test_a_new_store_in_a_read_only_directory_is_refused(tmp_path: Path) -> None:
    with read_only(tmp_path), pytest.raises(StoreError, match=r"cannot be written.*read-only") as caught:
        SQLiteStore(tmp_path / "state.db").open()
    assert str(tmp_path / "state.db") in str(caught.value)
    assert not (tmp_path / "state.db").exists()


def test_unwritable_locations_give_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="cannot create the store's directory"):
        SQLiteStore(tmp_path / "file" / "state.db").open()
    # /proc refuses new entries even to root
    with pytest.raises(StoreError, match="cannot create the store's directory"):
        SQLiteStore("/proc/self/changewatch/state.db").open()
    with pytest.raises(StoreError, match="is a directory"):
        SQLiteStore(tmp_path).open()


def _snapshot_of_everything(store: SQLiteStore) -> tuple[object, ...]:
    return (store.read("spider", "k"), list(store.changes()), store.validators("spider", "https://s.example/p"))


def test_a_store_made_read_only_in_mid_use(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "state.db")
    store.open()
    try:
        store.commit("spider", "k", None, with_http(Kind.BASELINE, "https://s.example/p", '"a"', snapshot=encoded()))
        before = _snapshot_of_everything(store)
        store.db.execute("PRAGMA query_only=1")
        with pytest.raises(StoreError, match=r"state\.db cannot be written .*readonly database"):
            store.commit("spider", "k", 1, with_http(Kind.FIELD, "https://s.example/p", '"b"', at=T1))
        for call in (lambda: store.claim_undelivered("spider", Lease("a", 5)),
                     lambda: store.mark_delivered("spider", [1], T1),
                     lambda: store.forget_validators("spider", "https://s.example/p", [])):
            with pytest.raises(StoreError, match="cannot be written"):
                call()
        assert _snapshot_of_everything(store) == before  # nothing half-written
        store.db.execute("PRAGMA query_only=0")
        assert store.commit("spider", "k", 1, outcome(Kind.NONE, at=T1)).version == 2
    finally:
        store.close()


def test_a_disk_full_in_mid_use(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "state.db")
    store.open()
    try:
        store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded(), at=T0))
        before = _snapshot_of_everything(store)
        pages = store.db.execute("PRAGMA page_count").fetchone()[0]
        store.db.execute(f"PRAGMA max_page_count={pages}")
        with pytest.raises(StoreError, match=r"state\.db cannot be written .*full"):
            store.commit("spider", "k", 1, outcome(Kind.FIELD, os.urandom(200_000), {"n": 1}, at=T1))
        assert _snapshot_of_everything(store) == before
        store.db.execute("PRAGMA max_page_count=1073741823")
        assert store.commit("spider", "k", 1, outcome(Kind.FIELD, os.urandom(200_000), {"n": 1}, at=T1)).version == 2
    finally:
        store.close()


_FILL_THEN_COMMIT = """
import os, sys
from changewatch.core.comparisons import Kind
from changewatch.store import StoreError, open_store
from changewatch.store import Outcome
where = sys.argv[1]
store = open_store(f"sqlite:///{where}/state.db")
store.commit("s", "k", None, Outcome(Kind.BASELINE, "u", "2024-01-01T00:00:00Z", snapshot=b"x" * 1000))
filler = os.open(f"{where}/filler", os.O_WRONLY | os.O_CREAT)
try:
    while os.write(filler, b"\\0" * 4096):
        pass
except OSError:
    pass
try:
    store.commit("s", "k", 1, Outcome(Kind.FIELD, "u", "2024-01-01T01:00:00Z", snapshot=os.urandom(300_000),
                                      record={"n": 1}))
    print("committed on a full disk")
except StoreError as exc:
    print("refused:", exc)
os.close(filler)
os.remove(f"{where}/filler")
state = store.read("s", "k")
print("state:", state.version, state.counters, len(list(store.changes("s"))))
print("again:", store.commit("s", "k", 1, Outcome(Kind.NONE, "u", "2024-01-01T01:00:00Z")).version)
"""


def test_a_real_full_disk_in_mid_use(tmp_path: Path) -> None:
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    mount = f"mount -t tmpfs -o size=1m tmpfs {tiny}"
    try:
        probe = subprocess.run(["unshare", "-m", "sh", "-c", mount], capture_output=True, text=True)
    except FileNotFoundError:
        pytest.skip("no unshare: cannot mount a tiny file system to fill")
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a tiny tmpfs in a private mount namespace: {probe.stderr.strip()}")
    done = subprocess.run(["unshare", "-m", "sh", "-c", f'{mount} && exec "$0" -c "$1" "$2"',
                           sys.executable, _FILL_THEN_COMMIT, str(tiny)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("refused: store ") and "cannot be written" in lines[0] and "full" in lines[0], lines
    assert lines[1:] == ["state: 1 {'baseline': 1} 0", "again: 2"]
