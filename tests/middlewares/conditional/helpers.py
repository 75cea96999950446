"""Test-only crawl components: a pipeline that kills the crawl before the commit, and a
listing spider that asks to see its 304s."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar

import scrapy
from itemadapter import ItemAdapter
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from changewatch import meta
from changewatch.items import Observation
from changewatch.middlewares.conditional import NotModified


class KillOnKey:
    """SIGKILLs the crawl when an item of key ``TESTS_KILL_KEY`` reaches it. At
    priority 780 that is the observation, after the download and before ChangewatchPipeline's
    transaction; at 800 it is the change record, committed and not yet exported."""

    def __init__(self, key: str):
        self.key = key

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> KillOnKey:
        key = crawler.settings.get("TESTS_KILL_KEY")
        if not key:
            raise NotConfigured("no TESTS_KILL_KEY")
        return cls(key)

    def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        if adapter.get("key") == self.key and not adapter.get("not_modified"):
            os.kill(os.getpid(), signal.SIGKILL)
        return item


class ListingSpider(scrapy.Spider):
    """A listing page and its items. On a 304 for the listing, re-visits the items the store
    knows from it, so that unchanged listings still have their children checked."""

    name = "cw_test_listing"
    handle_httpstatus_list: ClassVar[list[int]] = [304]

    def __init__(self, base: str = "", **kwargs: Any):
        super().__init__(**kwargs)
        self.base = base

    async def start(self) -> AsyncIterator[Any]:
        yield scrapy.Request(f"{self.base}/listing", callback=self.parse_listing, dont_filter=True)

    def parse_listing(self, response: Response) -> Iterator[Any]:
        if response.status == 304:
            notice: NotModified = response.meta[meta.NOT_MODIFIED]
            for state in notice.states.values():
                for url in state.snapshot.entities or {}:
                    yield scrapy.Request(url, callback=self.parse_item, dont_filter=True)
            return
        links = response.css("a.item::attr(href)").getall()
        yield {"key": "listing", "url": response.url,
               "entities": [{"key": response.urljoin(href), "fields": {}} for href in links]}
        for href in links:
            yield response.follow(href, callback=self.parse_item, dont_filter=True)

    def parse_item(self, response: Response) -> Iterator[Observation]:
        if response.status == 304:
            return  # the middleware adds the unchanged observation
        yield Observation(key=response.url, url=response.url, fields={"price": response.css("b::text").get()})


class KeysSpider(scrapy.Spider):
    """One page, several keys (``<li class="k" data-key=... data-v=...>``), parsed by a callback
    that takes ``cb_kwargs``, as real spiders' callbacks often do."""

    name = "cw_test_keys"

    def __init__(self, base: str = "", **kwargs: Any):
        super().__init__(**kwargs)
        self.base = base

    def request_meta(self) -> dict[str, Any]:
        return {}

    async def start(self) -> AsyncIterator[Any]:
        yield scrapy.Request(f"{self.base}/multi", callback=self.parse_keys, cb_kwargs={"label": "multi"},
                             meta=self.request_meta(), dont_filter=True)

    def parse_keys(self, response: Response, label: str) -> Iterator[Observation]:
        for li in response.css("li.k"):
            fields = {"v": li.attrib["data-v"], "label": label}
            yield Observation(key=li.attrib["data-key"], url=response.url, fields=fields)


class KeysSpiderAsking304ElsewhereOnly(KeysSpider):
    """Asks for 304s as a spider, but this request's own list (which HttpErrorMiddleware obeys
    first) does not have it: the 304 must be changewatch's to handle."""

    name = "cw_test_keys_404"
    handle_httpstatus_list: ClassVar[list[int]] = [304]

    def request_meta(self) -> dict[str, Any]:
        return {"handle_httpstatus_list": [404]}
