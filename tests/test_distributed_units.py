"""RoundScheduler's units: a site watch's discovery is claimed once per round and done whole by
the process that claimed it (its requests never reach Redis), while the page requests it makes
are shared by the round. Real Redis, real scrapy-redis queues."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scrapy import Request

from changewatch import meta
from changewatch.distributed import CLAIMED, RoundScheduler

from .test_distributed import redis_13, scheduler, watch_requests

__all__ = ["redis_13"]


def unit_starts(unit: str, *urls: str) -> list[Request]:
    """The start requests of a site watch's discovery, as spiders/site.py makes them (the callback
    is not the spider's: such a request cannot be pushed to Redis)."""
    return [Request(url, callback=print, dont_filter=True, meta={meta._ROUND_UNIT: unit, "is_start_request": True})
            for url in urls]


def test_a_unit_is_claimed_once_and_its_requests_stay_in_its_process(tmp_path: Path, redis_13: str) -> None:
    first, watches = scheduler(tmp_path, redis_13)
    second, _ = scheduler(tmp_path, redis_13)
    blog = ("https://blog.example/", "https://blog.example/archive")
    assert [first.enqueue_request(r) for r in unit_starts("blog", *blog)] == [True, True]
    assert [second.enqueue_request(r) for r in unit_starts("blog", *blog)] == [False, False]
    assert [second.enqueue_request(r) for r in unit_starts("docs", "https://docs.example/sitemap.xml")] == [True]
    assert [first.enqueue_request(r) for r in unit_starts("docs", "https://docs.example/sitemap.xml")] == [False]
    assert len(first.queue) == len(second.queue) == 0  # nothing of a unit is in Redis
    # the unit's later requests (links followed, a retry) stay in the process that has it
    link = Request("https://blog.example/posts/a", callback=print, dont_filter=True, meta={meta._ROUND_UNIT: "blog"})
    assert first.enqueue_request(link) and len(first) == 3 and len(first.queue) == 0
    # a page request of a sitemap's discovery is an ordinary one: shared by the round
    page = watches[0].replace(meta={k: v for k, v in watches[0].meta.items() if k != "is_start_request"})
    assert second.enqueue_request(page) and len(second.queue) == 1
    popped = [first.next_request() for _ in range(4)]
    assert [r.url for r in popped if r is not None] == [*blog, link.url, page.url]  # its own first
    assert all(r.meta.get(CLAIMED) for r in popped[:2] if r is not None)
    assert second.next_request().url == "https://docs.example/sitemap.xml"  # type: ignore[union-attr]
    assert first.next_request() is None and second.next_request() is None
    assert not first.has_pending_requests() and not second.has_pending_requests()
    assert first.stats.crawler.stats.get_value("changewatch/round/units_claimed") == 1
    assert second.stats.crawler.stats.get_value("changewatch/round/units_skipped") == 1


def test_after_a_loss_a_unit_under_way_is_not_begun_again(tmp_path: Path, redis_13: str) -> None:
    import redis

    first, _ = scheduler(tmp_path, redis_13)
    second, _ = scheduler(tmp_path, redis_13)
    for sched in (first, second):
        for r in unit_starts("blog", "https://blog.example/"):
            sched.enqueue_request(r)
    assert first.next_request() is not None and first.next_request() is None
    redis.Redis.from_url(redis_13).flushdb()  # the round is lost while "blog" is under way in first
    assert not first.has_pending_requests()  # first claims it again and does not begin it twice
    assert not second.has_pending_requests()  # nor does second: first's claim stands
    assert second.next_request() is None


def test_a_lost_unit_of_another_process_is_claimed_afresh(tmp_path: Path, redis_13: str) -> None:
    import redis

    first, _ = scheduler(tmp_path, redis_13)
    second, _ = scheduler(tmp_path, redis_13)
    for sched in (first, second):
        for r in unit_starts("blog", "https://blog.example/", "https://blog.example/b"):
            sched.enqueue_request(r)
    redis.Redis.from_url(redis_13).flushdb()
    assert second.has_pending_requests()  # the idle process found the loss first and has the unit now
    assert [second.next_request().url for _ in range(2)] == ["https://blog.example/",  # type: ignore[union-attr]
                                                             "https://blog.example/b"]


def test_units_of_two_rounds_are_apart(tmp_path: Path, redis_13: str) -> None:
    first, _ = scheduler(tmp_path, redis_13, "r1")
    later, _ = scheduler(tmp_path, redis_13, "r2")
    assert first.enqueue_request(unit_starts("blog", "https://blog.example/")[0])
    assert later.enqueue_request(unit_starts("blog", "https://blog.example/")[0])
    assert isinstance(later, RoundScheduler)


def test_idle_processes_wait_while_a_sitemap_is_read_for_the_round(tmp_path: Path, redis_13: str) -> None:
    import redis

    reader, _ = scheduler(tmp_path, redis_13)
    idle, _ = scheduler(tmp_path, redis_13)
    sitemap = unit_starts("docs", "https://docs.example/sitemap.xml")[0]
    sitemap.meta[meta._ROUND_SHARES] = True
    assert reader.enqueue_request(sitemap)
    assert idle.has_pending_requests()  # the round's queue is empty, but the reader still queues pages
    reader.shared("docs")  # its pages are queued
    assert not idle.has_pending_requests()
    # a reader killed while it reads leaves its key to expire: the others stop waiting then
    third, _ = scheduler(tmp_path, redis_13, "r2")
    late, _ = scheduler(tmp_path, redis_13, "r2")
    again = unit_starts("docs", "https://docs.example/sitemap.xml")[0]
    again.meta[meta._ROUND_SHARES] = True
    assert third.enqueue_request(again) and late.has_pending_requests()
    redis.Redis.from_url(redis_13).delete(f"{third.keys.busy}:{third.owner}")  # as BUSY_TTL after a kill
    assert not late.has_pending_requests()
    # a link-mode site (no pages for the round) holds nobody
    link, _ = scheduler(tmp_path, redis_13, "r3")
    other, _ = scheduler(tmp_path, redis_13, "r3")
    assert link.enqueue_request(unit_starts("blog", "https://blog.example/")[0])
    assert not other.has_pending_requests()


def test_a_sitemap_pages_request_survives_the_redis_queue(tmp_path: Path, redis_13: str) -> None:
    """The page requests a sitemap's reader queues for the round: scrapy-redis pickles
    ``request.to_dict()``; the page's watch (its rule applied), its key, the lastmod check's marks
    and the fresh baseline's come back equal, the callbacks found on the spider by name."""
    import redis
    from scrapy_redis.queue import PriorityQueue

    from changewatch.runtime.services import CrawlServices
    from changewatch.spiders.site import FRESH, SiteCrawler, SiteRun
    from changewatch.spiders.site_set import StoredPages
    from changewatch.watchlist import parse_watchlist

    spider, _ = watch_requests(tmp_path)
    (shop,) = parse_watchlist({"watches": [{"key": "shop", "site": {"sitemap": "https://shop.example/sitemap.xml"},
                                            "jsonld": {"type": "Product", "fields": ["offers.price"]},
                                            "rules": [{"match": "/blog/", "region": "article", "jsonld": None}]}]})
    assert shop.site is not None
    run = SiteRun(shop, shop.site, StoredPages(CrawlServices.of(spider.crawler), "shop"), has_set=True)
    # the second carries its key's due state, read with the set
    requests = [SiteCrawler(spider).page_request(run, "https://shop.example/blog/new", fresh=True),
                SiteCrawler(spider).page_request(run, "https://shop.example/p/1", checked=True, entry=None)]
    queue = PriorityQueue(redis.Redis.from_url(redis_13), spider, "t:pages")
    for request in requests:
        queue.push(request)
    back = [queue.pop() for _ in requests]
    assert sorted(r.url for r in back if r is not None) == sorted(r.url for r in requests)
    for request in requests:
        (again,) = [r for r in back if r is not None and r.url == request.url]
        assert again.meta == request.meta and again.meta[meta.WATCH] == request.meta[meta.WATCH]
        assert again.callback == spider.parse_watch and again.errback == spider.observation_failed
    fresh = next(r for r in back if r is not None and r.meta.get(FRESH))
    assert fresh.meta[meta.WATCH].region == "article" and fresh.meta[meta.WATCH].jsonld is None
    assert fresh.meta[meta.KEY] == "shop|https://shop.example/blog/new"
    assert meta._ROUND_UNIT not in fresh.meta  # a page of the set is the round's, not its reader's


SITEMAP = ('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
           + "".join(f"<url><loc>https://docs.example/p/{i}</loc></url>" for i in range(3)) + "</urlset>")


def round_process(tmp_path: Path, redis: str, name: str, watchlist: Path) -> tuple[Any, RoundScheduler]:
    """A WatchSpider of *watchlist* in round r1 with its RoundScheduler, its own SQLite store."""
    from scrapy.utils.test import get_crawler

    from changewatch.spiders.watch import WatchSpider

    crawler = get_crawler(WatchSpider, {
        "ADDONS": {"changewatch.Addon": 0}, "CHANGEWATCH_STORE": f"sqlite:///{tmp_path / name}.db",
        "REDIS_URL": redis, "CHANGEWATCH_ROUND": "r1", "CHANGEWATCH_ROUND_PREFIX": "unit"})
    spider = WatchSpider.from_crawler(crawler, watchlist=str(watchlist))
    crawler.spider = spider
    sched = RoundScheduler.from_crawler(crawler)
    sched.open(spider)
    return spider, sched


async def started(spider: Any, sched: RoundScheduler) -> list[bool]:
    requests = [r async for r in spider.start()]
    for r in requests:
        r.meta["is_start_request"] = True  # as Scrapy's StartSpiderMiddleware sets it
    return [sched.enqueue_request(r) for r in requests]


def test_a_sites_discovery_is_counted_by_the_process_that_claimed_it(tmp_path: Path, redis_13: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Both processes of a round start the site watch (its sitemap's request); the round gives it
    to the first, which reads and judges the sitemap: only that one counts it discovered, and, the
    site's lastmod being untrusted (an open ``lastmod`` health condition), a run of it that checks
    every page."""
    import asyncio
    import json

    from scrapy.http import XmlResponse

    from changewatch.spiders.site_health import LASTMOD, SiteHealth

    path = tmp_path / "sites.json"
    path.write_text(json.dumps({"watches": [{"key": "docs", "site": {"sitemap": "https://docs.example/sitemap.xml"}}]}))
    opened = SiteHealth.opened
    monkeypatch.setattr(SiteHealth, "opened", lambda self, key, url, condition: (
        object() if condition == LASTMOD else opened(self, key, url, condition)))

    async def judged(spider: Any, request: Request) -> list[Any]:
        response = XmlResponse(request.url, body=SITEMAP.encode(), request=request)
        return [item async for item in request.callback(response)]  # type: ignore[misc]

    (reader, reader_sched), (other, other_sched) = (round_process(tmp_path, redis_13, name, path)
                                                    for name in ("reader", "other"))
    assert asyncio.run(started(reader, reader_sched)) == [True]
    assert asyncio.run(started(other, other_sched)) == [False]  # the round gave the site to the reader
    sitemap = reader_sched.next_request()
    assert sitemap is not None and sitemap.url == "https://docs.example/sitemap.xml"
    assert other_sched.next_request() is None
    items = asyncio.run(judged(reader, sitemap))
    assert sorted(r.url for r in items if isinstance(r, Request)) == [f"https://docs.example/p/{i}" for i in range(3)]
    assert reader.crawler.stats.get_value("changewatch/site/discovered") == 1
    assert other.crawler.stats.get_value("changewatch/site/discovered") is None
    assert reader.crawler.stats.get_value("changewatch/site/lastmod_untrusted_runs") == 1
    assert other.crawler.stats.get_value("changewatch/site/lastmod_untrusted_runs") is None
    assert other.crawler.stats.get_value("changewatch/round/units_skipped") == 1


def test_a_site_set_not_due_is_counted_by_one_process_of_the_round(tmp_path: Path, redis_13: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A site watch whose set was discovered an hour ago and is discovered again daily (``every:
    1d``): every process of the round decides alike that its set is not due and requests its
    stored pages (claimed one by one); the decision is counted by one process, not by each."""
    import asyncio
    import json
    from types import SimpleNamespace

    from changewatch.core import clock
    from changewatch.spiders.site import SiteCrawler

    path = tmp_path / "sites.json"
    path.write_text(json.dumps({"watches": [{"key": "docs", "site": {
        "sitemap": "https://docs.example/sitemap.xml", "every": "1d"}}]}))
    an_hour_ago = clock.now().timestamp() - 3600
    seen = SimpleNamespace(last_seen=clock.now().fromtimestamp(an_hour_ago, clock.now().tzinfo).isoformat(),
                           counters={})

    async def state(self: SiteCrawler, key: str) -> Any:
        await self.runtime.open()
        return seen  # the site watch's state row, as its store gives it

    async def stored_spec(self: SiteCrawler, stored: Any) -> str:
        return "max_pages=10000"  # the stored set's, as the watch's spec makes it: the same set

    monkeypatch.setattr(SiteCrawler, "_state", state)
    monkeypatch.setattr(SiteCrawler, "_stored_spec", stored_spec)
    processes = [round_process(tmp_path, redis_13, name, path) for name in ("first", "second", "third")]
    for spider, sched in processes:
        spider.crawler.engine = SimpleNamespace(scheduler=sched)  # round_scheduler finds it there
        assert asyncio.run(started(spider, sched)) == []  # the stored set is empty
    counts = [spider.crawler.stats.get_value("changewatch/site/discovery_not_due") for spider, _ in processes]
    assert counts == [1, None, None]
    assert all(spider.crawler.stats.get_value("changewatch/site/discovered") is None for spider, _ in processes)
