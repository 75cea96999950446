"""The safety defaults ``changewatch.Addon`` brings to any project (settings.md, "Safety
defaults"): what makes a monitor safe to point at the internet, and what the figures README
gives were measured with. Set at "addon" priority, so the project's settings, ``-s`` and a
spider's ``custom_settings`` win; nothing else (log levels, feeds, unrelated components) is
touched. ``changewatch.settings`` gets them from the add-on too: this is their one definition."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from scrapy.settings import BaseSettings

from .. import __version__
from ..config import GUARDED_RESOLVER, SETTINGS_BY_NAME, ConfigError

__all__ = ["HOME", "SAFETY_DEFAULTS", "apply_safety_defaults", "user_agent"]

HOME = "https://github.com/changewatch/changewatch"
_MB = 1024 * 1024


def user_agent(contact: str | None = None) -> str:
    """Who fetches, where to read about it, and how to reach whoever runs it (CHANGEWATCH_CONTACT).

    >>> user_agent("ops@shop.example").endswith("(+https://github.com/changewatch/changewatch; ops@shop.example)")
    True
    """
    return f"changewatch/{__version__} (+{HOME}" + (f"; {contact})" if contact else ")")


SAFETY_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    # say who we are, and obey robots.txt (README: "robots.txt and an honest User-Agent by default")
    "USER_AGENT": user_agent(),
    "ROBOTSTXT_OBEY": True,
    # never hang: a page that does not answer is an error record after 30 s and two retries (Scrapy's
    # 180 s held a crawl for nine minutes with one hanging page)
    "DOWNLOAD_TIMEOUT": 30,
    "RETRY_TIMES": 2,
    # a 429 asks us to come back later: the next scheduled run is later, an immediate retry is not
    "RETRY_HTTP_CODES": [500, 502, 503, 504, 522, 524, 408],
    "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
    # a larger page is an error record, not a memory spike, and never a baseline (Scrapy's: 1 GiB)
    "DOWNLOAD_MAXSIZE": 10 * _MB,
    "DOWNLOAD_WARNSIZE": 5 * _MB,
    # the SSRF guard checks every DNS answer in its own resolver (docs/security.md); process-wide
    "TWISTED_DNS_RESOLVER": GUARDED_RESOLVER,
    # no code-executing control server, no telnet console
    "REMOTE_CONTROL_ENABLED": False,
    "TELNETCONSOLE_ENABLED": False,
    # One response yields one observation (or a few); Scrapy starts CONCURRENT_ITEMS tasks for every
    # response's output whatever it holds (scrapy#5182): 39 µs a response with 4, 375 with Scrapy's
    # 100. The throughput README gives (docs/performance.md) was measured with 4.
    "CONCURRENT_ITEMS": 4,
})


def apply_safety_defaults(settings: BaseSettings) -> None:
    """Set every safety default at "addon" priority: a name the project (or ``-s``, or a spider)
    set already keeps its value. The User-Agent names CHANGEWATCH_CONTACT when it is set; a bad
    contact is left out here (no error can be said this early) and stops the crawl at its start,
    in one line, like every bad setting."""
    for name, value in SAFETY_DEFAULTS.items():
        settings.set(name, list(value) if isinstance(value, list) else value, "addon")
    try:
        contact = SETTINGS_BY_NAME["CHANGEWATCH_CONTACT"].read(settings)
    except ConfigError:
        contact = None
    if contact:
        settings.set("USER_AGENT", user_agent(contact), "addon")
