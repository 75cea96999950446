"""ConditionalRequestMiddleware on its own, with a real crawler and a real SQLite store: the
branches a crawl of our test servers does not reach."""

from __future__ import annotations

import asyncio
from pathlib import Path

import scrapy
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from changewatch.core.comparisons import Kind, load_comparisons
from changewatch.core.comparisons.fields import FieldsPart
from changewatch.core.observation import utc_now
from changewatch.core.snapshot import Snapshot
from changewatch.core.validators import HttpValidators
from changewatch.middlewares.conditional import ConditionalRequestMiddleware, ConditionalSpiderMiddleware
from changewatch.store import Outcome

URL = "https://s.example/p"
OTHER = "https://s.example/moved"


class UnitSpider(scrapy.Spider):
    name = "unit"


def middleware(tmp_path: Path) -> ConditionalRequestMiddleware:
    crawler = get_crawler(UnitSpider, {"ADDONS": {"changewatch.Addon": 0},
                                       "CHANGEWATCH_STORE": f"sqlite:///{tmp_path / 'state.db'}"})
    crawler.spider = crawler._create_spider()
    return ConditionalRequestMiddleware.from_crawler(crawler)


def seed(mw: ConditionalRequestMiddleware, url: str, etag: str) -> None:
    snapshot = Snapshot({"fields": FieldsPart({"a": 1}, {"a": "1"})}).encode(load_comparisons())
    state = mw.runner.store.read("unit", url)
    outcome = Outcome(Kind.BASELINE, url, utc_now(), snapshot=snapshot, http=HttpValidators(url=url, key="", etag=etag))
    mw.runner.store.commit("unit", url, state.version if state else None, outcome)


def headers_sent(tmp_path: Path, *requests: Request) -> list[bytes | None]:
    async def run() -> list[bytes | None]:
        mw = middleware(tmp_path)
        await mw.runtime.open()
        try:
            seed(mw, URL, '"p1"')
            seed(mw, OTHER, '"m1"')
            sent = []
            for request in requests:
                await mw.process_request(request)
                sent.append(request.headers.get(b"If-None-Match"))
            return sent
        finally:
            await mw.runtime._engine_stopped()
    return asyncio.run(run())


def test_only_plain_get_and_head_requests_are_conditional(tmp_path: Path) -> None:
    sent = headers_sent(tmp_path, Request(URL), Request(URL, method="HEAD"), Request(URL, method="POST"),
                        Request(URL, meta={"playwright": True}), Request(URL, meta={"changewatch_conditional": False}),
                        Request(URL, headers={"If-None-Match": '"mine"'}))
    assert sent == [b'"p1"', b'"p1"', None, None, None, b'"mine"']  # the spider's own validators are kept


def test_validators_copied_by_a_redirect_are_replaced_by_the_targets(tmp_path: Path) -> None:
    first = Request(URL)
    assert headers_sent(tmp_path, first) == [b'"p1"']
    # RedirectMiddleware builds the next request by copying this one's headers and meta
    moved, unknown = first.replace(url=OTHER), first.replace(url="https://s.example/never-seen")
    assert headers_sent(tmp_path, moved, unknown) == [b'"m1"', None]


def test_a_store_that_cannot_forget_validators_stops_the_crawl(tmp_path: Path) -> None:
    """Forgetting the validators of keys a page no longer yields is a write like any other: a
    store that cannot take it stops the crawl, it is not dropped in a background task."""
    async def run() -> str | None:
        crawler = get_crawler(UnitSpider, {"ADDONS": {"changewatch.Addon": 0},
                                           "CHANGEWATCH_STORE": f"sqlite:///{tmp_path / 'state.db'}"})
        crawler.spider = crawler._create_spider()
        mw = ConditionalSpiderMiddleware.from_crawler(crawler)
        await mw.runtime.open()
        try:
            mw.runner.store.db.execute("PRAGMA query_only=1")  # every write fails, as on a read-only file
            response = HtmlResponse(URL, body=b"<p>x</p>", request=Request(URL))
            list(mw.process_spider_output(response, [{"key": "a", "url": URL, "fields": {"a": 1}}]))
            await mw._closed()
            return mw.runtime.failure
        finally:
            await mw.runtime._engine_stopped()

    failure = asyncio.run(run())
    assert failure is not None and "cannot be written (forget validators)" in failure
