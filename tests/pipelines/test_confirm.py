"""The pipeline's confirmation of a candidate change, on a real crawler with a stand-in engine
(what ``engine.download_async`` answers is the test's); tests/e2e/test_confirm.py crawls."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import scrapy
from scrapy.crawler import Crawler
from scrapy.http import HtmlResponse, Request, Response
from scrapy.utils.test import get_crawler

from changewatch import Observation, meta
from changewatch.pipelines.confirm import confirmation_request
from tests.pipelines.test_pipelines import Chain as PipelineChain

URL = "https://shop.example/p/1"


class PriceSpider(scrapy.Spider):
    name = "prices"

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        yield Observation(key="k", url=response.url, fields={"price": response.css("p::text").get()})
        yield Observation(key="other", url=response.url, fields={"price": "1"})
        yield Request(response.urljoin("/next"))


class Engine:
    """Answers each download with the next of *answers*: a price, a status, or an exception."""

    def __init__(self, answers: list[Any]):
        self.answers = answers
        self.requests: list[Request] = []

    async def download_async(self, request: Request) -> Response:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, int):
            return HtmlResponse(request.url, status=answer, body=b"<h1>Too many requests</h1>", request=request)
        return HtmlResponse(request.url, body=f"<html><body><p>{answer}</p></body></html>".encode(),
                            request=request, encoding="utf-8")


class Chain(PipelineChain):
    """The comparison step with a stand-in engine answering its confirmations."""

    def __init__(self, crawler: Crawler, engine: Engine):
        crawler.engine = engine  # type: ignore[assignment]
        super().__init__(crawler)
        self.engine = engine

    def item(self, price: str, **request_meta: Any) -> Observation:
        item = Observation(key="k", url=URL, fields={"price": price})
        request = Request(URL, callback=self.crawler.spider.parse,  # type: ignore[union-attr]
                          headers={"If-None-Match": '"v1"'}, meta={meta.KEY: "k", **request_meta})
        self.runtime.requests.register(item, request)
        return item

    def stat(self, name: str) -> Any:
        assert self.crawler.stats is not None
        return self.crawler.stats.get_value(f"changewatch/confirm/{name}", 0)


@pytest.fixture
def make_chain(tmp_path: Path) -> Iterator[Any]:
    def make(answers: list[Any], **settings: Any) -> Chain:
        crawler = get_crawler(PriceSpider, {"ADDONS": {"changewatch.Addon": 0},
                                            "CHANGEWATCH_STORE": f"sqlite:///{tmp_path}/state.db",
                                            "CHANGEWATCH_WORKERS": 0, **settings})
        crawler.spider = PriceSpider.from_crawler(crawler)
        return Chain(crawler, Engine(answers))

    yield make


def _baseline(make_chain: Any, second: Any) -> None:
    """A crawl that makes key k's baseline of price 10, its second load answered *second*."""
    chain = make_chain([second])
    assert chain.run(chain.item("10")) == [None] and len(chain.engine.requests) == 1


def test_a_change_both_loads_show_is_reported_confirmed(make_chain: Any) -> None:
    _baseline(make_chain, "10")
    chain = make_chain(["12"])
    [out] = chain.run(chain.item("12"))
    assert out["kind"] == "field" and out["confirmed"] is True and out["changes"]["price"]["new"] == "12"
    [sent] = chain.engine.requests
    assert sent.dont_filter and sent.meta[meta.CONDITIONAL] is False and sent.meta[meta.CONFIRMATION] is True
    assert sent.meta[meta.SCHEDULE] is False and not sent.headers.get("If-None-Match")
    assert (chain.stat("sent"), chain.stat("held"), chain.stat("dropped"), chain.stat("failed")) == (1, 1, 0, 0)
    assert chain.stat("baseline") == 0  # the key had its baseline


def test_a_value_that_flips_between_loads_is_not_reported(make_chain: Any) -> None:
    _baseline(make_chain, "10")
    chain = make_chain(["14", "12"])
    assert chain.run(chain.item("12")) == [None] and chain.stat("dropped") == 1
    # at most one confirmation per key and run: another candidate of the key is reported unconfirmed
    again = chain.run(chain.item("12"))
    assert again[0]["confirmed"] is False and len(chain.engine.requests) == 1


@pytest.mark.parametrize("answer", [429, 503, TimeoutError("took too long")], ids=["429", "503", "timeout"])
def test_a_failed_confirmation_reports_the_candidate_unconfirmed(make_chain: Any, answer: Any) -> None:
    _baseline(make_chain, "10")
    chain = make_chain([answer])
    out = [None, *chain.run(chain.item("12"))]
    assert out[1]["kind"] == "field" and out[1]["confirmed"] is False
    assert out[1]["changes"]["price"]["new"] == "12"
    assert chain.stat("failed") == 1 and chain.stat("held") == 0


def test_not_confirmed_when_the_watch_or_the_setting_says_so(make_chain: Any) -> None:
    chain = make_chain([])
    out = chain.run(chain.item("10", **{meta.CONFIRM: False}), chain.item("12", **{meta.CONFIRM: False}))
    assert out[1]["kind"] == "field" and "confirmed" not in out[1] and chain.engine.requests == []
    off = make_chain([], CHANGEWATCH_CONFIRM_CHANGES=False)
    assert "confirmed" not in off.run(off.item("14"))[0] and off.engine.requests == []


def test_calibration_loads_and_confirmations_are_never_confirmed(make_chain: Any) -> None:
    _baseline(make_chain, "10")
    chain = make_chain([])
    out = [None, *chain.run(chain.item("12", **{meta.CONFIRMATION: True}))]
    assert "confirmed" not in out[1] and chain.engine.requests == []


def test_a_baseline_is_made_of_two_loads_and_kept_as_the_first_shows_it(make_chain: Any) -> None:
    """A key's first observation is loaded twice, silently; the first load is the baseline (the
    second teaches where the page's text varies: tests/core/test_confirm.py)."""
    chain = make_chain(["11"])
    assert chain.run(chain.item("10")) == [None]
    [sent] = chain.engine.requests
    assert sent.dont_filter and sent.meta[meta.CONFIRMATION] is True and not sent.headers.get("If-None-Match")
    assert (chain.stat("baseline"), chain.stat("sent")) == (1, 0)
    again = make_chain([])
    assert again.run(again.item("10")) == [None] and again.engine.requests == []  # as stored: no candidate
    assert again.stat("baseline") == 0  # once: the key has a baseline now


@pytest.mark.parametrize("answer", [429, TimeoutError("took too long"), "<h1>Access denied</h1>"],
                         ids=["429", "timeout", "block-page"])
def test_a_failed_second_load_of_a_baseline_keeps_the_first(make_chain: Any, answer: Any) -> None:
    _baseline(make_chain, answer)
    chain = make_chain(["12"])
    out = chain.run(chain.item("12"))  # judged against the first load: a change, confirmed
    assert out[0]["kind"] == "field" and out[0]["changes"]["price"]["old"] == "10" and out[0]["confirmed"] is True


def test_a_site_watchs_page_and_an_unconfirmed_watch_have_a_baseline_of_one_load(make_chain: Any,
                                                                                 tmp_path: Path) -> None:
    chain = make_chain([])
    page = chain.item("10")
    page.site_watch = "the-site"
    unconfirmed = Observation(key="k2", url=URL + "2", fields={"price": "3"}, options={"confirm": False})
    chain.runtime.requests.register(unconfirmed, Request(URL + "2", meta={meta.KEY: "k2"}))
    assert chain.run(page, unconfirmed) == [None, None] and chain.engine.requests == []
    off = make_chain([], CHANGEWATCH_CONFIRM_CHANGES=False, CHANGEWATCH_STORE=f"sqlite:///{tmp_path}/off.db")
    assert off.run(off.item("14")) == [None] and off.engine.requests == [] and off.stat("baseline") == 0


def test_the_confirmation_request_drops_the_first_loads_bookkeeping() -> None:
    request = Request(URL, headers={"If-Modified-Since": "x", "Accept-Language": "de"},
                      meta={meta.KEY: "k", meta.VANTAGE: {"accept_language": "de"}, "cookiejar": 2,
                            "download_latency": 1.0, "retry_times": 1, meta._SENT: object(), "playwright": True})
    again = confirmation_request(request)
    assert again.url == URL and again.dont_filter and again.headers.get("Accept-Language") == b"de"
    assert not again.headers.get("If-Modified-Since")
    assert again.meta[meta.VANTAGE] == {"accept_language": "de"} and again.meta["cookiejar"] == 2
    assert again.meta["playwright"] is True
    assert not {"download_latency", "retry_times", meta._SENT} & set(again.meta)


def test_a_moves_confirmation_starts_where_the_redirects_started() -> None:
    """A change is confirmed where the first load ended; a move from where its redirects started,
    to see where they lead this time (and the chain is the confirmation's own)."""
    landed = Request(f"{URL}/v1", meta={meta.KEY: "k", "redirect_urls": [URL], "redirect_reasons": [301]})
    assert confirmation_request(landed).url == f"{URL}/v1"
    again = confirmation_request(landed, from_start=True)
    assert again.url == URL and not {"redirect_urls", "redirect_reasons"} & set(again.meta)
    assert confirmation_request(Request(URL), from_start=True).url == URL
