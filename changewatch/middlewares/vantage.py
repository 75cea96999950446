"""A fixed vantage point: the same proxy, language, cookies and headers on every run, so that the
only thing that differs between two observations is time (not the country a rotating proxy
landed in, nor the language a site guessed).

Per request: ``meta["changewatch_vantage"]`` (a mapping or a :class:`Vantage`; ``None`` opts out).
Per spider or project: the ``CHANGEWATCH_VANTAGE`` setting (``custom_settings`` for one spider).
Per watch: the watchlist options ``proxy``, ``headers``, ``cookies``, ``accept_language``.
"""

from __future__ import annotations

from typing import Any, cast

from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Request

from .. import meta
from ..config import SETTINGS_BY_NAME, ChangewatchConfig, VantageError, said_at_start
from ..config.structured import json_mapping
from ..core.vantage import VANTAGE_OPTIONS, Vantage, parse_vantage
from ..runtime.stats import Stats

__all__ = ["VantageError", "VantageMiddleware", "apply_vantage", "vantage_from_setting"]


def apply_vantage(vantage: Vantage, request: Request, *, cookie_header: bool = False) -> None:
    """Pin *request* to *vantage*. Values the request sets itself win: a spider
    that asks for another language on one request gets it."""
    headers = dict(vantage.headers)
    if vantage.accept_language:
        headers.setdefault("Accept-Language", vantage.accept_language)
    for name, value in headers.items():
        request.headers.setdefault(name, value)
    if vantage.cookies:
        if cookie_header:  # COOKIES_ENABLED is off: nothing would send request.cookies
            request.headers.setdefault("Cookie", "; ".join(f"{k}={v}" for k, v in vantage.cookies))
        elif isinstance(request.cookies, dict):
            for name, value in vantage.cookies:
                request.cookies.setdefault(name, value)
        else:
            present = {c.get("name") for c in request.cookies}
            request.cookies.extend({"name": k, "value": v} for k, v in vantage.cookies if k not in present)
    if vantage.proxy:
        request.meta.setdefault("proxy", vantage.proxy)


def _setting_vantage(raw: Any) -> Vantage:
    value = json_mapping(raw)
    unknown = [k for k in value if k not in VANTAGE_OPTIONS]
    if unknown:
        raise ValueError(f"unknown option {unknown[0]!r}")
    return parse_vantage(value)


def vantage_from_setting(value: Any) -> Vantage:
    """A CHANGEWATCH_VANTAGE value (a mapping, or a JSON object in a string), in the one-line
    form of a bad setting; raises VantageError."""
    return cast("Vantage", SETTINGS_BY_NAME["CHANGEWATCH_VANTAGE"].refine({} if value is None else value,
                                                                         _setting_vantage))


class VantageMiddleware:
    """Applies the request's vantage (meta), else the spider's or project's (setting), to every
    request, robots.txt included. Runs before the header, cookie and proxy middlewares."""

    def __init__(self, default: Vantage, stats: Stats, cookie_header: bool):
        self.default = default
        self.stats = stats
        self.cookie_header = cookie_header

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> VantageMiddleware:
        ChangewatchConfig.from_settings(crawler.settings)
        with said_at_start():  # its raw value: a bad one is quoted as the user wrote it
            default = vantage_from_setting(SETTINGS_BY_NAME["CHANGEWATCH_VANTAGE"].raw(crawler.settings))
        return cls(default, Stats(crawler, "vantage"),
                   cookie_header=not crawler.settings.getbool("COOKIES_ENABLED", True))

    def process_request(self, request: Request) -> None:
        vantage = self.default
        if meta.VANTAGE in request.meta:
            value = request.meta[meta.VANTAGE]
            if value is None:  # opt-out
                return
            try:
                vantage = (value if isinstance(value, Vantage) else parse_vantage(value)).over(self.default)
            except (ValueError, TypeError) as exc:
                self.stats.inc("invalid")
                raise IgnoreRequest(f"vantage: {exc}") from None
        if vantage:
            apply_vantage(vantage, request, cookie_header=self.cookie_header)
            self.stats.inc("applied")
