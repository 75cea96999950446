"""Rendered watches through real crawls, real Chromium, a real local site (tests/render/site.py):
a shell page filled in from a JSON endpoint, re-checked before it is rendered again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from changewatch.core.snapshot import Snapshot
from changewatch.store.sqlite import SQLiteStore
from tests.changes import field

from ..e2e.crawl import Crawler, CrawlResult, by_key
from ..store._support import decoded
from .site import NEVER, THROWS, JsSite, hang

pytestmark = pytest.mark.slow  # crawls in subprocesses that render in Chromium


def _render_stats(result: CrawlResult) -> dict[str, Any]:
    return {k.removeprefix("changewatch/render/"): v for k, v in result.stats.items()
            if k.startswith("changewatch/render/")}


def _snapshot(workdir: Path, key: str) -> Snapshot:
    store = SQLiteStore(workdir / "state.db")
    store.open()
    try:
        state = store.read("watch", key)
    finally:
        store.close()
    assert state is not None and state.snapshot is not None, f"no baseline for {key}"
    return decoded(state.snapshot)


def test_a_shell_page_is_rendered_rechecked_and_its_data_change_reported(js_site: JsSite, tmp_path: Path) -> None:
    price = {"price": ".price::text"}
    crawler = Crawler(tmp_path, [
        {"url": js_site.url("p0"), "key": "plain", "fields": price},  # a plain GET sees no content
        {"url": js_site.url("p0"), "key": "rendered", "render": True, "fields": price},
        {"url": js_site.url("p1"), "key": "text", "render": {"wait_for": "span.price", "timeout": 20}},
        {"url": js_site.url("p2"), "key": "still", "render": True},
    ])
    first = crawler.run()
    assert first.returncode == 0, first.stderr[-3000:]
    records = by_key(first.records)
    assert set(records) == {"plain"} and records["plain"]["kind"] == "error"
    assert "price" in records["plain"]["error"]  # the shell has no price: the field matched nothing
    fields = _snapshot(tmp_path, "rendered").part("fields")
    assert fields is not None and fields.raw == {"price": "11.00 EUR"}  # type: ignore[attr-defined]
    text = _snapshot(tmp_path, "text").part("content")
    assert text is not None and "p1: paragraph 3 says something stable" in text.text  # type: ignore[attr-defined]
    # the two watches of a text render their baselines' second loads too (confirmations: why_confirmation)
    assert _render_stats(first)["rendered"] == 5 and _render_stats(first)["why_unknown"] == 3
    assert _render_stats(first)["why_confirmation"] == 2

    # the shells stay the same; p0's and p1's data endpoints change
    js_site.pages["p0"]["price"] = "9.50 EUR"
    js_site.pages["p1"]["lines"][3] = "p1: paragraph 3 now says something new."
    js_site.not_modified.clear()
    second = crawler.run()
    assert second.returncode == 0, second.stderr[-3000:]
    records = by_key([r for r in second.records if r["key"] != "plain"])
    assert records["rendered"]["kind"] == "field"
    assert records["rendered"]["changes"] == {"price": field("11.00 EUR", "9.50 EUR")}
    assert records["text"]["kind"] == "content"
    assert "+ p1: paragraph 3 now says something new." in records["text"]["diff"]
    assert "still" not in records
    stats = _render_stats(second)
    assert stats["why_changed"] == 2 and stats["avoided"] == 1
    # each change is rendered once more, in full, to confirm it before it is reported
    assert stats["why_confirmation"] == 2 and second.stats["changewatch/confirm/sent"] == 2
    assert stats["rendered"] == 2 + 2
    assert js_site.not_modified["/data/p2.json"] == 1 and js_site.not_modified["/p/p2"] == 1

    # neither shell nor data changed: every dependency answers 304 and nothing is rendered
    js_site.not_modified.clear()
    hits = dict(js_site.hits)
    third = crawler.run()
    assert third.returncode == 0, third.stderr[-3000:]
    assert [r for r in third.records if r["key"] != "plain"] == []
    stats = _render_stats(third)
    assert "rendered" not in stats and stats["avoided"] == 3 and "subrequests" not in stats
    # per page: its document, app.js and its data, each a 304
    assert stats["preflight_not_modified"] == stats["preflight_requests"] == 9
    assert sum(js_site.not_modified.values()) == 9 and js_site.hits["/p/p0"] - hits["/p/p0"] == 2  # plain + re-check
    assert third.stats["changewatch/commit/none"] == 3

    # the safety net: after CHANGEWATCH_RENDER_FULL_RUNS skipped renders, one is rendered anyway
    fourth = crawler.run("-s", "CHANGEWATCH_RENDER_FULL_RUNS=1")
    assert fourth.returncode == 0 and _render_stats(fourth)["why_full_runs"] == 3
    assert _render_stats(fourth)["rendered"] == 3 and [r for r in fourth.records if r["key"] != "plain"] == []


def test_a_throwing_script_renders_what_it_can_and_a_page_that_never_loads_times_out(js_site: JsSite,
                                                                                    tmp_path: Path) -> None:
    js_site.extra["/throws"] = lambda h: js_site.send(h, THROWS.encode(), "text/html; charset=utf-8")
    js_site.extra["/never"] = lambda h: js_site.send(h, NEVER.encode(), "text/html; charset=utf-8")
    js_site.extra["/hang.js"] = hang(30)
    crawler = Crawler(tmp_path, [
        {"url": js_site.base + "/throws", "key": "throws", "render": True, "fields": {"story": "#app::text"}},
        {"url": js_site.base + "/never", "key": "never", "render": {"timeout": 3}},
        {"url": js_site.url("p0"), "key": "fine", "render": True},
    ])
    result = crawler.run()
    assert result.returncode == 0, result.stderr[-3000:]
    records = by_key(result.records)
    assert set(records) == {"never"}
    assert records["never"]["kind"] == "error"
    assert records["never"]["error"] == "timeout: the page did not finish rendering within 3 s"
    fields = _snapshot(tmp_path, "throws").part("fields")
    assert fields is not None
    assert fields.raw == {"story": "Rendered before the error: the first half of the story."}  # type: ignore[attr-defined]
    stats = _render_stats(result)
    # "fine" is a text: its baseline is two renders
    assert stats["script_errors"] >= 1 and stats["timeouts"] == 1 and stats["rendered"] == 3
