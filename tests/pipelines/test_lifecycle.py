"""Gone, moved, recovered: the comparison step on a real crawler and a real
SQLite store, item by item, and the pure rules it applies."""
# ruff: noqa: F811 -- make_chain is test_pipelines' fixture, imported to be requested by name

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scrapy.http import HtmlResponse, Request

from changewatch.cli.common import parse_kinds
from changewatch.core.comparisons import Kind
from changewatch.extract.observe import moved_from
from changewatch.extract.page import Page
from changewatch.feeds import KindFilter
from changewatch.items import as_observation
from changewatch.pipelines.lifecycle import gone_error, missing_runs
from changewatch.store import StoredState
from changewatch.store.sqlite import SQLiteStore
from tests.changes import field

from .test_pipelines import make_chain, obs  # noqa: F401

OLD, NEW = "https://shop.example/p/1", "https://shop.example/products/1"


def stored(tmp_path: Path, key: str = "k") -> StoredState:
    store = SQLiteStore(tmp_path / "state.db")
    store.open()
    try:
        state = store.read("unit", key)
    finally:
        store.close()
    assert state is not None
    return state


def kinds(out: list[Any]) -> list[str | None]:
    return [r["kind"] if r is not None else None for r in out]


# --- gone --------------------------------------------------------------------------------------------------

def test_a_404_is_http_then_gone_on_the_second_consecutive_run(make_chain: Any, tmp_path: Path) -> None:
    chain = make_chain()
    out = chain.run(obs(fields={"price": "1"}), obs(error="http: HTTP 404"), obs(error="http: HTTP 404"),
                    obs(error="http: HTTP 404"))
    assert kinds(out) == [None, "error", "error", None]  # the gone streak is reported once
    assert out[1]["error"] == "http: HTTP 404"
    assert out[2]["error"] == "gone: HTTP 404 on 2 consecutive runs"
    state = stored(tmp_path)
    assert state.last_error == "gone: HTTP 404 on 3 consecutive runs" and state.error_streak == 3
    assert state.snapshot is not None  # the baseline is never replaced
    assert chain.stat("commit/error_repeated") == 1


def test_gone_after_is_a_setting_and_410_counts_with_404(make_chain: Any, tmp_path: Path) -> None:
    chain = make_chain(CHANGEWATCH_GONE_AFTER=3)
    out = chain.run(obs(fields={"price": "1"}), obs(error="http: HTTP 410"), obs(error="http: HTTP 404"),
                    obs(error="http: HTTP 410"))
    assert kinds(out) == [None, "error", None, "error"]
    assert out[1]["error"] == "http: HTTP 410" and out[3]["error"] == "gone: HTTP 410 on 3 consecutive runs"
    assert make_chain(CHANGEWATCH_GONE_AFTER="1").run(obs(key="other", error="http: HTTP 404"))[0]["error"] == (
        "gone: HTTP 404 on 1 consecutive run")


def test_another_error_in_between_starts_the_count_again(make_chain: Any, tmp_path: Path) -> None:
    chain = make_chain()
    out = chain.run(obs(fields={"price": "1"}), obs(error="http: HTTP 404"), obs(error="timeout: took too long"),
                    obs(error="http: HTTP 404"), obs(error="http: HTTP 404"))
    assert [r["error"] for r in out[1:]] == ["http: HTTP 404", "timeout: took too long", "http: HTTP 404",
                                             "gone: HTTP 404 on 2 consecutive runs"]


def test_a_good_run_in_between_starts_the_count_again(make_chain: Any) -> None:
    chain = make_chain()
    out = chain.run(obs(fields={"price": "1"}), obs(error="http: HTTP 404"), obs(fields={"price": "1"}),
                    obs(error="http: HTTP 404"))
    assert kinds(out) == [None, "error", "recovered", "error"] and out[3]["error"] == "http: HTTP 404"


def test_other_statuses_are_never_gone(make_chain: Any) -> None:
    chain = make_chain(CHANGEWATCH_REPORT_REPEATED_ERRORS=True)
    out = chain.run(*(obs(error="http: HTTP 500") for _ in range(3)),
                    *(obs(error="blocked: HTTP 403") for _ in range(3)))
    assert [r["error"] for r in out] == ["http: HTTP 500"] * 3 + ["blocked: HTTP 403"] * 3


@pytest.mark.parametrize(("last_error", "streak", "error", "runs"), [
    (None, 0, "http: HTTP 404", 1),
    ("http: HTTP 404", 1, "http: HTTP 404", 2),
    ("http: HTTP 404", 0, "http: HTTP 404", 1),  # a stale last_error of a key that recovered
    ("http: HTTP 410 on 4 consecutive runs", 4, "http: HTTP 404", 5),
    ("gone: HTTP 404 on 7 consecutive runs", 7, "http: HTTP 410 (Retry-After: 60)", 8),
    ("timeout: 30 s", 2, "http: HTTP 404", 1),
    ("http: HTTP 4040", 1, "http: HTTP 404", 1),
    ("http: HTTP 404", 1, "http: HTTP 4041", 0),
    ("http: HTTP 404", 1, "blocked: HTTP 403", 0),
])
def test_missing_runs(last_error: str | None, streak: int, error: str, runs: int) -> None:
    state = StoredState("k", OLD, 1, None, last_error=last_error, error_streak=streak)
    assert missing_runs(state, error) == runs


def test_gone_error_keeps_what_follows_the_status() -> None:
    error = gone_error("http: HTTP 410 (Retry-After: 60)", 2, 2)
    assert error == "gone: HTTP 410 on 2 consecutive runs (Retry-After: 60)"
    assert missing_runs(StoredState("k", OLD, 1, None, last_error=error, error_streak=2), "http: HTTP 410") == 3


# --- moved -------------------------------------------------------------------------------------------------

def test_a_move_is_reported_once_and_the_comparison_goes_on_at_the_new_url(make_chain: Any, tmp_path: Path) -> None:
    chain = make_chain()
    out = chain.run(obs(fields={"price": "1"}), obs(url=NEW, moved_from=OLD, fields={"price": "1"}),
                    obs(url=NEW, moved_from=OLD, fields={"price": "1"}),
                    obs(url=NEW, moved_from=OLD, fields={"price": "2"}))
    assert kinds(out) == [None, "moved", None, "field"]
    assert {k: out[1][k] for k in ("url", "moved_to", "key")} == {"url": OLD, "moved_to": NEW, "key": "k"}
    assert "changes" not in out[1]
    assert out[3]["changes"] == {"price": field("1", "2")}  # against the baseline from the old URL
    assert out[3]["url"] == NEW and "moved_to" not in out[3]
    state = stored(tmp_path)
    assert state.url == NEW and state.counters["moved"] == 1
    assert chain.stat("commit/moved") == 1


def test_a_move_with_a_change_is_the_change_and_carries_moved_to(make_chain: Any) -> None:
    chain = make_chain()
    out = chain.run(obs(fields={"price": "1"}), obs(url=NEW, moved_from=OLD, fields={"price": "2"}),
                    obs(url=NEW, moved_from=OLD, fields={"price": "2"}))
    assert kinds(out) == [None, "field", None]
    assert out[1]["url"] == OLD and out[1]["moved_to"] == NEW
    assert out[1]["changes"] == {"price": field("1", "2")}


def test_a_first_observation_is_a_silent_baseline_wherever_it_landed(make_chain: Any) -> None:
    chain = make_chain()
    out = chain.run(obs(url=NEW, moved_from=OLD, fields={"price": "1"}), obs(url=NEW, moved_from=OLD,
                                                                              fields={"price": "1"}))
    assert out == [None, None]


def test_an_error_after_a_move_does_not_report_it_again(make_chain: Any, tmp_path: Path) -> None:
    chain = make_chain()
    out = chain.run(obs(fields={"price": "1"}), obs(url=NEW, moved_from=OLD, fields={"price": "1"}),
                    obs(url=OLD, error="timeout: took too long"), obs(url=NEW, moved_from=OLD, fields={"price": "1"}))
    assert kinds(out) == [None, "moved", "error", "recovered"]
    assert out[2]["url"] == OLD  # the record says where it failed; the key remembers where it was last seen
    assert stored(tmp_path).url == NEW


def test_a_move_that_ends_a_failure_streak_is_one_moved_record(make_chain: Any) -> None:
    chain = make_chain()
    out = chain.run(obs(fields={"price": "1"}), obs(error="http: HTTP 404"),
                    obs(url=NEW, moved_from=OLD, fields={"price": "1"}), obs(url=NEW, fields={"price": "1"}))
    assert kinds(out) == [None, "error", "moved", None]


def test_a_temporary_redirect_is_no_move(make_chain: Any) -> None:
    chain = make_chain()
    out = chain.run(obs(fields={"price": "1"}), obs(url=NEW, fields={"price": "1"}))  # no moved_from: a 302
    assert out == [None, None]


# --- recovered ---------------------------------------------------------------------------------------------

def test_recovered_closes_a_streak_once(make_chain: Any, tmp_path: Path) -> None:
    chain = make_chain()
    out = chain.run(obs(fields={"price": "1"}), obs(error="timeout: took too long"),
                    obs(error="timeout: took too long"), obs(fields={"price": "1"}), obs(fields={"price": "1"}))
    assert kinds(out) == [None, "error", None, "recovered", None]
    record = out[3]
    assert set(record) == {"key", "url", "kind", "observed_at", "spider", "previous_observed_at", "change_id"}
    state = stored(tmp_path)
    assert state.error_streak == 0 and state.counters["recovered"] == 1
    assert state.last_changed is None  # a recovery is no change of the page
    assert chain.stat("commit/recovered") == 1


def test_a_304_after_a_failure_is_a_recovery(make_chain: Any) -> None:
    chain = make_chain()
    out = chain.run(obs(fields={"price": "1"}), obs(error="http: HTTP 500"), obs(not_modified=True))
    assert kinds(out) == [None, "error", "recovered"]


def test_a_page_that_came_back_changed_is_reported_by_its_change(make_chain: Any) -> None:
    chain = make_chain()
    out = chain.run(obs(fields={"price": "1"}), obs(error="http: HTTP 404"), obs(error="http: HTTP 404"),
                    obs(fields={"price": "2"}), obs(fields={"price": "2"}))
    assert kinds(out) == [None, "error", "error", "field", None]
    assert out[3]["changes"] == {"price": field("1", "2")}


def test_kinds_that_leave_the_crawl_include_moved_and_recovered() -> None:
    assert Kind.MOVED.reported and Kind.RECOVERED.reported
    assert not Kind.MOVED.changes_page and not Kind.RECOVERED.changes_page


# --- where the request started --------------------------------------------------------------------------------

def redirected(*reasons: object, start: str = OLD, landed: str = NEW) -> HtmlResponse:
    hops = [start] + [f"https://shop.example/hop/{i}" for i in range(1, len(reasons))]
    request = Request(landed, meta={"redirect_urls": hops, "redirect_reasons": list(reasons)} if reasons else {})
    return HtmlResponse(landed, body=b"<p>x</p>", encoding="utf-8", request=request)


@pytest.mark.parametrize(("reasons", "expected"), [
    ((), None),
    ((301,), OLD),
    ((308,), OLD),
    ((301, 308, 301), OLD),
    ((302,), None),
    ((307,), None),
    ((303,), None),
    ((301, 302), None),
    ((302, 301), None),
    (("meta refresh",), None),
])
def test_moved_from_only_when_every_hop_is_permanent(reasons: tuple[object, ...], expected: str | None) -> None:
    assert moved_from(redirected(*reasons)) == expected


def test_moved_from_is_none_when_the_redirects_came_back_and_strips_credentials() -> None:
    assert moved_from(redirected(301, start=NEW)) is None
    assert moved_from(redirected(301, start="https://me:secret@shop.example/p/1")) == OLD
    assert moved_from(HtmlResponse(NEW, body=b"<p>x</p>")) is None  # no request at all


def test_an_item_may_say_where_it_moved_from() -> None:
    observation = as_observation({"key": "k", "url": NEW, "moved_from": OLD, "fields": {"a": 1}})
    assert observation is not None and observation.moved_from == OLD


def test_a_page_observed_after_a_permanent_redirect_says_where_it_started() -> None:
    assert Page(redirected(301)).observe("k", text=True).moved_from == OLD
    assert Page(redirected(302)).observe("k", text=True).moved_from is None


def test_moved_and_recovered_can_be_routed_and_listed() -> None:
    assert KindFilter({"item_filter_kinds": "moved,recovered"}).accepts({"kind": "moved", "key": "k"})
    assert not KindFilter({"item_filter_kinds": ["recovered"]}).accepts({"kind": "error", "key": "k"})
    assert parse_kinds(["moved", "recovered,error"]) == ("moved", "recovered", "error")


# --- a site's pages ---------------------------------------------------------------------------------------

def test_a_page_back_in_its_sites_set_is_a_silent_fresh_baseline(make_chain: Any) -> None:
    from changewatch.core.siteset import REBASELINE

    chain = make_chain()
    out = chain.run(obs(fields={"price": "1"}), obs(error="http: HTTP 404"), obs(error="http: HTTP 404"),
                    obs(fields={"price": "2"}, options={REBASELINE: True}), obs(fields={"price": "3"}))
    # gone, removed from the set, back: neither "recovered" nor a change against the old page
    assert kinds(out) == [None, "error", "error", None, "field"]
    assert (out[4]["changes"]["price"]["old"], out[4]["changes"]["price"]["new"]) == ("2", "3")


def test_the_page_sets_record_names_each_page_by_its_url(make_chain: Any) -> None:
    chain = make_chain()
    pages = [{"key": "https://s.example/a"}, {"key": "https://s.example/b"}]
    options = {"entities_spec": "site", "site_pages": True}
    out = chain.run(obs(key="site", entities=pages, options=options),
                    obs(key="site", entities=[pages[0], {"key": "https://s.example/c?utm_source=x"}], options=options))
    assert out[0] is None
    assert out[1]["added"] == [{"key": "https://s.example/c", "url": "https://s.example/c"}]
    assert out[1]["removed"] == [{"key": "https://s.example/b", "url": "https://s.example/b"}]
    # every page gone at once is an error, never the removal of the whole site
    assert kinds(chain.run(obs(key="site", entities=[], options=options))) == ["error"]
