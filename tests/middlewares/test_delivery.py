"""RedeliveryMiddleware on its own, with a real crawler and its signals."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import scrapy
from scrapy import signals
from scrapy.utils.test import get_crawler

from changewatch.middlewares.delivery import RedeliveryMiddleware


class UnitSpider(scrapy.Spider):
    name = "unit"


@dataclasses.dataclass
class ChangeItem:
    key: str
    kind: str
    change_id: int


class ScrapyChange(scrapy.Item):
    key = scrapy.Field()
    kind = scrapy.Field()
    change_id = scrapy.Field()


@pytest.mark.parametrize("item", [{"key": "k", "kind": "field", "change_id": 7}, ChangeItem("k", "field", 7),
                                  ScrapyChange(key="k", kind="field", change_id=7)], ids=["dict", "dataclass", "item"])
def test_an_exported_change_of_any_item_kind_is_confirmed(item: Any) -> None:
    """A subclass's ``exported`` hook, or a pipeline after ours, may turn a record into the
    project's own item class: it is still the change it carries, confirmed once its feeds
    close (else the next run would export it again)."""
    crawler = get_crawler(UnitSpider, {"ADDONS": {"changewatch.Addon": 0}})
    mw = RedeliveryMiddleware.from_crawler(crawler)
    crawler.signals.send_catch_log(signal=signals.item_scraped, item=item, response=None, spider=None)
    crawler.signals.send_catch_log(signal=signals.item_scraped, item={"title": "not a change"}, response=None,
                                   spider=None)
    assert mw.ids == [7]
