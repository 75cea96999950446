"""The store contract, every backend: a site watch's page set is rows written in the commit of
its observation (``Outcome.pages``), together with it or not at all, read back a batch at a time
in code point order with each page key's last fetch, and forgotten with its key."""

from __future__ import annotations

import pytest

from changewatch.core.comparisons import Kind
from changewatch.core.schedule import Bounds, ScheduleUpdate, epoch
from changewatch.store import (
    MaintainedStore,
    Outcome,
    PageSetChange,
    PageSetStore,
    Store,
    StoreError,
    VersionConflict,
)

from ._support import T0, T1, T2

SITE = "docs"
BOUNDS = Bounds(900.0, 7 * 86400.0)
#: URLs whose code point order differs from a locale's (case, punctuation, non-ASCII)
ODD = ["https://d.example/B", "https://d.example/a", "https://d.example/_", "https://d.example/é",
       "https://d.example/z", "https://d.example/%C3%A9", "https://d.example/a-b", "https://d.example/a/b"]


def pages_of(store: Store, site: str = SITE, spider: str = "spider", batch: int = 7) -> list[tuple[str, float | None]]:
    """The stored set of *site*, each page with its key's last fetch (None: never stored)."""
    assert isinstance(store, PageSetStore)
    out: list[tuple[str, float | None]] = []
    after = ""
    while rows := store.site_pages(spider, site, after, batch):
        assert len(rows) <= batch
        out.extend((url, None if entry is None else entry.last_seen) for url, entry in rows)
        after = rows[-1][0]
    return out


def set_outcome(kind: Kind, at: str, added: list[str], removed: list[str] = (), *,  # type: ignore[assignment]
                record: dict[str, object] | None = None) -> Outcome:
    return Outcome(kind, "https://d.example/sitemap.xml", at, record=record, pages=PageSetChange(added, removed))


def test_a_page_set_is_written_with_its_observation_and_read_in_code_point_order(store: Store) -> None:
    many = [f"https://d.example/p/{i}" for i in range(3000)] + ODD
    store.commit("spider", SITE, None, set_outcome(Kind.BASELINE, T0, many))
    assert [url for url, _ in pages_of(store, batch=500)] == sorted(many)
    gone, new = many[:40], [f"https://d.example/new/{i}" for i in range(60)]
    store.commit("spider", SITE, 1, set_outcome(Kind.ENTITIES, T1, new, gone, record={"kind": "entities"}))
    assert [url for url, _ in pages_of(store, batch=1000)] == sorted(set(many[40:]) | set(new))
    assert pages_of(store, site="other") == [] and pages_of(store, spider="other") == []
    store.commit("spider", SITE, 2, Outcome(Kind.NONE, "https://d.example/sitemap.xml", T2))  # no pages: as they were
    assert len(pages_of(store, batch=1000)) == 3000 - 40 + len(ODD) + 60


def test_each_page_comes_with_its_page_keys_due_state(store: Store) -> None:
    assert isinstance(store, PageSetStore) and isinstance(store, MaintainedStore)
    store.commit("spider", SITE, None, set_outcome(Kind.BASELINE, T0, ODD[:3]))
    store.commit("spider", f"{SITE}|{ODD[1]}", None, Outcome(Kind.BASELINE, ODD[1], T1,
                                                              schedule=ScheduleUpdate(False, BOUNDS)))
    store.commit("other", f"{SITE}|{ODD[0]}", None, Outcome(Kind.BASELINE, ODD[0], T2))  # another spider's key
    assert dict(pages_of(store)) == {ODD[0]: None, ODD[1]: epoch(T1), ODD[2]: None}
    entries = dict(store.site_pages("spider", SITE))
    key = f"{SITE}|{ODD[1]}"
    assert entries[ODD[1]] == store.due_entries("spider", [key])[key] and entries[ODD[0]] is None


def test_a_commit_that_fails_writes_no_page(store: Store) -> None:
    """The set and its observation commit together or not at all: a conflict, or a failure after
    the rows were written in the transaction, leaves the set as it was."""
    store.commit("spider", SITE, None, set_outcome(Kind.BASELINE, T0, ODD[:4]))
    with pytest.raises(VersionConflict):
        store.commit("spider", SITE, 7, set_outcome(Kind.ENTITIES, T1, ["https://d.example/x"], ODD[:2],
                                                   record={"kind": "entities"}))
    unwritable = [ODD[0], object()]  # fails once the state and the added row are written
    with pytest.raises((StoreError, TypeError, ValueError)):
        store.commit("spider", SITE, 1, set_outcome(Kind.ENTITIES, T1, ["https://d.example/x"], unwritable,
                                                   record={"kind": "entities"}))
    assert [url for url, _ in pages_of(store)] == sorted(ODD[:4])
    state = store.read("spider", SITE)
    assert state is not None and state.version == 1
    assert [c.key for c in store.changes("spider")] == []


def test_how_a_set_was_chosen_is_written_with_it(store: Store) -> None:
    assert isinstance(store, PageSetStore)
    assert store.site_spec("spider", SITE) is None
    store.commit("spider", SITE, None, Outcome(Kind.BASELINE, "u", T0, pages=PageSetChange(ODD, spec="max_pages=9")))
    store.commit("spider", SITE, 1, Outcome(Kind.NONE, "u", T1, pages=PageSetChange(spec="max_pages=3")))
    assert store.site_spec("spider", SITE) == "max_pages=3" and store.site_spec("other", SITE) is None
    with pytest.raises(VersionConflict):
        store.commit("spider", SITE, 1, Outcome(Kind.NONE, "u", T2, pages=PageSetChange(spec="max_pages=4")))
    assert store.site_spec("spider", SITE) == "max_pages=3"


def test_a_page_set_goes_with_its_forgotten_key(store: Store) -> None:
    assert isinstance(store, MaintainedStore) and isinstance(store, PageSetStore)
    store.commit("spider", SITE, None, Outcome(Kind.BASELINE, "u", T0, pages=PageSetChange(ODD, spec="max_pages=9")))
    store.commit("spider", "kept", None, set_outcome(Kind.BASELINE, T2, ODD[:2]))
    assert store.forget("spider", T1, 100, T1) == [SITE]
    assert pages_of(store) == [] and len(pages_of(store, site="kept")) == 2
    assert store.site_spec("spider", SITE) is None
