"""A fixed vantage point: the same proxy, language, cookies and headers on every run, so that the
only thing that differs between two observations is time (not the country a rotating proxy
landed in, nor the language a site guessed).

Per request: ``meta["changewatch_vantage"]`` (a mapping or a :class:`Vantage`; ``None`` opts out).
Per spider or project: the ``CHANGEWATCH_VANTAGE`` setting (``custom_settings`` for one spider).
Per watch: the watchlist options ``proxy``, ``headers``, ``cookies``, ``accept_language``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Request

from .. import meta
from ..config import SETTINGS_BY_NAME, ChangewatchConfig, VantageError, said_at_start
from ..config.structured import json_mapping
from ..runtime.stats import Stats

__all__ = ["ACCEPT_LANGUAGE_PATTERN", "COOKIE_VALUE_FORBIDDEN", "HEADER_VALUE_FORBIDDEN", "NAME_FORBIDDEN",
           "PROXY_PATTERN", "VANTAGE_OPTIONS", "Vantage", "VantageError", "VantageMiddleware",
           "parse_vantage", "vantage_from_setting"]

VANTAGE_OPTIONS = ("proxy", "headers", "cookies", "accept_language")

_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # RFC 9110 field and cookie names
_LANGUAGE = re.compile(r"^\s*(?:[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*|\*)(?:\s*;\s*q=[01](?:\.\d{0,3})?)?"
                       r"(?:\s*,\s*(?:[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*|\*)(?:\s*;\s*q=[01](?:\.\d{0,3})?)?)*\s*$")
#: what an Accept-Language value looks like, also in the watchlist's JSON Schema (ECMA-262 compatible)
ACCEPT_LANGUAGE_PATTERN = _LANGUAGE.pattern
_UNSAFE = re.compile(r"[\x00-\x1f\x7f]")
#: a character not allowed in a header or cookie name, in a header value, in a cookie value: the
#: watchlist's JSON Schema says "not" these (a pattern that is searched, so no "$", which Python's
#: re lets match before a final newline); ECMA-262 unicode mode compatible (no \" escape)
NAME_FORBIDDEN = r"[^!#$%&'*+.^_`|~0-9A-Za-z-]"
HEADER_VALUE_FORBIDDEN = _UNSAFE.pattern
COOKIE_VALUE_FORBIDDEN = r'[\x00-\x20\x7f";,\\]'
_COOKIE_UNSAFE = re.compile(COOKIE_VALUE_FORBIDDEN)
#: an http(s) proxy URL with a host (a name, or an address in brackets) and at most a port 0-65535
#: (ECMA-262 compatible; the scheme in any case, as urlsplit reads it)
PROXY_PATTERN = (r"^\s*[hH][tT][tT][pP][sS]?://(?:[^\s/?#\[\]]*@)?(?:\[[^\s/?#@\[\]]+\]|[^\s/?#@:\[\]]+)"
                 r"(?::0*(?:[0-5]?[0-9]{0,4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?"
                 r"(?:[/?#]\S*)?\s*$")
_PROXY = re.compile(PROXY_PATTERN)


@dataclass(frozen=True, slots=True)
class Vantage:
    proxy: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    cookies: tuple[tuple[str, str], ...] = ()
    accept_language: str | None = None

    def __bool__(self) -> bool:
        return bool(self.proxy or self.headers or self.cookies or self.accept_language)

    def over(self, base: Vantage) -> Vantage:
        """This vantage, with what it leaves unset taken from *base* (the project's)."""
        return Vantage(self.proxy or base.proxy, tuple({**dict(base.headers), **dict(self.headers)}.items()),
                       tuple({**dict(base.cookies), **dict(self.cookies)}.items()),
                       self.accept_language or base.accept_language)

    def apply(self, request: Request, *, cookie_header: bool = False) -> None:
        """Pin *request* to this vantage point. Values the request sets itself win: a spider
        that asks for another language on one request gets it."""
        headers = dict(self.headers)
        if self.accept_language:
            headers.setdefault("Accept-Language", self.accept_language)
        for name, value in headers.items():
            request.headers.setdefault(name, value)
        if self.cookies:
            if cookie_header:  # COOKIES_ENABLED is off: nothing would send request.cookies
                request.headers.setdefault("Cookie", "; ".join(f"{k}={v}" for k, v in self.cookies))
            elif isinstance(request.cookies, dict):
                for name, value in self.cookies:
                    request.cookies.setdefault(name, value)
            else:
                present = {c.get("name") for c in request.cookies}
                request.cookies.extend({"name": k, "value": v} for k, v in self.cookies if k not in present)
        if self.proxy:
            request.meta.setdefault("proxy", self.proxy)


def _pairs(value: Any, what: str, check_value: re.Pattern[str]) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be a mapping of name: value, not {value!r}")
    pairs = []
    for name, raw in value.items():
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):  # match: "X-A\n" would pass
            raise ValueError(f"{what}: {name!r} is not a valid name")
        if isinstance(raw, bool) or not isinstance(raw, str | int | float):
            raise ValueError(f"{what}.{name} must be a string, not {raw!r}")
        text = str(raw)
        if check_value.search(text):
            # not quoted: a header or cookie value may be a credential
            raise ValueError(f"{what}.{name} contains characters not allowed there")
        pairs.append((name, text))
    return tuple(pairs)


def _proxy(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"proxy must be a URL such as http://user:pass@proxy.example:8080, not {value!r}")
    parts = urlsplit(value.strip())
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ValueError(f"proxy {value!r} has an invalid port") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or not _PROXY.match(value):
        raise ValueError(f"proxy must be an http:// or https:// URL with a host, not {value!r}")
    return value.strip()


def parse_vantage(raw: Mapping[str, Any]) -> Vantage:
    """A :class:`Vantage` from the vantage options in *raw* (other keys are ignored); raise
    ValueError naming the option that is wrong."""
    if not isinstance(raw, Mapping):
        raise ValueError(f"a vantage is a mapping with {', '.join(VANTAGE_OPTIONS)}, not {raw!r}")
    proxy = _proxy(raw["proxy"]) if raw.get("proxy") is not None else None
    headers = _pairs(raw["headers"], "headers", _UNSAFE) if raw.get("headers") is not None else ()
    cookies = _pairs(raw["cookies"], "cookies", _COOKIE_UNSAFE) \
        if raw.get("cookies") is not None else ()
    language = raw.get("accept_language")
    if language is not None and (not isinstance(language, str) or not _LANGUAGE.match(language)):
        raise ValueError(f"accept_language must be an Accept-Language value such as 'de-DE,de;q=0.9', "
                         f"not {language!r}")
    return Vantage(proxy, headers, cookies, language.strip() if language else None)


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
            vantage.apply(request, cookie_header=self.cookie_header)
            self.stats.inc("applied")
