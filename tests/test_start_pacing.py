"""The watch spider's start pacing (changewatch/spiders/pacing.py): a start request waits while
Scrapy's scheduler holds the lookahead, wakes when a request reaches the downloader or, failing
that, after a second; any other scheduler is not paced."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from scrapy import signals
from scrapy.core.scheduler import Scheduler
from scrapy.utils.test import get_crawler

from changewatch.spiders import pacing
from changewatch.spiders.pacing import StartPacer, lookahead


class Queue(Scheduler):
    """Scrapy's scheduler class, holding what the test says."""

    def __init__(self, held: int):  # no queues: only its length is asked
        self.held = held

    def __len__(self) -> int:
        return self.held


class Engine:
    def __init__(self, scheduler: Any):
        self.scheduler = scheduler


def pacer_with(scheduler: Any) -> StartPacer:
    crawler = get_crawler(settings_dict={"CONCURRENT_REQUESTS": 8})
    crawler.engine = Engine(scheduler)  # type: ignore[assignment]
    return StartPacer(crawler)


def test_the_lookahead_is_twice_the_concurrency_and_32_at_least() -> None:
    assert lookahead(get_crawler(settings_dict={"CONCURRENT_REQUESTS": 100})) == 200
    assert lookahead(get_crawler(settings_dict={"CONCURRENT_REQUESTS": 4})) == 32


def test_a_start_request_waits_for_room_and_wakes_when_a_request_moves() -> None:
    queue = Queue(40)
    pacer = pacer_with(queue)
    assert pacer.ahead == 32

    async def run() -> float:
        waiting = asyncio.ensure_future(pacer.room())
        await asyncio.sleep(0.05)
        assert not waiting.done()  # 40 queued: no room
        queue.held = 31
        t0 = time.perf_counter()
        pacer.crawler.signals.send_catch_log(signals.request_reached_downloader, request=None, spider=None)
        await waiting
        return time.perf_counter() - t0

    assert asyncio.run(run()) < 0.5  # woken by the signal, not the timer


def test_a_missed_wake_up_costs_a_second_at_most(monkeypatch: Any) -> None:
    monkeypatch.setattr(pacing, "_LOOK_AGAIN", 0.05)
    queue = Queue(40)
    pacer = pacer_with(queue)

    async def run() -> None:
        waiting = asyncio.ensure_future(pacer.room())
        await asyncio.sleep(0.02)
        queue.held = 0  # room, and no signal
        await asyncio.wait_for(waiting, 1.0)

    asyncio.run(run())


def test_another_scheduler_is_not_paced() -> None:
    class Redis:
        def __len__(self) -> int:
            return 10**6

    assert pacer_with(Redis()).queued() is None
    asyncio.run(asyncio.wait_for(pacer_with(Redis()).room(), 1.0))
    assert pacer_with(None).queued() is None  # no engine slot yet


def test_a_crawler_without_an_engine_yet_is_not_paced() -> None:
    pacer = StartPacer(get_crawler())  # its engine is set when the crawl starts
    assert pacer.queued() is None
    asyncio.run(asyncio.wait_for(pacer.room(), 1.0))
