"""A change record's times, through the comparison step on every store backend:
``previous_observed_at`` is the key's previous observation of its page (a 304 or an unchanged
page counts, an error does not); ``baseline_since`` is since when the content the change
replaces was seen."""
# ruff: noqa: F811 -- make_chain is test_pipelines' fixture, imported to be requested by name

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from changewatch.core.comparisons import Kind
from changewatch.pipelines.records import change_record
from changewatch.store import StoredState

from ..store.conftest import store_uri_of
from .test_pipelines import make_chain, obs  # noqa: F401

T = [f"2026-11-0{day}T06:00:00Z" for day in range(1, 9)]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def store_uri(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from store_uri_of(request.param, tmp_path)


def test_a_change_says_when_the_page_was_last_seen_and_since_when_it_said_what_it_replaces(
        make_chain: Any, store_uri: str) -> None:
    chain = make_chain(CHANGEWATCH_STORE=store_uri)
    out = chain.run(obs(fields={"price": "1"}, observed_at=T[0]),  # baseline
                    obs(fields={"price": "1"}, observed_at=T[1]),  # unchanged
                    obs(not_modified=True, observed_at=T[2]),  # a 304
                    obs(fields={"price": "2"}, observed_at=T[3]),  # the change
                    obs(error="http: HTTP 500", observed_at=T[4]),
                    obs(fields={"price": "3"}, observed_at=T[5]))  # back, and changed again
    assert [r["kind"] if r else None for r in out] == [None, None, None, "field", "error", "field"]
    first, error, second = out[3], out[4], out[5]
    assert (first["observed_at"], first["previous_observed_at"], first["baseline_since"]) == (T[3], T[2], T[0])
    assert error["previous_observed_at"] == T[3] and "baseline_since" not in error
    # the failed fetch observed nothing: the page was last seen at the first change, which is
    # also when the content the second change replaces appeared
    assert (second["previous_observed_at"], second["baseline_since"]) == (T[3], T[3])


def test_members_of_a_first_failure_and_a_recovery() -> None:
    state = StoredState("k", "https://s.example/k", 3, b"s", last_observed=T[2], content_since=T[0])
    failed = obs(error="timeout: no answer", observed_at=T[3])
    assert "previous_observed_at" not in change_record("unit", failed, Kind.ERROR, {}, "timeout: no answer", None)
    recovered = change_record("unit", obs(observed_at=T[4]), Kind.RECOVERED, {}, None, state)
    assert recovered["previous_observed_at"] == T[2] and "baseline_since" not in recovered


def test_a_site_pages_records_name_its_site_watch() -> None:
    page = obs(error="http: HTTP 503", observed_at=T[3])
    page.key, page.site_watch = "docs|https://docs.example/a", "docs"
    assert change_record("watch", page, Kind.ERROR, {}, "http: HTTP 503", None)["site_watch"] == "docs"
    assert "site_watch" not in change_record("watch", obs(error="x", observed_at=T[3]), Kind.ERROR, {}, "x", None)


def test_an_item_names_its_site_watch() -> None:
    from changewatch.items import as_observation

    item = {"key": "docs|https://docs.example/a", "url": "https://docs.example/a", "text": "x", "site_watch": "docs"}
    observed = as_observation(item)
    assert observed is not None and observed.site_watch == "docs"
    assert as_observation({**item, "site_watch": None}).site_watch is None  # type: ignore[union-attr]
