"""ScheduleMiddleware on its own, with a real crawler and a real store, at a simulated time: which
requests it lets through, what it counts, what it notes as still watched; and the per-site
spider's ``watch(every=..., scheduled=...)``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import scrapy
from scrapy.utils.test import get_crawler

from changewatch import ChangewatchSpider, meta
from changewatch.core import clock
from changewatch.core.comparisons import Kind
from changewatch.core.schedule import Bounds, ScheduleUpdate
from changewatch.middlewares.schedule import ScheduleMiddleware
from changewatch.runtime.services import CrawlServices
from changewatch.store import Outcome

from ..store._support import encoded

NOW = datetime(2024, 6, 1, tzinfo=UTC)
URL = "https://s.example/"


class UnitSpider(scrapy.Spider):
    name = "unit"


@pytest.fixture
def simulated() -> Iterator[None]:
    clock.set_clock(lambda: NOW)
    yield
    clock.set_clock(None)


def request(key: str | None, **extra: Any) -> scrapy.Request:
    return scrapy.Request(f"{URL}{key}", meta={**({meta.KEY: key} if key else {}), **extra})


async def through(mw: ScheduleMiddleware, items: list[Any]) -> list[Any]:
    async def start() -> AsyncIterator[Any]:
        for item in items:
            yield item
    return [item async for item in mw.process_start(start())]


def crawl_with(tmp_path: Path, seen: dict[str, float], **settings: Any) -> tuple[ScheduleMiddleware, Any]:
    """A real crawler with the add-on, its store holding *seen* (key → hours before NOW of its
    last fetch, with an estimate from it)."""
    crawler = get_crawler(UnitSpider, {"ADDONS": {"changewatch.Addon": 0},
                                       "CHANGEWATCH_STORE": f"sqlite:///{tmp_path / 'state.db'}", **settings})
    crawler.spider = crawler._create_spider()
    runtime = CrawlServices.of(crawler)
    asyncio.run(runtime.runner.acquire())
    for key, hours in seen.items():
        at = (NOW - timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")
        runtime.runner.store.commit("unit", key, None, Outcome(Kind.BASELINE, URL, at, snapshot=encoded(),
                                                               schedule=ScheduleUpdate(False, Bounds(900, 7 * 86400))))
    return ScheduleMiddleware.from_crawler(crawler), crawler


def test_only_requests_of_keys_not_due_are_dropped(tmp_path: Path, simulated: None) -> None:
    mw, crawler = crawl_with(tmp_path, {"recent": 1, "old": 100}, CHANGEWATCH_SCHEDULE_ENABLED=True)
    items = [request("recent"), request("old"), request("new"), request(None), {"an": "item"},
             request("recent", **{meta.SCHEDULE: False}), request("recent", **{meta.EVERY: "30m"})]
    kept = asyncio.run(through(mw, items))
    assert kept == [items[1], items[2], items[3], items[4], items[5], items[6]]  # the first: not due yet
    stats = crawler.stats.get_stats()
    assert (stats["changewatch/schedule/due"], stats["changewatch/schedule/skipped"]) == (3, 1)
    assert stats["changewatch/schedule/overdue"] == 1  # "old": due 86 hours before


def test_the_schedule_off_leaves_everything_but_every_alone(tmp_path: Path, simulated: None) -> None:
    mw, crawler = crawl_with(tmp_path, {"recent": 1})
    items = [request("recent"), request("recent", **{meta.EVERY: "6h"}), request("recent", **{meta.EVERY: 3600})]
    assert asyncio.run(through(mw, items)) == [items[0], items[2]]
    assert crawler.stats.get_stats()["changewatch/schedule/skipped"] == 1


def test_force_makes_every_key_due(tmp_path: Path, simulated: None) -> None:
    mw, crawler = crawl_with(tmp_path, {"recent": 1}, CHANGEWATCH_SCHEDULE_ENABLED=True)
    mw.runtime.force = True
    items = [request("recent")]
    assert asyncio.run(through(mw, items)) == items
    assert crawler.stats.get_stats()["changewatch/schedule/forced"] == 1


def test_a_bad_every_in_meta_is_fetched_and_counted(tmp_path: Path, simulated: None,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    mw, crawler = crawl_with(tmp_path, {"recent": 1})
    items = [request("recent", **{meta.EVERY: "soon"}), request("recent", **{meta.EVERY: -5})]
    assert asyncio.run(through(mw, items)) == items
    assert crawler.stats.get_stats()["changewatch/schedule/invalid"] == 2
    assert "meta['changewatch_every'] = 'soon': 'soon' is not a number of seconds" in caplog.text


def test_a_lowered_maximum_applies_at_once_to_keys_scheduled_under_the_old_one(
        tmp_path: Path, simulated: None, caplog: pytest.LogCaptureFixture) -> None:
    """Both keys were scheduled under the default 7 days (a new key: due in about 14 hours); with
    a 30-minute maximum, the one fetched an hour ago is due now, and the start says how many moved."""
    caplog.set_level(logging.INFO, logger="changewatch")
    settings = {"CHANGEWATCH_SCHEDULE_ENABLED": True, "CHANGEWATCH_SCHEDULE_MAX_INTERVAL": "30m"}
    mw, crawler = crawl_with(tmp_path, {"recent": 1, "fresh": 0.1}, **settings)
    items = [request("recent"), request("fresh")]
    assert asyncio.run(through(mw, items)) == [items[0]]  # "fresh" was fetched 6 minutes ago: not due
    moved = [r.getMessage() for r in caplog.records if "moved to the bounds" in r.getMessage()]
    assert moved == ["changewatch: schedule: 2 key(s) moved to the bounds CHANGEWATCH_SCHEDULE_MIN_INTERVAL = 15m "
                     "and _MAX_INTERVAL = 30m (their due times were set under other bounds)"]
    assert crawler.stats.get_stats()["changewatch/schedule/rebounded"] == 2
    caplog.clear()
    again = ScheduleMiddleware.from_crawler(crawler)  # the next start: nothing left to move
    assert asyncio.run(through(again, [request("fresh")])) == []
    assert "moved to the bounds" not in caplog.text


def test_the_bounds_move_nothing_while_the_schedule_is_off(tmp_path: Path, simulated: None) -> None:
    mw, crawler = crawl_with(tmp_path, {"recent": 1}, CHANGEWATCH_SCHEDULE_MAX_INTERVAL="30m")
    items = [request("recent", **{meta.EVERY: "6h"})]
    assert asyncio.run(through(mw, items)) == items  # every gives way to the maximum, schedule on or off
    assert "changewatch/schedule/rebounded" not in crawler.stats.get_stats()
    assert mw.runtime.runner.store.due_entries("unit", ["recent"])["recent"].interval > 1800  # type: ignore[attr-defined]


def test_an_every_longer_than_the_maximum_gives_way_to_it_said_once(
        tmp_path: Path, simulated: None, caplog: pytest.LogCaptureFixture) -> None:
    """The stricter wins: `every: 6h` with a 30-minute maximum is due 30 minutes after its last
    fetch; one WARNING line for the crawl, however many watches; the others are counted."""
    mw, crawler = crawl_with(tmp_path, {"hour-ago": 1, "just-now": 0.1}, CHANGEWATCH_SCHEDULE_MAX_INTERVAL="30m")
    items = [request("hour-ago", **{meta.EVERY: "6h"}), request("just-now", **{meta.EVERY: "6h"}),
             request("hour-ago", **{meta.EVERY: "20m"})]
    assert asyncio.run(through(mw, items)) == [items[0], items[2]]
    warnings = [r.getMessage() for r in caplog.records
                if r.levelname == "WARNING" and r.name == "changewatch.middlewares.schedule"]
    assert warnings == ["changewatch: schedule: hour-ago: every 6h is longer than CHANGEWATCH_SCHEDULE_MAX_INTERVAL "
                        "= 30m: the stricter wins, it is fetched once 30m after its last fetch (so is any other such "
                        "watch, counted in changewatch/schedule/capped)"]
    assert crawler.stats.get_stats()["changewatch/schedule/capped"] == 2


def test_a_skipped_key_is_noted_as_listed_only_when_it_is_getting_old(tmp_path: Path, simulated: None) -> None:
    days = 24.0
    mw, _ = crawl_with(tmp_path, {"fresh": 1, "aging": 30 * days}, CHANGEWATCH_FORGET_AFTER="90d",
                       CHANGEWATCH_SCHEDULE_MAX_INTERVAL="60d")
    items = [request("fresh", **{meta.EVERY: "60d"}), request("aging", **{meta.EVERY: "60d"})]
    assert asyncio.run(through(mw, items)) == []
    assert mw.runtime.housekeeper.listed == {"aging"}  # a quarter of 90 days unseen: noted; an hour: not yet


@pytest.mark.parametrize("read_first", [False, True])
def test_a_callbacks_list_is_decided_without_awaiting_as_the_start_requests_are(
        tmp_path: Path, simulated: None, read_first: bool) -> None:
    """The sync method (a callback returning a list keeps Scrapy's chain synchronous) decides as
    the async one does, whether a start request's read came first or this is the crawl's first."""
    mw, crawler = crawl_with(tmp_path, {"recent": 1, "old": 100}, CHANGEWATCH_SCHEDULE_ENABLED=True)
    asyncio.run(mw.runtime.open())
    if read_first:
        asyncio.run(through(mw, [request("old")]))
    items = [request("recent"), request("old"), request("new"), request(None), {"an": "item"}]
    kept = list(mw.process_spider_output(scrapy.http.Response(URL), items))
    assert kept == items[1:]
    stats = crawler.stats.get_stats()
    assert stats["changewatch/schedule/skipped"] == 1
    assert stats["changewatch/schedule/due"] == (3 if read_first else 2)


def test_the_watch_spiders_callback_output_runs_through_a_synchronous_chain() -> None:
    """Every spider middleware the add-on enables has a sync process_spider_output (or none), so
    Scrapy does not turn a list into an async generator through the whole chain per response."""
    import inspect

    from scrapy.utils.misc import load_object

    crawler = get_crawler(UnitSpider, {"ADDONS": {"changewatch.Addon": 0}})
    enabled = [path for path, order in crawler.settings.getwithbase("SPIDER_MIDDLEWARES").items() if order is not None]
    ours = [load_object(path) for path in enabled if str(path).startswith("changewatch.")]
    assert ours, enabled
    for cls in ours:
        method = getattr(cls, "process_spider_output", None)
        assert method is None or not inspect.isasyncgenfunction(method), cls


class SiteSpider(ChangewatchSpider):
    name = "site"


def test_watch_schedules_by_key_and_never_a_page_fetched_in_full() -> None:
    spider = SiteSpider(site="https://shop.example/")
    product = spider.watch("https://shop.example/p/1", spider.parse, key="P1", every="6h")
    assert product.meta[meta.EVERY] == 21600.0 and meta.SCHEDULE not in product.meta
    category = spider.watch("https://shop.example/c/", spider.parse, key="c", conditional=False)
    assert category.meta[meta.SCHEDULE] is False  # it leads to the products: always fetched
    assert meta.SCHEDULE not in spider.watch("https://shop.example/c/", spider.parse, key="c", conditional=False,
                                             scheduled=True).meta
    unscheduled = spider.watch("https://shop.example/p/2", spider.parse, key="P2", scheduled=False)
    assert unscheduled.meta[meta.SCHEDULE] is False
    with pytest.raises(ValueError, match=r"spider 'site': watch\('https://shop.example/p/1', every=...\) needs key="):
        spider.watch("https://shop.example/p/1", spider.parse, every="6h")
    with pytest.raises(ValueError, match=r"every='soon'\): 'soon' is not a number of seconds"):
        spider.watch("https://shop.example/p/1", spider.parse, key="P1", every="soon")


def test_only_the_due_states_of_the_keys_requested_are_read_a_batch_at_a_time(
        tmp_path: Path, simulated: None) -> None:
    """A store holding many more keys (another site's pages): the schedule reads the due states of
    the keys its requests name, LOOKUP_BATCH at a time, none other; a request that carries its
    key's due state (a site's page) is decided with it and read for nobody; the order is kept."""
    from changewatch.core.schedule import DueEntry
    from changewatch.middlewares.schedule import LOOKUP_BATCH

    mw, crawler = crawl_with(tmp_path, {"recent": 1, "old": 100, **{f"other-{i}": 1 for i in range(50)}},
                             CHANGEWATCH_SCHEDULE_ENABLED=True)
    store = mw.runtime.runner.store
    asked: list[list[str]] = []
    real = store.due_entries  # type: ignore[attr-defined]

    def due_entries(spider: str, keys: list[str]) -> Any:
        asked.append(list(keys))
        return real(spider, keys)

    store.due_entries = due_entries  # type: ignore[attr-defined]
    carried = DueEntry(NOW.timestamp() - 60, NOW.timestamp() + 3600, 3600.0, None)
    page = request("other-0", **{meta._DUE_ENTRY: carried})  # not due by what it carries
    plain = [request(f"new-{i}") for i in range(LOOKUP_BATCH + 10)]
    items = [page, request("recent"), page.copy(), request("old"), *plain, request(None)]
    kept = asyncio.run(through(mw, items))
    assert kept == [items[3], *plain, items[-1]]  # the pages and "recent" are not due
    # LOOKUP_BATCH requests held (a page among them, held to keep the order) read at once, then the rest
    assert [len(keys) for keys in asked] == [LOOKUP_BATCH - 1, 13]
    assert sorted(k for keys in asked for k in keys) == sorted(["recent", "old", *(f"new-{i}" for i in range(
        LOOKUP_BATCH + 10))])
    stats = crawler.stats.get_stats()
    assert (stats["changewatch/schedule/skipped"], stats["changewatch/schedule/due"]) == (3, LOOKUP_BATCH + 11)
    asked.clear()  # a start whose requests all carry their due states reads nothing
    unkeyed = request(None)
    assert asyncio.run(through(mw, [page.copy(), unkeyed])) == [unkeyed] and asked == []
