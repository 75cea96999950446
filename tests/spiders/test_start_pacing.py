"""The watch spider's start pacing (changewatch/spiders/pacing.py): start requests are given while
Scrapy's scheduler holds fewer than the high mark, then wait until the downloader has taken it
down to the low mark; any other scheduler is not paced."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from scrapy.core.scheduler import Scheduler
from scrapy.utils.test import get_crawler

from changewatch.spiders import pacing
from changewatch.spiders.pacing import StartPacer, watermarks


class Queue(Scheduler):
    """Scrapy's scheduler class, holding what the test says."""

    def __init__(self, held: int):  # no queues: only its length is asked
        self.held = held

    def __len__(self) -> int:
        return self.held


class Engine:
    def __init__(self, scheduler: Any):
        self.scheduler = scheduler


def pacer_with(scheduler: Any, concurrent: int = 16) -> StartPacer:
    crawler = get_crawler(settings_dict={"CONCURRENT_REQUESTS": concurrent})
    crawler.engine = Engine(scheduler)  # type: ignore[assignment]
    return StartPacer(crawler)


def test_the_marks_follow_the_concurrency() -> None:
    assert watermarks(get_crawler(settings_dict={"CONCURRENT_REQUESTS": 100})) == (800, 3200)
    assert watermarks(get_crawler(settings_dict={"CONCURRENT_REQUESTS": 4})) == (128, 512)


def test_requests_are_given_up_to_the_high_mark_then_wait_for_the_low_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pacing, "POLL", 0.005)
    queue = Queue(0)
    pacer = pacer_with(queue)
    low, high = pacer.low, pacer.high

    async def run() -> None:
        queue.held = high - 1
        await asyncio.wait_for(pacer.room(), 0.5)  # below the high mark: at once
        queue.held = high
        waiting = asyncio.ensure_future(pacer.room())
        await asyncio.sleep(0.03)
        assert not waiting.done()
        queue.held = low + 1  # taken down, not far enough
        await asyncio.sleep(0.03)
        assert not waiting.done()
        queue.held = low
        await asyncio.wait_for(waiting, 0.5)

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
