"""changewatch.distributed: the watch spider's requests survive scrapy-redis's serialisation, and
RoundScheduler claims each start once per round (a real Redis, database 13; the crawls are in
tests/e2e/test_distributed.py)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from changewatch import meta
from changewatch.config import ConfigError
from changewatch.distributed import CLAIMED, RoundScheduler, round_name
from changewatch.spiders.watch import WatchSpider

from .e2e.rounds import RedisServer, owned_redis

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
    """Database 13 of the test Redis, flushed before and after; under pytest-xdist each worker has
    its own (13, 14, 15), as the tests of this module flush it while another worker's may run."""
    worker_id = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    worker = int(worker_id.removeprefix("gw"))
    assert worker < 3, f"the test Redis has databases 13-15 for this module: run at most 3 workers ({worker_id})"
    yield from owned_redis(13 + worker)


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
        assert back.callback == spider.parse_watch and back.errback == spider.observation_failed
        assert back.dont_filter and back.priority == request.priority


def scheduler(tmp_path: Path, redis_url: str, round_: str = "r1", **settings: Any) -> tuple[RoundScheduler,
                                                                                          list[Request]]:
    spider, requests = watch_requests(tmp_path, REDIS_URL=redis_url, CHANGEWATCH_ROUND=round_,
                                      CHANGEWATCH_ROUND_PREFIX="unit", **settings)
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


# -- Redis outages: a redis-server of the test's own (own_redis), killed and started again ---------


class FailRecorder:
    """Stands for CrawlServices (a unit test has no running crawl): records fail()."""

    def __init__(self) -> None:
        self.failures: list[str] = []

    def fail(self, why: str) -> None:
        self.failures.append(why)


@pytest.fixture
def failures(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from changewatch.runtime.services import CrawlServices

    recorder = FailRecorder()
    monkeypatch.setattr(CrawlServices, "of", classmethod(lambda cls, crawler: recorder))
    return recorder.failures


def timed(call: Any, *args: Any) -> tuple[Any, float]:
    started = time.monotonic()
    result = call(*args)
    return result, time.monotonic() - started


def until(condition: Any, within: float, every: float = 0.2) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, f"not within {within} s"
        time.sleep(every)


def test_redis_connection_defaults_bound_each_call(tmp_path: Path) -> None:
    """Every Redis call runs on the crawl's event loop: a few seconds at most unless REDIS_PARAMS
    says otherwise, one immediate retry of a refused connection, none of a timeout (scrapy-redis's
    30 s socket timeouts, and redis-py's 10 retries with backoff: 4.7 s a call to a refused port)."""
    from scrapy.settings import Settings

    from changewatch.distributed import REDIS_CONNECT_TIMEOUT, REDIS_SOCKET_TIMEOUT, redis_server

    for where in ({"REDIS_URL": "redis://127.0.0.1:1/0"}, {"REDIS_HOST": "127.0.0.1", "REDIS_PORT": 1}):
        server = redis_server(Settings(where))
        kwargs = server.connection_pool.connection_kwargs
        assert (kwargs["socket_timeout"], kwargs["socket_connect_timeout"]) == (REDIS_SOCKET_TIMEOUT,
                                                                                REDIS_CONNECT_TIMEOUT)
        import redis

        for _ in range(2):
            started = time.monotonic()
            with pytest.raises(redis.ConnectionError):
                server.ping()
            assert time.monotonic() - started < 0.5, where
    given = redis_server(Settings({"REDIS_URL": "redis://127.0.0.1:1/0",
                                   "REDIS_PARAMS": {"socket_timeout": 30, "retry_on_timeout": True}}))
    kwargs = given.connection_pool.connection_kwargs
    assert kwargs["socket_timeout"] == 30 and kwargs["retry_on_timeout"] and "retry" not in kwargs


def test_scheduler_calls_during_a_redis_outage_neither_raise_nor_block(
        tmp_path: Path, own_redis: RedisServer, failures: list[str], caplog: pytest.LogCaptureFixture) -> None:
    """Redis killed mid-round: the scheduler pops nothing, has work pending and holds what it is
    given, without raising and without waiting; restarted empty, it answers again: the held
    requests are claimed and queued, the lost round's watches claimed again, one WARNING each."""
    sched, requests = scheduler(tmp_path, own_redis.url)
    late = requests.pop()  # a start request the spider yields during the outage
    assert [sched.enqueue_request(r) for r in requests] == [True, True]
    assert sched.next_request() is not None  # one watch popped before the outage (being fetched)
    own_redis.kill()
    with caplog.at_level(logging.WARNING, logger="changewatch.distributed"):
        for _ in range(20):
            for call, args, expected in ((sched.next_request, (), None), (sched.has_pending_requests, (), True)):
                result, took = timed(call, *args)
                assert result is expected and took < 0.5, (call, took)
        retry = requests[0].replace(dont_filter=True)
        retry.meta["retry_times"] = 1
        page = Request("https://shop.example/p/1?page=2")  # filtered by the round's seen set
        for request in (late, retry, page):
            result, took = timed(sched.enqueue_request, request)
            assert result is True and took < 0.5
        assert len(sched) == 3
        own_redis.start()  # empty: the round's queue, claims and marker are gone
        until(lambda: sched.next_request() is not None, within=10)  # the held requests, queued again
        popped = 1
        while sched.has_pending_requests():
            popped += sched.next_request() is not None
    assert popped == 5, popped  # late, retry, page, and the 2 claimed watches again (one was fetched already)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 3, warnings
    assert "unreachable" in warnings[0] and "CHANGEWATCH_ROUND_RETRY_TIME" in warnings[0]
    assert "answers again after" in warnings[1] and "3 requests" in warnings[1]
    assert "no longer held the round" in warnings[2]
    stats = sched.crawler.stats
    assert stats is not None
    assert stats.get_value("changewatch/round/redis_outages") == 1
    assert stats.get_value("changewatch/round/redis_errors") >= 1
    assert stats.get_value("changewatch/round/held") == 3 and stats.get_value("changewatch/round/replayed") == 3
    assert failures == []
    sched.close("finished")


def test_a_black_holed_redis_blocks_one_socket_timeout_now_and_then(tmp_path: Path, own_redis: RedisServer,
                                                                     failures: list[str]) -> None:
    """A server that accepts connections and never answers: a call waits the socket timeout
    (REDIS_PARAMS here) once, not again on every call; the calls in between return at once."""
    import socket as socket_

    sched, requests = scheduler(tmp_path, own_redis.url, REDIS_PARAMS={"socket_timeout": 0.5})
    assert sched.enqueue_request(requests[0])
    own_redis.kill()
    with socket_.socket() as hole:
        hole.setsockopt(socket_.SOL_SOCKET, socket_.SO_REUSEADDR, 1)
        hole.bind(("127.0.0.1", own_redis.port))
        hole.listen(16)  # the kernel accepts; nobody reads or answers
        _, took = timed(sched.next_request)
        assert 0.4 < took < 0.9, took  # one socket timeout, not retried
        quick = [timed(sched.has_pending_requests)[1] for _ in range(50)]
        assert max(quick) < 0.05, quick
    assert failures == []


def test_a_claim_or_a_push_whose_reply_was_lost_is_this_process_own(tmp_path: Path, own_redis: RedisServer,
                                                                    failures: list[str]) -> None:
    """The claim's pipeline was applied but its reply lost (the connection dropped after the
    server ran it): the process does not know it claimed the watch. When Redis answers, it finds
    the claim is its own and queues the watch, which the round's other process skips; the same
    for a seen-set entry, and for a push (queued once: the queue dedups a repeated push)."""
    import redis

    sched, requests = scheduler(tmp_path, own_redis.url)
    other, again = scheduler(tmp_path, own_redis.url)
    real_pipeline, real_push = sched.server.pipeline, sched.queue.push
    lost = {"pipeline": True, "push": False}

    class LostReply:
        def __init__(self, pipe: Any) -> None:
            self.pipe = pipe

        def __getattr__(self, name: str) -> Any:
            return getattr(self.pipe, name)

        def execute(self) -> Any:
            result = self.pipe.execute()
            if lost["pipeline"]:
                raise redis.ConnectionError("Connection closed by server (the test)")
            return result

    def push(request: Request) -> None:
        real_push(request)
        if lost["push"]:
            raise redis.ConnectionError("Connection closed by server (the test)")

    sched.server.pipeline = lambda transaction=True: LostReply(real_pipeline(transaction=transaction))  # type: ignore
    sched.queue.push = push
    page = Request("https://shop.example/p/1?page=2")
    assert sched.enqueue_request(requests[0]) and sched.enqueue_request(page)  # held: the replies were lost
    assert len(sched) == 2 and sched.stats.crawler.stats.get_value("changewatch/round/held") == 2
    claims = redis.Redis.from_url(own_redis.url).hgetall(sched.keys.claims)
    assert list(claims.values()) == [f"{requests[0].url} {sched.owner}".encode()]  # applied, and whose
    assert other.enqueue_request(again[0]) is False  # claimed: the other process skips it

    lost["pipeline"] = False
    sched._outage.try_now()  # (no waiting for the next try)
    assert sched.has_pending_requests() and len(sched) == 2  # Redis answers: both queued
    assert sched.stats.crawler.stats.get_value("changewatch/round/reclaimed") == 1

    lost["push"] = True  # now the claim answers, and the push's reply is lost
    assert sched.enqueue_request(requests[1])  # claimed, pushed, reply lost: held
    assert sched._outage.since is not None and len(sched) == 1
    lost["push"] = False
    sched._outage.try_now()
    assert sched.has_pending_requests()
    popped = []
    while (request := sched.next_request()) is not None:
        popped.append(request.url)
    assert sorted(popped) == sorted([requests[0].url, page.url, requests[1].url])
    assert sched.stats.crawler.stats.get_value("changewatch/round/reclaimed") == 2
    assert sched.stats.crawler.stats.get_value("changewatch/round/filtered") is None
    assert other.enqueue_request(again[1]) is False and other.enqueue_request(page.replace()) is False
    assert [other.enqueue_request(r) for r in again[2:]] == [True]  # nobody claimed it
    assert failures == []


def test_past_the_budget_the_crawl_stops_once(tmp_path: Path, own_redis: RedisServer, failures: list[str],
                                             caplog: pytest.LogCaptureFixture) -> None:
    sched, requests = scheduler(tmp_path, own_redis.url, CHANGEWATCH_ROUND_RETRY_TIME="1")
    assert sched.retry_time == 1
    assert sched.enqueue_request(requests[0])
    own_redis.kill()
    assert sched.has_pending_requests() and sched.next_request() is None and sched.enqueue_request(requests[1])
    assert failures == []
    time.sleep(1.1)
    assert not sched.has_pending_requests()
    [why] = failures
    assert "Redis at 127.0.0.1:" in why and "unreachable for more than 1 s" in why, why
    assert "CHANGEWATCH_ROUND_RETRY_TIME" in why and "ConnectionError" in why, why
    assert sched.next_request() is None and not sched.enqueue_request(requests[2])
    assert not sched.has_pending_requests() and len(failures) == 1
    with caplog.at_level(logging.WARNING, logger="changewatch.distributed"):
        sched.close("changewatch_failed")  # does not raise
    assert sched.crawler.stats is not None and sched.crawler.stats.get_value("changewatch/round/redis_outage_seconds")


def test_a_budget_of_zero_stops_the_crawl_at_the_first_error(tmp_path: Path, own_redis: RedisServer,
                                                             failures: list[str]) -> None:
    sched, requests = scheduler(tmp_path, own_redis.url, CHANGEWATCH_ROUND_RETRY_TIME=0)
    own_redis.kill()
    assert not sched.enqueue_request(requests[0]) and not sched.has_pending_requests() and len(failures) == 1


def test_a_process_that_asks_its_scheduler_nothing_still_stops_at_the_budget(
        tmp_path: Path, own_redis: RedisServer, failures: list[str]) -> None:
    """Every download slot taken, the engine asks nothing: a timer ends the outage's budget."""
    sched, requests = scheduler(tmp_path, own_redis.url, CHANGEWATCH_ROUND_RETRY_TIME="0.5")

    async def busy() -> None:
        assert sched.crawler.spider is not None
        sched.open(sched.crawler.spider)
        sched.enqueue_request(requests[0])
        own_redis.kill()
        assert sched.next_request() is None  # the outage begins
        await asyncio.sleep(1.2)  # downloading
        sched.close("changewatch_failed")

    asyncio.run(busy())
    assert len(failures) == 1 and "Redis" in failures[0]
