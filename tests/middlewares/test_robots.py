"""robots.txt obeyed by every request of a host that waited for it, not only the first; in
Scrapy's place in the chain. The crawl through a real server: tests/e2e/test_good_citizen.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as ScrapyRobotsTxtMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Request
from scrapy.robotstxt import ProtegoRobotParser
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred

from changewatch.middlewares.robots import RobotsTxtMiddleware

from ._support import UnitSpider, downloader_middlewares

SCRAPY_MW = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
OURS = "changewatch.middlewares.RobotsTxtMiddleware"
ROBOTS_TXT = b"User-agent: *\nDisallow: /private\n"


def test_the_addon_puts_it_in_scrapys_place() -> None:
    enabled = downloader_middlewares({})
    assert OURS in enabled and SCRAPY_MW not in enabled
    crawler = get_crawler(UnitSpider, {"ADDONS": {"changewatch.Addon": 0}})
    assert crawler.settings.getwithbase("DOWNLOADER_MIDDLEWARES")[OURS] == 100  # Scrapy's


@pytest.mark.parametrize("priority", [None, 100])
def test_a_project_that_names_scrapys_keeps_its_choice(priority: int | None) -> None:
    enabled = downloader_middlewares({"DOWNLOADER_MIDDLEWARES": {SCRAPY_MW: priority}})
    assert OURS not in enabled
    assert (SCRAPY_MW in enabled) == (priority is not None)


def waiters_outcomes(cls: type[ScrapyRobotsTxtMiddleware], count: int) -> list[str]:
    """What becomes of *count* requests for disallowed pages of one host that arrive while its
    robots.txt is on its way (as the first request's download leaves it: a Deferred in the
    middleware's table), once it arrives: 'refused' or 'let through'."""
    crawler = get_crawler(UnitSpider, {"ROBOTSTXT_OBEY": True})
    middleware = cls.from_crawler(crawler)
    on_its_way: Deferred[Any] = Deferred()
    middleware._parsers["s.example"] = on_its_way

    async def outcome(request: Request) -> str:
        try:
            await middleware.process_request(request)
        except IgnoreRequest:
            return "refused"
        return "let through"

    async def arrive() -> list[str]:
        waiting = [asyncio.ensure_future(outcome(Request(f"https://s.example/private/{i}"))) for i in range(count)]
        await asyncio.sleep(0)  # every request is waiting now
        parser = ProtegoRobotParser.from_crawler(crawler, ROBOTS_TXT)
        middleware._parsers["s.example"] = parser  # what Scrapy's download does once it is parsed
        on_its_way.callback(parser)
        return await asyncio.gather(*waiting)

    return asyncio.run(arrive())


def test_every_request_that_waited_for_robots_txt_is_judged_by_it() -> None:
    assert waiters_outcomes(RobotsTxtMiddleware, 4) == ["refused"] * 4


def test_scrapys_own_judges_only_the_first_that_waited() -> None:
    """Why the stand-in exists: when this fails, Scrapy's own obeys robots.txt for every waiter
    and changewatch's may go."""
    assert waiters_outcomes(ScrapyRobotsTxtMiddleware, 4) == ["refused"] + ["let through"] * 3


def test_a_cancelled_waiter_does_not_keep_the_rules_from_the_others() -> None:
    crawler = get_crawler(UnitSpider, {"ROBOTSTXT_OBEY": True})
    middleware = RobotsTxtMiddleware.from_crawler(crawler)
    on_its_way: Deferred[Any] = Deferred()
    middleware._parsers["s.example"] = on_its_way

    async def arrive() -> list[object]:
        first, second = (asyncio.ensure_future(middleware.robot_parser(Request(f"https://s.example/{i}")))
                         for i in range(2))
        await asyncio.sleep(0)
        first.cancel()  # its request was given up (the crawl is closing, a timeout)
        await asyncio.sleep(0)
        parser = ProtegoRobotParser.from_crawler(crawler, ROBOTS_TXT)
        on_its_way.callback(parser)
        return [first.cancelled(), await asyncio.wait_for(second, 5) is parser]

    assert asyncio.run(arrive()) == [True, True]
