"""`changewatch changes`: the change log as JSON lines from a real SQLite or PostgreSQL store,
every filter, --mark-delivered for consumers that pull, and bad input as one line and exit 2."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from changewatch.cli import main
from changewatch.core.comparisons import Kind
from changewatch.store import BUILTIN_STORE_SCHEMES, Lease, open_store
from changewatch.store.semantics import format_time
from changewatch.store.sqlite import SQLiteStore
from changewatch.store.sqlite.schema import schema_version

from ..services import require
from ..store._support import LOGGED, T1, encoded, log_changes, outcome
from ..store.conftest import postgresql_schema_uri
from ..store.test_sqlite_schema import SHIPPED, older_released_store

Capture = pytest.CaptureFixture[str]
SCRIPT = Path(sys.executable).parent / "changewatch"
MEMBERS = {"id", "spider", "key", "kind", "observed_at", "delivered", "delivered_at", "record"}


@pytest.fixture
def logged(store_uri: str) -> Iterator[tuple[str, list[int]]]:
    """A store holding :data:`LOGGED` (the first two delivered), and the change ids."""
    store = open_store(store_uri)
    try:
        yield store_uri, log_changes(store)
    finally:
        store.close()


def changes(capsys: Capture, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    code = main(["changes", *args])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def ns(lines: list[dict[str, Any]]) -> list[int]:
    return [line["record"]["n"] for line in lines]


def test_every_change_oldest_first_as_exported(logged: tuple[str, list[int]], capsys: Capture) -> None:
    uri, ids = logged
    code, lines, err = changes(capsys, "--store", uri)
    assert (code, err) == (0, "")
    assert [line["id"] for line in lines] == ids and all(set(line) == MEMBERS for line in lines)
    spider, key, kind, at = LOGGED[0]
    assert lines[0] == {"id": ids[0], "spider": spider, "key": key, "kind": kind.value, "observed_at": at,
                        "delivered": True, "delivered_at": "2024-06-01T00:00:00Z",
                        "record": {"n": 0, "change_id": ids[0]}}  # the record as a feed exported it
    assert [(line["delivered"], line["delivered_at"]) for line in lines[2:]] == [(False, None)] * 4


@pytest.mark.parametrize(("args", "expected"), [
    (["--spider", "shop"], [0, 1, 3, 5]),
    (["--spider", "shop", "--spider", "news"], [0, 1, 2, 3, 4, 5]),
    (["--key", "a"], [0, 2, 3]),
    (["--key", "a", "--key", "c"], [0, 2, 3, 4]),
    (["--kind", "error"], [2, 5]),
    (["--kind", "Error"], [2, 5]),
    (["--kind", "field,entities"], [0, 3, 4]),
    (["--kind", "field", "--kind", " entities ,"], [0, 3, 4]),
    (["--since", T1], [1, 2, 3, 4, 5]),
    (["--since", "2024-05-01T02:00:00+02:00"], [0, 1, 2, 3, 4, 5]),  # T0, midnight UTC
    (["--since", "2024-05-02"], []),
    (["--undelivered"], [2, 3, 4, 5]),
    (["--spider", "shop", "--key", "a", "--kind", "entities,field", "--since", T1, "--undelivered"], [3]),
    (["--spider", "nobody"], []),  # nothing matches: exit 0, no output
])
def test_filters(logged: tuple[str, list[int]], capsys: Capture, args: list[str], expected: list[int]) -> None:
    code, lines, err = changes(capsys, "--store", logged[0], *args)
    assert (code, ns(lines), err) == (0, expected, "")


def test_since_a_duration_is_back_from_now(store_uri: str, capsys: Capture) -> None:
    now = datetime.now(UTC)
    store = open_store(store_uri)
    for n, age in enumerate((timedelta(days=20), timedelta(days=3), timedelta(hours=5), timedelta(minutes=10))):
        store.commit("shop", f"k{n}", None, outcome(Kind.FIELD, encoded(), {"n": n}, at=format_time(now - age)))
    store.close()
    for since, expected in (("30d", [0, 1, 2, 3]), ("2w", [1, 2, 3]), ("4d", [1, 2, 3]), ("1d", [2, 3]),
                            ("6h", [2, 3]), ("30m", [3]), ("540s", []), ("1 D", [2, 3])):
        code, lines, _ = changes(capsys, "--store", store_uri, "--since", since)
        assert (code, ns(lines)) == (0, expected), since


def test_mark_delivered_after_printing(logged: tuple[str, list[int]], capsys: Capture) -> None:
    uri = logged[0]
    code, lines, _ = changes(capsys, "--store", uri, "--undelivered", "--mark-delivered", "--spider", "news")
    assert (code, ns(lines)) == (0, [2, 4])
    code, lines, _ = changes(capsys, "--store", uri, "--undelivered")
    assert ns(lines) == [3, 5]  # only what was listed
    code, lines, _ = changes(capsys, "--store", uri, "--undelivered", "--mark-delivered")
    assert ns(lines) == [3, 5]
    assert changes(capsys, "--store", uri, "--undelivered") == (0, [], "")
    code, lines, _ = changes(capsys, "--store", uri, "--mark-delivered")  # delivered ones keep their time
    assert lines[0]["delivered_at"] == "2024-06-01T00:00:00Z" and all(line["delivered"] for line in lines)
    store = open_store(uri)
    try:
        assert store.undelivered("shop") == store.undelivered("news") == []
        assert store.claim_undelivered("shop", Lease("a-crawl", 60)) == []  # no crawl exports them again
    finally:
        store.close()


# --- bad input: one line on stderr, exit 2, nothing created ------------------------------------------------------

def refused(capsys: Capture, *args: str) -> str:
    code, lines, err = changes(capsys, *args)
    assert (code, lines) == (2, []), err
    assert err.startswith("changewatch changes: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


def test_bad_arguments(logged: tuple[str, list[int]], capsys: Capture) -> None:
    uri = logged[0]
    assert "--kind 'price' is not a kind of change: expected one of field, entities, content, error" in refused(
        capsys, "--store", uri, "--kind", "field,price")
    assert "'none' observation is never logged" in refused(capsys, "--store", uri, "--kind", "none")
    for since in ("yesterday", "7x", "2024-13-01", "99999999999999d", ""):
        assert f"--since {since!r} is not a time" in refused(capsys, "--store", uri, "--since", since)
    assert "unknown store URI scheme" in refused(capsys, "--store", "mysql://db/x")


def test_a_missing_store_is_not_created(tmp_path: Path, capsys: Capture) -> None:
    missing = tmp_path / "sub" / "typo.db"
    assert f"no such store: {missing} does not exist" in refused(capsys, "--store", f"sqlite:///{missing}")
    assert not missing.parent.exists()
    empty = tmp_path / "empty.db"
    empty.touch()
    assert "no such store" in refused(capsys, "--store", f"sqlite:///{empty}", "--mark-delivered")
    assert empty.stat().st_size == 0


@pytest.mark.slow  # the test PostgreSQL server
def test_a_missing_postgresql_schema_is_not_created(capsys: Capture) -> None:
    name, uri = postgresql_schema_uri()
    assert "no such store" in refused(capsys, "--store", uri)
    import psycopg

    with psycopg.connect(uri.split("?")[0]) as conn:
        assert conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (name,)).fetchone() is None


def test_an_unreachable_server(capsys: Capture) -> None:
    err = refused(capsys, "--store", "postgresql://watcher:s3cret-pw@127.0.0.1:1/db")
    assert "cannot connect" in err and "postgresql://watcher:***@127.0.0.1:1/db" in err and "s3cret" not in err


@pytest.mark.parametrize("query", ["password=s3cret-q", "password=s3cret-q&bogus=1", "bogus=1&password=s3cret-q",
                                   "password=s3cret-q&password=again"])
def test_a_password_in_the_query_is_never_printed(capsys: Capture, query: str) -> None:
    err = refused(capsys, "--store", f"postgresql://watcher:s3cret-pw@127.0.0.1:1/db?{query}")
    assert "s3cret" not in err and "again" not in err


def test_an_older_store_is_left_untouched_unless_upgrade(tmp_path: Path, capsys: Capture,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "old.db"
    older_released_store(path, monkeypatch)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    err = refused(capsys, "--store", f"sqlite:///{path}")
    assert (f"has store schema {SHIPPED}, older than this changewatch's ({schema_version()})" in err
            and "add --upgrade" in err)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    code, lines, _ = changes(capsys, "--store", f"sqlite:///{path}", "--upgrade")
    assert code == 0 and [line["key"] for line in lines] == ["k"]
    with sqlite3.connect(path) as db:
        version = db.execute("SELECT value FROM changewatch_meta WHERE name = 'schema_version'").fetchone()
        assert version == (str(schema_version()),)


def test_a_newer_store_is_refused(tmp_path: Path, capsys: Capture) -> None:
    path = tmp_path / "new.db"
    open_store(f"sqlite:///{path}").close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE changewatch_meta SET value = '999' WHERE name = 'schema_version'")
    assert "has store schema 999, newer than this changewatch understands" in refused(
        capsys, "--store", f"sqlite:///{path}", "--upgrade")


class PlainStore:
    """A third-party store with the Store protocol only."""

    def __init__(self, inner: SQLiteStore):
        self._inner = inner

    @classmethod
    def from_uri(cls, uri: str, options: Any) -> PlainStore:
        return cls(SQLiteStore.from_uri("sqlite:" + uri.split(":", 1)[1], options))

    def __getattr__(self, name: str) -> Any:
        if name in ("open_existing", "query_changes", "export_rows", "import_rows", "counts"):
            raise AttributeError(name)
        return getattr(self._inner, name)


def test_a_store_without_the_optional_protocol(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                               capsys: Capture) -> None:
    monkeypatch.setitem(BUILTIN_STORE_SCHEMES, "plain", f"{__name__}.PlainStore")
    err = refused(capsys, "--store", f"plain:///{tmp_path}/s.db")
    assert "cannot list its change log: its backend does not implement changewatch.store.ChangeLogStore" in err
    assert not (tmp_path / "s.db").exists()


# --- as a process: the console script, a file that accumulates, a pipe that closes --------------------------------

def _script() -> str:
    require(SCRIPT.is_file(), "the changewatch console script", f"not installed next to {sys.executable}: "
            "pip install -e '.[test]'")
    return str(SCRIPT)


def test_a_consumer_pulls_into_a_file(logged: tuple[str, list[int]], tmp_path: Path) -> None:
    uri, ids = logged
    mine = tmp_path / "mine.jsonl"
    for _ in range(2):
        with mine.open("ab") as out:
            done = subprocess.run([_script(), "changes", "--store", uri, "--undelivered", "--mark-delivered"],
                                  stdout=out, stderr=subprocess.PIPE, text=True, timeout=120, check=False)
        assert (done.returncode, done.stderr) == (0, "")
    pulled = [json.loads(line) for line in mine.read_text(encoding="utf-8").splitlines()]
    assert [line["id"] for line in pulled] == ids[2:]  # once: the second pull found nothing new


def test_a_closed_pipe_marks_nothing(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path}/state.db"
    store = open_store(uri)
    for n in range(300):  # ~600 KB of lines: far more than a pipe holds once `head` has gone
        store.commit("shop", f"k{n}", None, outcome(Kind.CONTENT, encoded(), {"n": n, "diff": "x" * 2000}))
    store.close()
    writer = subprocess.Popen([_script(), "changes", "--store", uri, "--undelivered", "--mark-delivered"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert writer.stdout is not None and writer.stderr is not None
    head = subprocess.run(["head", "-n", "1"], stdin=writer.stdout, capture_output=True, timeout=120, check=True)
    writer.stdout.close()
    err = writer.stderr.read().decode()
    assert writer.wait(timeout=120) == 1
    assert json.loads(head.stdout)["record"]["n"] == 0
    assert "cannot write the output" in err and "nothing was marked delivered" in err and "Traceback" not in err
    assert err.count("\n") == 1
    check = open_store(uri)
    try:
        assert len(check.undelivered("shop")) == 300
    finally:
        check.close()



def test_the_changes_of_a_site_watch(store_uri: str, capsys: Capture) -> None:
    store = open_store(store_uri)
    try:
        for n, key in enumerate(("docs", "docs|https://docs.example/a", "docsx|https://d.example/", "blog",
                                 "DOCS|https://docs.example/c", "d_cs|https://docs.example/d", "docs|https://x/b")):
            store.commit("watch", key, None, outcome(Kind.FIELD, encoded(), {"n": n}, at=T1),
                         lease=Lease("owner", 60.0))
    finally:
        store.close()
    code, lines, err = changes(capsys, "--store", store_uri, "--site-watch", "docs")
    assert (code, ns(lines), err) == (0, [0, 1, 6], "")
    code, lines, _ = changes(capsys, "--store", store_uri, "--site-watch", "docs", "--site-watch", "blog")
    assert ns(lines) == [0, 1, 3, 6]
    code, lines, _ = changes(capsys, "--store", store_uri, "--site-watch", "docs", "--key", "docs")
    assert ns(lines) == [0]  # the page set's record alone: --key stays exact
    assert ns(changes(capsys, "--store", store_uri, "--site-watch", "d_cs")[1]) == [5]
    assert ns(changes(capsys, "--store", store_uri, "--site-watch", "d%")[1]) == []
