"""What the middleware tests share: the downloader middlewares a crawler with the add-on enables."""

from __future__ import annotations

from typing import Any

import scrapy
from scrapy.utils.conf import build_component_list
from scrapy.utils.test import get_crawler


class UnitSpider(scrapy.Spider):
    name = "unit"


def downloader_middlewares(settings: dict[str, Any]) -> list[str]:
    """The downloader middlewares, in order, of a crawler with the add-on and *settings*."""
    crawler = get_crawler(UnitSpider, {"ADDONS": {"changewatch.Addon": 0}, **settings})
    return [str(c) for c in build_component_list(crawler.settings.getwithbase("DOWNLOADER_MIDDLEWARES"))]
