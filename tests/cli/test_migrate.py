"""`changewatch migrate --from URI --to URI`: a store moved between real SQLite and PostgreSQL
stores carries on where it left off (no baseline again, 304s, undelivered changes redelivered),
refuses an occupied target, and leaves the target empty when it fails."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from changewatch.cli import main
from changewatch.core.comparisons import Kind
from changewatch.store import BUILTIN_STORE_SCHEMES, TRANSFER_TABLES, StoreCounts, TransferableStore, open_store

from ..e2e.crawl import Crawler
from ..middlewares.conditional.servers import OddServer, Page
from ..middlewares.conditional.test_odd_servers import html
from ..store._support import encoded, log_changes, outcome
from ..store.conftest import drop_postgresql_schema, postgresql_schema_uri

Capture = pytest.CaptureFixture[str]
NewPostgreSQL = Callable[[], str]


@pytest.fixture
def new_postgresql() -> Iterator[NewPostgreSQL]:
    """URIs of fresh PostgreSQL schemas, dropped after the test."""
    names: list[str] = []

    def make() -> str:
        name, uri = postgresql_schema_uri()
        names.append(name)
        return uri

    yield make
    for name in names:
        drop_postgresql_schema(name)


def migrate(capsys: Capture, source: str, target: str, *extra: str) -> tuple[int, str, str]:
    code = main(["migrate", "--from", source, "--to", target, *extra])
    out, err = capsys.readouterr()
    return code, out, err


def dump(uri: str) -> dict[str, list[tuple[Any, ...]]]:
    store = open_store(uri)
    assert isinstance(store, TransferableStore)
    try:
        out: dict[str, list[tuple[Any, ...]]] = {table: [] for table in TRANSFER_TABLES}
        for table, rows in store.export_rows():
            out[table] += rows
        return out
    finally:
        store.close()


def counts(uri: str) -> StoreCounts:
    store = open_store(uri)
    assert isinstance(store, TransferableStore)
    try:
        return store.counts()
    finally:
        store.close()


EMPTY = StoreCounts({}, 0, 0, 0)


def test_a_crawl_carries_on_after_moving_to_postgresql(odd_server: tuple[OddServer, str], tmp_path: Path,
                                                      new_postgresql: NewPostgreSQL, capsys: Capture) -> None:
    server, base = odd_server
    server.pages.update({
        "/etag": Page(html("with an etag"), etag='"v1"'),
        "/dated": Page(html("with a date"), last_modified="Wed, 01 May 2024 00:00:00 GMT"),
        "/plain": Page(html("no validators")),
        "/moves": Page(html("price 10"), etag='"m1"'),
    })
    watches = [{"url": f"{base}{path}", "key": path.strip("/")} for path in ("/etag", "/dated", "/plain", "/moves")]
    sqlite_uri = f"sqlite:///{tmp_path / 'state.db'}"
    on_sqlite = Crawler(tmp_path, watches, store=sqlite_uri)
    first = on_sqlite.run()
    assert (first.returncode, first.records, first.stats["changewatch/commit/baseline"]) == (0, [], 4), first.stderr
    server.pages["/moves"] = Page(html("price 12"), etag='"m2"')
    unfed = on_sqlite.run(feed_option=False)  # its change stays undelivered in the store
    assert unfed.returncode == 0 and unfed.stats["changewatch/commit/content"] == 1
    [pending] = dump(sqlite_uri)["changes"]

    pg_uri = new_postgresql()
    code, out, err = migrate(capsys, sqlite_uri, pg_uri)
    assert (code, err) == (0, "")
    assert out.splitlines()[1:] == ["  keys: 4 (watch: 4)", "  validators: 4",
                                    "  changes: 1 (1 undelivered; leases dropped)",
                                    "  health: 3 rows (history and open conditions)",  # baseline, none, content
                                    "  evidence: 5 kept versions"]  # 4 baselines and the change
    assert counts(pg_uri) == counts(sqlite_uri)

    on_postgresql = Crawler(tmp_path, None, store=pg_uri)
    on_postgresql.runs = on_sqlite.runs
    again = on_postgresql.run()
    assert again.returncode == 0, again.stderr
    [redelivered] = again.records  # the change no feed carried, and nothing else
    assert (redelivered["change_id"], redelivered["redelivery"], redelivered["key"]) == (pending[0], True, "moves")
    assert "changewatch/commit/baseline" not in again.stats  # nothing re-baselined
    assert again.stats["changewatch/commit/none"] == 4
    assert again.stats["changewatch/conditional/not_modified"] == 3  # the validators came along
    server.pages["/etag"] = Page(html("with an etag, edited"), etag='"v2"')
    changed = on_postgresql.run()
    [record] = changed.records
    assert record["key"] == "etag" and record["change_id"] > pending[0] and "redelivery" not in record
    assert "changewatch/commit/baseline" not in changed.stats


@pytest.mark.parametrize("route", [("sqlite", "postgresql", "sqlite"), ("postgresql", "sqlite", "sqlite"),
                                   ("sqlite", "sqlite", "postgresql")])
def test_round_trips_give_identical_dumps(tmp_path: Path, new_postgresql: NewPostgreSQL, capsys: Capture,
                                          route: tuple[str, ...]) -> None:
    uris = [f"sqlite:///{tmp_path}/{n}.db" if backend == "sqlite" else new_postgresql()
            for n, backend in enumerate(route)]
    store = open_store(uris[0])
    log_changes(store)
    store.close()
    for source, target in pairwise(uris):
        assert migrate(capsys, source, target)[0] == 0
    first, *others = (dump(uri) for uri in uris)
    assert all(other == first for other in others) and len(first["changes"]) == 6


def test_an_occupied_target_is_refused(tmp_path: Path, new_postgresql: NewPostgreSQL, capsys: Capture) -> None:
    source, target = f"sqlite:///{tmp_path}/a.db", new_postgresql()
    for uri, spider in ((source, "shop"), (target, "other")):
        store = open_store(uri)
        store.commit(spider, "k", None, outcome(Kind.FIELD, encoded(), {"kind": "field"}))
        store.close()
    before = dump(target)
    code, out, err = migrate(capsys, source, target)
    assert (code, out) == (2, "")
    assert err.startswith("changewatch migrate: the target: ") and err.count("\n") == 1
    assert "is not empty (1 keys, 0 validators, 1 changes)" in err
    assert dump(target) == before


def test_a_target_of_an_older_schema_is_refused_as_it_is(tmp_path: Path, capsys: Capture,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Never upgraded in place first and refused after: the target is left exactly as it was."""
    from ..store.test_sqlite_schema import older_released_store

    source, target = f"sqlite:///{tmp_path}/a.db", tmp_path / "old.db"
    older_released_store(target, monkeypatch)
    store = open_store(source)  # created at this code's schema
    store.commit("shop", "k", None, outcome(Kind.FIELD, encoded(), {"kind": "field"}))
    store.close()
    before = target.read_bytes()
    code, out, err = migrate(capsys, source, f"sqlite:///{target}")
    assert (code, out) == (2, "")
    assert err.startswith("changewatch migrate: the target: ") and "older" in err and "empty store" in err
    assert target.read_bytes() == before


def test_a_failing_import_leaves_the_target_empty(tmp_path: Path, new_postgresql: NewPostgreSQL,
                                                  capsys: Capture) -> None:
    path = tmp_path / "a.db"
    open_store(f"sqlite:///{path}").close()
    with sqlite3.connect(path) as db:  # 2500 keys, then one PostgreSQL cannot hold (a NUL), batches 3 in
        db.executemany("INSERT INTO observations (spider, key, url, version, counters) VALUES (?, ?, ?, 1, '{}')",
                       [("shop", f"k{n:05}" if n < 2500 else "z\x00", "https://s.example/") for n in range(2501)])
    target = new_postgresql()
    code, out, err = migrate(capsys, f"sqlite:///{path}", target)
    assert (code, out) == (1, "")
    assert "nothing was written to the target, which is still empty" in err and "Traceback" not in err
    assert counts(target) == EMPTY


def test_bad_stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture) -> None:
    source = f"sqlite:///{tmp_path}/a.db"
    store = open_store(source)
    store.commit("shop", "k", None, outcome(Kind.FIELD, encoded(), {"kind": "field"}))
    store.close()
    target = tmp_path / "b.db"
    cases = [
        ((f"sqlite:///{tmp_path}/missing.db", f"sqlite:///{target}"), "the source: no such store"),
        ((source, source), "--from and --to name the same store"),
        ((source, "postgresql://me:pw-secret@127.0.0.1:1/db"), "the target: PostgreSQL store "
                                                               "postgresql://me:***@127.0.0.1:1/db"),
        ((source, "plain:///x.db"), "cannot receive a migration: its backend does not implement"),
    ]
    monkeypatch.setitem(BUILTIN_STORE_SCHEMES, "plain", "tests.cli.test_changes.PlainStore")
    for (source_uri, target_uri), message in cases:
        code, out, err = migrate(capsys, source_uri, target_uri)
        assert (code, out) == (2, ""), err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err and "pw-secret" not in err
    assert not target.exists() and not (tmp_path / "missing.db").exists()
