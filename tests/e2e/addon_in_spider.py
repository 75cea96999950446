"""A project that enables changewatch in its spider's ``custom_settings``, not in ``ADDONS``: the
add-on's process settings never run, so the process starts with Scrapy's own resolver, and the
SSRF guard's middleware puts the guarded one in front of it at the first request (the SSRF
world's "fallback" crawl). Settings module and spider module at once."""

from typing import Any, ClassVar

from changewatch.settings import *  # noqa: F403
from changewatch.spiders.watch import WatchSpider

ADDONS: dict[str, int] = {}
SPIDER_MODULES = ["tests.e2e.addon_in_spider"]


class WatchWithTheAddon(WatchSpider):
    custom_settings: ClassVar[dict[str, Any]] = {"ADDONS": {"changewatch.Addon": 0}}
