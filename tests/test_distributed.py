"""changewatch.distributed: the watch spider's requests survive scrapy-redis's serialisation, and
RoundScheduler claims each start once per round (a real Redis, database 13; the crawls are in
tests/e2e/test_distributed.py)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from changewatch import meta
from changewatch.distributed import CLAIMED, RoundScheduler, round_name
from changewatch.runtime.config import ConfigError
from changewatch.spiders.watch import WatchSpider

from .e2e.rounds import REDIS_HOW, redis_db_url, redis_unavailable
from .services import require

WATCHES = {"defaults": {"threshold": 3}, "watches": [
    {"url": "https://shop.example/p/1", "key": "p1", "jsonld": {"type": "Product", "fields": ["offers.price"]},
     "fields": {"stock": "p.stock::text"}, "kinds": {"stock": "availability"}},
    {"url": "https://rentals.example/search?q=2br", "accept_language": "de", "headers": {"X-A": "b"},
     "cookies": {"c": "1"},
     "entities": {"selector": "article", "key": "a::attr(href)", "fields": {"price": "span.price::text"}}},
    {"url": "https://example.com/terms", "key": "terms", "region": "main article"},
]}


def watch_requests(tmp_path: Path, **settings: Any) -> tuple[WatchSpider, list[Request]]:
    path = tmp_path / "watchlist.json"
    path.write_text(json.dumps(WATCHES), encoding="utf-8")
    crawler = get_crawler(WatchSpider, {"ADDONS": {"changewatch.Addon": 0}, **settings})
    spider = WatchSpider.from_crawler(crawler, watchlist=str(path))
    crawler.spider = spider

    async def collect() -> list[Request]:
        return [r async for r in spider.start()]

    return spider, asyncio.run(collect())


@pytest.fixture
def redis_13() -> Iterator[str]:
    why = redis_unavailable()
    require(why is None, f"the test Redis server ({why})", REDIS_HOW)
    import redis

    url = redis_db_url(13)
    redis.Redis.from_url(url).flushdb()
    yield url
    redis.Redis.from_url(url).flushdb()


def test_watch_requests_survive_the_redis_queue(tmp_path: Path, redis_13: str) -> None:
    """scrapy-redis pickles ``request.to_dict()``: the Watch in meta, its specs and vantage point
    come back equal, and the callbacks are found again on the spider by name."""
    import redis
    from scrapy_redis.queue import PriorityQueue

    spider, requests = watch_requests(tmp_path)
    queue = PriorityQueue(redis.Redis.from_url(redis_13), spider, "t:queue")
    for request in requests:
        queue.push(request)
    for request in requests:
        back = queue.pop()
        assert back is not None and back.url == request.url
        assert back.meta == request.meta and back.meta[meta.WATCH] == request.meta[meta.WATCH]
        assert back.callback == spider.parse_watch and back.errback == spider.failed
        assert back.dont_filter and back.priority == request.priority


def scheduler(tmp_path: Path, redis_url: str, round_: str = "r1") -> tuple[RoundScheduler, list[Request]]:
    spider, requests = watch_requests(tmp_path, REDIS_URL=redis_url, CHANGEWATCH_ROUND=round_,
                                      CHANGEWATCH_ROUND_PREFIX="unit")
    sched = RoundScheduler.from_crawler(spider.crawler)
    sched.open(spider)
    for r in requests:
        r.meta["is_start_request"] = True  # as Scrapy's StartSpiderMiddleware sets it
    return sched, requests


def test_each_start_is_claimed_once_per_round_and_its_retries_pass(tmp_path: Path, redis_13: str) -> None:
    first, requests = scheduler(tmp_path, redis_13)
    second, again = scheduler(tmp_path, redis_13)  # another process of the round
    assert [first.enqueue_request(r) for r in requests] == [True] * 3
    assert [second.enqueue_request(r) for r in again] == [False] * 3
    assert all(r.meta[CLAIMED] for r in requests)
    # a retry or a redirect copies the meta (is_start_request included): not a new start
    retry = requests[0].replace(dont_filter=True)
    retry.meta["retry_times"] = 1  # (an identical request would be one member of the queue's sorted set)
    assert first.enqueue_request(retry) and len(first) == 4
    next_round, fresh = scheduler(tmp_path, redis_13, "r2")
    assert [next_round.enqueue_request(r) for r in fresh] == [True] * 3


def test_a_lost_round_is_claimed_again_by_an_idle_process(tmp_path: Path, redis_13: str) -> None:
    import redis

    sched, requests = scheduler(tmp_path, redis_13)
    for r in requests:
        sched.enqueue_request(r)
    assert sched.has_pending_requests()
    while sched.next_request() is not None:
        pass
    assert not sched.has_pending_requests()  # drained, the round intact: done
    redis.Redis.from_url(redis_13).flushdb()
    assert sched.has_pending_requests() and len(sched) == 3  # every watch claimed and queued again
    popped = [sched.next_request() for _ in range(3)]
    assert sorted(r.meta[meta.KEY] for r in popped if r is not None) == sorted(r.meta[meta.KEY] for r in requests)
    assert len(sched) == 0 and sched.next_request() is None


def test_a_process_of_a_round_that_already_ran_says_why_it_fetched_nothing(
        tmp_path: Path, redis_13: str, caplog: pytest.LogCaptureFixture) -> None:
    first, requests = scheduler(tmp_path, redis_13, "nightly-1")
    for r in requests:
        first.enqueue_request(r)
    while first.next_request() is not None:
        pass
    with caplog.at_level(logging.WARNING, logger="changewatch.distributed"):
        first.close("finished")
    assert not caplog.records
    rerun, again = scheduler(tmp_path, redis_13, "nightly-1")  # the same explicit round, an hour later
    assert [rerun.enqueue_request(r) for r in again] == [False] * 3
    assert not rerun.has_pending_requests()
    with caplog.at_level(logging.WARNING, logger="changewatch.distributed"):
        rerun.close("finished")
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    message = record.getMessage()
    assert "nightly-1" in message and "all 3" in message and "CHANGEWATCH_ROUND_TTL" in message, message
    assert rerun.crawler.stats is not None
    assert rerun.crawler.stats.get_value("changewatch/round/all_claimed") == 1
    assert first.crawler.stats is not None and first.crawler.stats.get_value("changewatch/round/all_claimed") is None
    # a process that joined late but took a retry from the queue did work: no warning
    helper, more = scheduler(tmp_path, redis_13, "nightly-1")
    assert [helper.enqueue_request(r) for r in more] == [False] * 3
    retry = requests[0].replace()
    retry.meta["retry_times"] = 1
    busy, _ = scheduler(tmp_path, redis_13, "nightly-1")  # a process of the round still at work
    assert busy.enqueue_request(retry) and helper.next_request() is not None
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="changewatch.distributed"):
        helper.close("finished")
    assert not caplog.records


def short_lived(tmp_path: Path, redis_url: str, ttl: float, open_: bool = True) -> tuple[RoundScheduler,
                                                                                         list[Request]]:
    """A process of round r1 whose keys live *ttl* seconds (the setting allows 60 s at least)."""
    import redis

    spider, requests = watch_requests(tmp_path, REDIS_URL=redis_url, CHANGEWATCH_ROUND="r1")
    sched = RoundScheduler(spider.crawler, redis.Redis.from_url(redis_url), "r1", "unit", ttl)
    if open_:
        sched.open(spider)
    for r in requests:
        r.meta["is_start_request"] = True
    return sched, requests


def test_a_round_longer_than_its_ttl_keeps_its_keys_and_runs_once(tmp_path: Path, redis_13: str) -> None:
    """Two processes share a round that lasts twice its keys' TTL, asking the scheduler every
    0.6 s: the marker, claims, queue and seen set are kept alive with the round, nobody finds the
    round lost, and each watch is popped once."""
    import redis

    server = redis.Redis.from_url(redis_13)
    first, requests = short_lived(tmp_path, redis_13, 2)
    second, again = short_lived(tmp_path, redis_13, 2)
    assert [first.enqueue_request(r) for r in requests] == [True] * 3
    assert [second.enqueue_request(r) for r in again] == [False] * 3
    page = Request("https://shop.example/p/1?page=2")  # a request the round's dupefilter sees
    assert first.enqueue_request(page) and not second.enqueue_request(page.replace())
    assert 0 < server.ttl(first.keys.seen) <= 2  # set when the set is made: a killed round leaks no key
    popped: list[Request] = []
    started = time.monotonic()
    while time.monotonic() - started < 4.5:  # > 2 TTLs
        for sched in (first, second):
            if sched.has_pending_requests():
                request = sched.next_request()
                assert request is not None
                popped.append(request)
        time.sleep(0.6)  # a download
    assert sorted(r.url for r in popped) == sorted([r.url for r in requests] + [page.url])
    assert not first.has_pending_requests() and not second.has_pending_requests()
    assert first.stats.crawler.stats.get_value("changewatch/round/lost") is None
    assert second.stats.crawler.stats.get_value("changewatch/round/lost") is None
    for key in (first.keys.marker, first.keys.claims, first.keys.seen):
        assert 0 < server.ttl(key) <= 2, key


def test_a_process_busy_longer_than_the_ttl_keeps_the_round(tmp_path: Path, redis_13: str) -> None:
    """The one process of a round downloads for longer than the TTL without asking its scheduler
    anything (every download slot taken): a timer on the event loop keeps the round's keys, and
    when the process goes idle it finds the round intact, not lost."""
    import redis

    server = redis.Redis.from_url(redis_13)

    sched, requests = short_lived(tmp_path, redis_13, 2, open_=False)

    async def round_() -> bool:
        assert sched.crawler.spider is not None
        sched.open(sched.crawler.spider)  # on the running loop, as the engine opens it
        for r in requests:
            sched.enqueue_request(r)
        while sched.next_request() is not None:
            pass
        await asyncio.sleep(3.5)  # the downloads
        pending = sched.has_pending_requests()
        sched.close("finished")
        return pending

    assert not asyncio.run(round_())
    assert sched.crawler.stats is not None and sched.crawler.stats.get_value("changewatch/round/lost") is None
    assert 0 < server.ttl(sched.keys.marker) <= 2


def test_a_round_named_by_the_clock_keeps_its_keys_half_an_interval_at_least(tmp_path: Path) -> None:
    """A process joins the round nearest its start, up to half an interval late: the round's
    claims must outlive that, or a late process would run a finished round again."""
    def ttl(**settings: Any) -> int:
        spider, _ = watch_requests(tmp_path, REDIS_URL="redis://127.0.0.1:1/0", **settings)
        return RoundScheduler.from_crawler(spider.crawler).ttl

    assert ttl(CHANGEWATCH_ROUND_EVERY="7d") == 84 * 3600  # not the default day
    assert ttl(CHANGEWATCH_ROUND_EVERY="15m") == 86400
    assert ttl(CHANGEWATCH_ROUND_EVERY="7d", CHANGEWATCH_ROUND="weekly-1") == 86400  # named: the setting


def test_round_names() -> None:
    with pytest.raises(ConfigError, match="CHANGEWATCH_ROUND_EVERY"):
        round_name(None, None, 0)
    assert round_name("", 3600, 3600 * 10 + 1799) == "1970-01-01T10:00:00Z"
    assert round_name("", 3600, 3600 * 10 + 1801) == "1970-01-01T11:00:00Z"
