"""A fixed vantage point: validated at load time, applied to every request, and it really
reaches the server (headers, cookies) or goes through the pinned proxy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import scrapy
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from changewatch.core.vantage import Vantage, parse_vantage
from changewatch.examples.site import FixtureSite
from changewatch.middlewares.vantage import VantageError, VantageMiddleware
from changewatch.watchlist import WatchlistError, parse_watchlist

from ..e2e.crawl import Crawler


class UnitSpider(scrapy.Spider):
    name = "unit"


def middleware(**settings: Any) -> VantageMiddleware:
    crawler = get_crawler(UnitSpider, settings)
    crawler.spider = UnitSpider.from_crawler(crawler)
    return build_from_crawler(VantageMiddleware, crawler)


def test_parse_and_merge() -> None:
    v = parse_vantage({"proxy": "http://user:pw@proxy.example:8080", "accept_language": "de-DE,de;q=0.9",
                       "cookies": {"consent": "yes", "n": 1}, "headers": {"X-Country": "DE"}, "url": "ignored"})
    assert v == Vantage("http://user:pw@proxy.example:8080", (("X-Country", "DE"),), (("consent", "yes"), ("n", "1")),
                        "de-DE,de;q=0.9")
    base = Vantage(proxy="http://p.example:1", accept_language="en", headers=(("X-A", "1"),))
    assert Vantage(accept_language="fr", headers=(("X-B", "2"),)).over(base) == Vantage(
        "http://p.example:1", (("X-A", "1"), ("X-B", "2")), (), "fr")
    assert not Vantage()


@pytest.mark.parametrize(("raw", "message"), [
    ({"proxy": "socks5://p.example:1080"}, "proxy must be an http:// or https:// URL"),
    ({"proxy": "http://p.example:port"}, "invalid port"),
    ({"proxy": ""}, "proxy must be a URL"),
    ({"headers": {"X Bad": "1"}}, "not a valid name"),
    ({"headers": {"X-Ok": "a\r\nInjected: 1"}}, "not allowed"),
    ({"headers": ["X-A: 1"]}, "headers must be a mapping"),
    ({"cookies": {"id": "a;b"}}, "not allowed"),
    ({"cookies": {"id": {"nested": 1}}}, "must be a string"),
    ({"accept_language": "de_DE!"}, "accept_language must be"),
    ({"accept_language": 3}, "accept_language must be"),
])
def test_invalid_vantage(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_vantage(raw)


def test_watchlist_validates_vantage_options_at_load_time() -> None:
    with pytest.raises(WatchlistError, match=r"w\.yaml: watch #1 \(k\): proxy must be"):
        parse_watchlist({"watches": [{"url": "https://a.example/", "key": "k", "proxy": "ftp://p"}]}, "w.yaml")
    [watch] = parse_watchlist({"defaults": {"accept_language": "de"},
                               "watches": [{"url": "https://a.example/", "cookies": {"c": "1"}}]})
    assert watch.vantage == Vantage(cookies=(("c", "1"),), accept_language="de")


def test_middleware_applies_the_project_default_and_request_meta() -> None:
    mw = middleware(CHANGEWATCH_VANTAGE={"accept_language": "en-GB", "headers": {"X-Site": "a"},
                                         "proxy": "http://proxy.example:3128"})
    plain = scrapy.Request("https://a.example/")
    mw.process_request(plain)
    assert plain.headers["Accept-Language"] == b"en-GB" and plain.headers["X-Site"] == b"a"
    assert plain.meta["proxy"] == "http://proxy.example:3128"

    own = scrapy.Request("https://a.example/", headers={"Accept-Language": "fr"},
                         meta={"changewatch_vantage": {"accept_language": "de", "cookies": {"c": "1"}}})
    mw.process_request(own)
    assert own.headers["Accept-Language"] == b"fr"  # what the request sets itself wins
    assert own.cookies == {"c": "1"} and own.meta["proxy"] == "http://proxy.example:3128"

    opted_out = scrapy.Request("https://a.example/", meta={"changewatch_vantage": None})
    mw.process_request(opted_out)
    assert "Accept-Language" not in opted_out.headers and "proxy" not in opted_out.meta

    with pytest.raises(IgnoreRequest, match="vantage: proxy must be"):
        mw.process_request(scrapy.Request("https://a.example/", meta={"changewatch_vantage": {"proxy": "x"}}))


def test_cookies_become_a_header_when_the_cookie_middleware_is_off() -> None:
    mw = middleware(COOKIES_ENABLED=False, CHANGEWATCH_VANTAGE={"cookies": {"a": "1", "b": "2"}})
    request = scrapy.Request("https://a.example/")
    mw.process_request(request)
    assert request.headers["Cookie"] == b"a=1; b=2"


@pytest.mark.parametrize("value", ['{"accept_language": "de"', {"colour": "red"}, {"proxy": "nope"}])
def test_bad_setting_fails_the_crawl(value: Any) -> None:
    with pytest.raises(VantageError, match="CHANGEWATCH_VANTAGE"):
        middleware(CHANGEWATCH_VANTAGE=value)


def test_json_setting_from_the_command_line() -> None:
    mw = middleware(CHANGEWATCH_VANTAGE='{"accept_language": "nl"}')
    assert mw.default == Vantage(accept_language="nl")


@pytest.mark.slow  # a crawl subprocess
def test_watch_vantage_reaches_the_server(catalogue: tuple[FixtureSite, str], tmp_path: Path) -> None:
    fixture, base = catalogue
    watches = [
        {"url": f"{base}/p/lmp-001.html", "key": "pinned", "jsonld": {"type": "Product", "fields": ["offers.price"]},
         "accept_language": "de-CH", "cookies": {"currency": "CHF", "consent": "1"},
         "headers": {"X-Client-Region": "CH"}},
        # a host that does not exist: reached only because the proxy is pinned (the fixture site answers as one)
        {"url": "http://shop.invalid/p/lmp-002.html", "key": "proxied", "proxy": base,
         "jsonld": {"type": "Product", "fields": ["offers.price"]}},
    ]
    result = Crawler(tmp_path, watches).run()
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.records == [] and result.stats["changewatch/commit/baseline"] == 2
    assert result.stats["changewatch/vantage/applied"] >= 2

    pinned = [h for path, h in fixture.requests if path == "/p/lmp-001.html"]
    assert pinned and pinned[0]["Accept-Language"] == "de-CH" and pinned[0]["X-Client-Region"] == "CH"
    assert sorted(pinned[0]["Cookie"].split("; ")) == ["consent=1", "currency=CHF"]
    assert any(path == "http://shop.invalid/p/lmp-002.html" for path, _ in fixture.requests)
    # the other watch's vantage did not leak into this one
    assert "Cookie" not in next(h for path, h in fixture.requests if path.endswith("lmp-002.html"))


@pytest.mark.slow  # crawl subprocesses
def test_a_proxy_on_a_private_address_is_refused_by_name_unless_allowed(catalogue: tuple[FixtureSite, str],
                                                                        tmp_path: Path) -> None:
    fixture, base = catalogue
    watch = {"url": "http://shop.invalid/p/lmp-002.html", "key": "proxied", "proxy": base,
             "jsonld": {"type": "Product", "fields": ["offers.price"]}}
    refused = Crawler(tmp_path, [watch], allow_private=False).run("-s", "ROBOTSTXT_OBEY=False")
    assert refused.returncode == 1, refused.stderr[-3000:]  # its one watch refused: not one page observed
    [record] = refused.records
    assert record["kind"] == "error" and record["error"].startswith("refused: loopback"), record
    assert not any(path.endswith("lmp-002.html") for path, _ in fixture.requests)
    allowed = Crawler(tmp_path, [watch], allow_private=False).run(
        "-s", "ROBOTSTXT_OBEY=False", "-s", "CHANGEWATCH_SSRF_ALLOWED_HOSTS=127.0.0.1")
    # the first good observation after the refusal: a baseline that closes the failure streak
    assert allowed.stats["changewatch/commit/recovered"] == 1, allowed.records
    assert [r["kind"] for r in allowed.records] == ["recovered"]
