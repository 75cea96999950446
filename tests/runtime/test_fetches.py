"""``FetchOutcomes``: why a crawl none of whose requests reached the spider failed, in one line;
nothing to say when nothing was requested, or when a response reached a callback."""

from __future__ import annotations

from scrapy import Request
from scrapy.http.request import NO_CALLBACK

from changewatch.render.fetch import subrequest
from changewatch.runtime.fetches import FetchOutcomes


def test_nothing_requested_is_nothing_to_say() -> None:
    assert FetchOutcomes().nothing_reached() is None


def test_failures_are_counted_by_reason_most_common_first() -> None:
    fetches = FetchOutcomes()
    for url in ("https://a.example/1", "https://a.example/2"):
        fetches.failed(Request(url), "robots: the site's robots.txt disallows this URL (ROBOTSTXT_OBEY)")
    fetches.failed(Request("https://b.example/"), "dns: the host name b.example does not resolve")
    fetches.failed(Request("https://a.example/1"), "robots: the site's robots.txt disallows this URL (ROBOTSTXT_OBEY)")
    assert fetches.nothing_reached() == ("all 4 request(s) failed, none reached the spider: robots: the site's "
                                         "robots.txt disallows this URL (ROBOTSTXT_OBEY) (3 requests); dns: the host "
                                         "name b.example does not resolve (1 request)")


def test_one_response_that_reached_the_spider_is_enough() -> None:
    fetches = FetchOutcomes()
    fetches.failed(Request("https://a.example/"), "blocked: HTTP 403: the server refused the request (Forbidden)")
    fetches.reached_spider()
    assert fetches.nothing_reached() is None


def test_requests_that_are_not_the_spiders_do_not_count() -> None:
    fetches = FetchOutcomes()
    fetches.failed(Request("https://a.example/robots.txt", callback=NO_CALLBACK), "dns: …")
    fetches.failed(subrequest("https://a.example/app.js"), "timeout: …")  # a render's resource
    assert fetches.nothing_reached() is None


def test_the_line_names_five_reasons_and_counts_the_others() -> None:
    fetches = FetchOutcomes()
    for i in range(7):
        fetches.failed(Request(f"https://h{i}.example/"), f"dns: the host name h{i}.example does not resolve")
    line = fetches.nothing_reached()
    assert line is not None and line.startswith("all 7 request(s) failed, none reached the spider: dns: the host "
                                                "name h0.example does not resolve (1 request); ")
    assert line.count("does not resolve (1 request)") == 5 and line.endswith("; and 2 other reason(s)"), line
