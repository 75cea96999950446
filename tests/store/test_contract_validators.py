"""The store contract, every backend: HTTP validators are written with the observation."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from changewatch.core.comparisons import Kind
from changewatch.core.validators import HttpValidators
from changewatch.store import Outcome, Store, StoredState, VersionConflict
from changewatch.store.runner import StoreRunner

from ._support import T0, T1, T2, T3, encoded, with_http

URL = "https://s.example/p"


def test_validators_are_written_with_the_observation(store: Store) -> None:
    assert store.validators("spider", URL) == []
    store.commit("spider", "k", None, with_http(Kind.BASELINE, URL, '"a"', snapshot=encoded()))
    [v] = store.validators("spider", URL)
    assert (v.url, v.key, v.etag, v.last_modified, v.size, v.runs, v.spec) == (URL, "k", '"a"', None, 1234, 0, "s1")
    assert v.full_at == T0
    assert store.validators("other-spider", URL) == []

    store.commit("spider", "k", 1, with_http(Kind.NONE, URL, None, not_modified=True, at=T1))
    store.commit("spider", "k", 2, with_http(Kind.NONE, URL, None, not_modified=True, at=T2))
    [v] = store.validators("spider", URL)
    assert v.runs == 2 and v.etag == '"a"'
    state = store.read("spider", "k")
    assert state is not None and state.counters == {"baseline": 1, "none": 2, "not_modified": 2}

    # a new full response replaces them and restarts the count
    store.commit("spider", "k", 3, with_http(Kind.NONE, URL, '"b"', at=T3))
    [v] = store.validators("spider", URL)
    assert (v.etag, v.runs, v.full_at) == ('"b"', 0, T3)


def test_validators_follow_the_key_and_vanish_without_validators(store: Store) -> None:
    old, new = "https://s.example/old", "https://s.example/new"
    store.commit("spider", "k", None, with_http(Kind.BASELINE, old, '"a"', snapshot=encoded()))
    store.commit("spider", "j", None, with_http(Kind.BASELINE, old, '"a"', snapshot=encoded()))
    assert [v.key for v in store.validators("spider", old)] == ["j", "k"]
    store.commit("spider", "k", 1, with_http(Kind.NONE, new, '"n"', at=T1))  # the key moved
    assert [v.key for v in store.validators("spider", old)] == ["j"]
    assert [v.etag for v in store.validators("spider", new)] == ['"n"']
    store.commit("spider", "k", 2, with_http(Kind.NONE, new, None, at=T2))  # the server stopped sending any
    [v] = store.validators("spider", new)
    assert v.etag is None and v.last_modified is None  # kept: "no validators" (a full fetch next time)
    store.forget_validators("spider", new, keep=["j"])
    assert store.validators("spider", new) == []
    store.forget_validators("spider", old, keep=[])
    assert store.validators("spider", old) == []


def test_a_full_response_rewrites_every_column_of_the_row_and_keeps_one_row_a_key(store: Store) -> None:
    """The row of the same URL is rewritten in place: nothing of the old one survives beside the
    new values (runs, render, the validators themselves), and a key that moves away and back
    still has one row."""
    a, b = "https://s.example/a", "https://s.example/b"
    store.commit("spider", "k", None, with_http(Kind.BASELINE, a, '"a"', snapshot=encoded(), render="deps-1"))
    store.commit("spider", "k", 1, with_http(Kind.NONE, a, None, not_modified=True, at=T1))
    [v] = store.validators("spider", a)
    assert (v.etag, v.runs, v.render) == ('"a"', 1, "deps-1")
    full = Outcome(Kind.NONE, a, T2, http=HttpValidators(url=a, key="", etag=None, last_modified="Tue, 01 Dec 2026",
                                                        size=99, spec="s2"))
    store.commit("spider", "k", 2, full)
    [v] = store.validators("spider", a)
    assert (v.etag, v.last_modified, v.size, v.full_at, v.runs, v.spec, v.render) == (
        None, "Tue, 01 Dec 2026", 99, T2, 0, "s2", None)
    store.commit("spider", "k", 3, with_http(Kind.NONE, b, '"b"', at=T3))
    store.commit("spider", "k", 4, with_http(Kind.NONE, a, '"a2"', at="2024-05-01T04:00:00Z"))
    assert store.validators("spider", b) == []
    assert [(v.key, v.etag) for v in store.validators("spider", a)] == [("k", '"a2"')]


def test_a_failed_compute_writes_no_validators(store: Store) -> None:
    store.commit("spider", "k", None, with_http(Kind.BASELINE, URL, '"a"', snapshot=encoded()))

    async def compute(state: StoredState | None) -> Outcome:
        with_http(Kind.NONE, URL, '"b"', at=T1)
        raise RuntimeError("compute failed")

    with pytest.raises(RuntimeError):
        asyncio.run(StoreRunner(store).update("spider", "k", compute))
    assert [v.etag for v in store.validators("spider", URL)] == ['"a"']


def test_a_losing_commit_writes_no_validators(new_store: Callable[[], Store]) -> None:
    a, b = new_store(), new_store()
    a.commit("spider", "k", None, with_http(Kind.BASELINE, URL, '"a"', snapshot=encoded()))
    a.commit("spider", "k", 1, with_http(Kind.NONE, URL, None, not_modified=True, at=T1))
    with pytest.raises(VersionConflict):
        b.commit("spider", "k", 1, with_http(Kind.NONE, URL, '"b"', at=T1))
    with pytest.raises(VersionConflict):
        b.commit("spider", "k", 1, with_http(Kind.NONE, URL, None, not_modified=True, at=T1))
    [v] = b.validators("spider", URL)
    assert (v.etag, v.runs) == ('"a"', 1)


def test_a_rendered_pages_dependency_set_is_written_with_its_observation(store: Store) -> None:
    """The dependency set of a render lives in the key's validators row: written in the
    observation's transaction, kept by skipped renders (which count as 304s), replaced by the next
    render, and dropped with the row when the key's next full response was not rendered."""
    deps = '{"v":1,"options":"abc","deps":[{"url":"https://s.example/api","sha256":"é"}]}'
    store.commit("spider", "k", None, with_http(Kind.BASELINE, URL, '"a"', snapshot=encoded(), render=deps))
    [v] = store.validators("spider", URL)
    assert v.render == deps and v.runs == 0
    store.commit("spider", "k", 1, with_http(Kind.NONE, URL, None, not_modified=True, at=T1))  # a skipped render
    [v] = store.validators("spider", URL)
    assert v.render == deps and v.runs == 1
    store.commit("spider", "k", 2, Outcome(Kind.ERROR, URL, T2, error="timeout: x"))  # an error leaves them
    [v] = store.validators("spider", URL)
    assert v.render == deps and v.runs == 1
    store.commit("spider", "k", 3, with_http(Kind.NONE, URL, '"b"', at=T3, render=None))
    [v] = store.validators("spider", URL)
    assert v.render is None and v.etag == '"b"' and v.runs == 0


def test_a_link_mode_pages_links_are_written_with_its_observation(store: Store) -> None:
    """The links a link-mode site page had live in its validators row: a 304 keeps them (it
    still leads to them), the next full response replaces them."""
    links = "https://s.example/a\nhttps://s.example/é?x=1"
    store.commit("spider", "k", None, with_http(Kind.BASELINE, URL, '"a"', snapshot=encoded(), links=links))
    [v] = store.validators("spider", URL)
    assert v.links == links
    store.commit("spider", "k", 1, with_http(Kind.NONE, URL, None, not_modified=True, at=T1))
    [v] = store.validators("spider", URL)
    assert v.links == links and v.runs == 1
    store.commit("spider", "k", 2, with_http(Kind.NONE, URL, '"b"', at=T2, links=""))  # a page without links
    [v] = store.validators("spider", URL)
    assert v.links == "" and v.etag == '"b"'
    store.commit("spider", "k", 3, with_http(Kind.NONE, URL, '"c"', at=T3))
    assert [v.links for v in store.validators("spider", URL)] == [None]


def test_a_losing_commit_writes_no_dependency_set(new_store: Callable[[], Store]) -> None:
    a, b = new_store(), new_store()
    a.commit("spider", "k", None, with_http(Kind.BASELINE, URL, '"a"', snapshot=encoded(), render="first"))
    a.commit("spider", "k", 1, with_http(Kind.NONE, URL, '"a"', at=T1, render="second"))
    with pytest.raises(VersionConflict):
        b.commit("spider", "k", 1, with_http(Kind.NONE, URL, '"a"', at=T1, render="lost"))
    assert [v.render for v in b.validators("spider", URL)] == ["second"]
