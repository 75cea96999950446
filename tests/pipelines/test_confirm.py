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
        yield Observation(key="page", url=response.url, html=response.text)
        yield Observation(key="page2", url=response.url, html=response.text.replace("<p>", "<p>Also: "))
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

    def page(self, text: str, url: str = URL, **options: Any) -> Observation:
        """The observation of a page's text (key "page"), as the spider makes it of *text*."""
        item = Observation(key="page", url=url, html=f"<html><body><p>{text}</p></body></html>", options=options)
        self.runtime.requests.register(item, Request(url, callback=self.crawler.spider.parse,  # type: ignore[union-attr]
                                                     meta={meta.KEY: "page"}))
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


def test_a_change_both_loads_show_is_reported_confirmed(make_chain: Any) -> None:
    chain = make_chain(["12"])
    out = chain.run(chain.item("10"), chain.item("12"))
    assert out[0] is None and out[1]["kind"] == "field" and out[1]["confirmed"] is True
    assert out[1]["changes"]["price"]["new"] == "12"
    [sent] = chain.engine.requests
    assert sent.dont_filter and sent.meta[meta.CONDITIONAL] is False and sent.meta[meta.CONFIRMATION] is True
    assert sent.meta[meta.SCHEDULE] is False and not sent.headers.get("If-None-Match")
    assert (chain.stat("sent"), chain.stat("held"), chain.stat("dropped"), chain.stat("failed")) == (1, 1, 0, 0)


def test_a_value_that_flips_between_loads_is_not_reported(make_chain: Any) -> None:
    chain = make_chain(["14", "12"])
    out = chain.run(chain.item("10"), chain.item("12"))
    assert out == [None, None] and chain.stat("dropped") == 1
    # at most one confirmation per key and run: another candidate of the key is reported unconfirmed
    again = chain.run(chain.item("12"))
    assert again[0]["confirmed"] is False and len(chain.engine.requests) == 1


@pytest.mark.parametrize("answer", [429, 503, TimeoutError("took too long")], ids=["429", "503", "timeout"])
def test_a_failed_confirmation_reports_the_candidate_unconfirmed(make_chain: Any, answer: Any) -> None:
    chain = make_chain([answer])
    out = chain.run(chain.item("10"), chain.item("12"))
    assert out[1]["kind"] == "field" and out[1]["confirmed"] is False
    assert out[1]["changes"]["price"]["new"] == "12"
    assert chain.stat("failed") == 1 and chain.stat("held") == 0


def test_not_confirmed_when_the_watch_or_the_setting_says_so(make_chain: Any) -> None:
    chain = make_chain([])
    out = chain.run(chain.item("10"), chain.item("12", **{meta.CONFIRM: False}))
    assert out[1]["kind"] == "field" and "confirmed" not in out[1] and chain.engine.requests == []
    off = make_chain([], CHANGEWATCH_CONFIRM_CHANGES=False)
    assert "confirmed" not in off.run(off.item("14"))[0] and off.engine.requests == []


def test_calibration_loads_and_confirmations_are_never_confirmed(make_chain: Any) -> None:
    chain = make_chain([])
    out = chain.run(chain.item("10"), chain.item("12", **{meta.CONFIRMATION: True}))
    assert "confirmed" not in out[1] and chain.engine.requests == []


def test_a_pages_baseline_is_made_of_two_loads_and_kept_as_the_first_shows_it(make_chain: Any) -> None:
    """A key's first observation of a page's text is loaded twice, silently; the first load is the
    baseline (the second teaches where its text varies: tests/core/test_confirm.py)."""
    chain = make_chain(["Doors open at 19:30, in the east hall of the town museum."])
    assert chain.run(chain.page("Doors open at 19:00, in the east hall of the town museum.")) == [None]
    [sent] = chain.engine.requests
    assert sent.dont_filter and sent.meta[meta.CONFIRMATION] is True
    assert (chain.stat("baseline"), chain.stat("sent")) == (1, 0)
    again = make_chain([])
    assert again.run(again.page("Doors open at 19:00, in the east hall of the town museum.")) == [None]
    assert again.engine.requests == [] and again.stat("baseline") == 0  # as stored: no candidate, no second load
    # the second load's text, still there a run later: an edit that landed between the two loads
    late = make_chain(["Doors open at 19:30, in the east hall of the town museum."])
    [record] = late.run(late.page("Doors open at 19:30, in the east hall of the town museum."))
    assert record["kind"] == "content" and "19:00" in record["diff"] and "19:30" in record["diff"]


@pytest.mark.parametrize("answer", [429, TimeoutError("took too long"),
                                    "Access denied. Please complete the captcha to continue."],
                         ids=["429", "timeout", "block-page"])
def test_a_failed_second_load_of_a_baseline_keeps_the_first(make_chain: Any, answer: Any) -> None:
    chain = make_chain([answer])
    assert chain.run(chain.page("The library opens on Tuesday at nine in the morning.")) == [None]
    assert chain.stat("baseline") == 1
    again = make_chain([])
    assert again.run(again.page("The library opens on Tuesday at nine in the morning.")) == [None]
    assert again.engine.requests == []  # the first load is the baseline: the same page is no candidate


def test_fields_a_site_watchs_page_and_an_unconfirmed_watch_have_a_baseline_of_one_load(make_chain: Any,
                                                                                        tmp_path: Path) -> None:
    chain = make_chain([])
    page = chain.page("A page of a site watch.")
    page.site_watch = "the-site"
    unconfirmed = chain.page("A page that must not be requested twice.", url=URL + "2", confirm=False)
    unconfirmed.key = "page2"
    # fields alone: a second load would teach nothing (what varies is learned of a page's text)
    assert chain.run(chain.item("10"), page, unconfirmed) == [None, None, None] and chain.engine.requests == []
    off = make_chain([], CHANGEWATCH_CONFIRM_CHANGES=False, CHANGEWATCH_STORE=f"sqlite:///{tmp_path}/off.db")
    assert off.run(off.page("Confirmation is off.")) == [None] and off.engine.requests == []
    assert off.stat("baseline") == 0


def test_a_json_document_read_as_text_has_a_baseline_of_two_loads(make_chain: Any, tmp_path: Path) -> None:
    """A JSON document without paths is compared as its canonical text (one value a line): its
    first observation is loaded twice as a page's is; one read by paths is fields, loaded once."""
    body = b'{"title": "Opening hours", "trending": ["Tram delays", "Bridge works"]}'
    chain = make_chain([f'{{"title": "Opening hours", "trending": ["Ferry {n}"]}}' for n in range(2)])
    items = []
    for key, spec in (("as-text", None), ("by-paths", {"fields": ["title"]})):
        options = {"content_type": "json", **({"json": spec} if spec else {})}
        item = Observation(key=key, url=f"{URL}.json?{key}", body=body, options=options)
        chain.runtime.requests.register(item, Request(item.url, callback=chain.crawler.spider.parse))  # type: ignore[union-attr]
        items.append(item)
    assert chain.run(*items) == [None, None]
    [sent] = chain.engine.requests
    assert sent.url == f"{URL}.json?as-text" and chain.stat("baseline") == 1


def test_the_keys_of_one_response_share_one_second_load(make_chain: Any) -> None:
    chain = make_chain(["The pool opens at ten, and closes at six on weekdays."])
    one = chain.page("The pool opens at nine, and closes at six on weekdays.")
    two = Observation(key="page2", url=URL, html="<html><body><p>Also: The pool opens at nine.</p></body></html>")
    answered = chain.runtime.requests.take(one)  # one response's two items: the same request
    chain.runtime.requests.register(one, answered)
    chain.runtime.requests.register(two, answered)
    assert chain.run(one, two) == [None, None]
    assert len(chain.engine.requests) == 1 and (chain.stat("baseline"), chain.stat("shared")) == (2, 1)
    # a later response of the same page is another first load: its second load is its own
    later = make_chain(["x"])
    again = later.page("Closed for the holidays.", url=URL + "?again")
    assert later.run(again) == [None] and len(later.engine.requests) == 1


def _hall(response: Response) -> Iterator[Observation]:
    """Two keys of one page: its text, and its text read again as a region of its own."""
    hall = response.url.rsplit("=", 1)[-1]
    yield Observation(key=f"hall-{hall}", url=response.url, html=response.text)
    yield Observation(key=f"hall-{hall}-again", url=response.url, html=response.text)


def test_the_keys_of_many_responses_judged_in_turn_share_one_second_load_each(make_chain: Any) -> None:
    """A crawl judges the keys of many responses interleaved (Scrapy runs CONCURRENT_ITEMS at once):
    each response's keys still share one second load, however many responses are in between."""
    halls = range(12)
    chain = make_chain([f"Hall {n} opens at ten, and closes at six on weekdays." for n in halls])
    items: list[list[Observation]] = [[], []]
    for n in halls:
        url = f"{URL}?hall={n}"
        html = f"<html><body><p>Hall {n} opens at nine, and closes at six on weekdays.</p></body></html>"
        answered = Request(url, callback=_hall)
        for which, key in enumerate((f"hall-{n}", f"hall-{n}-again")):
            item = Observation(key=key, url=url, html=html)
            chain.runtime.requests.register(item, answered)
            items[which].append(item)
    assert chain.run(*items[0], *items[1]) == [None] * 24  # every response's first key, then every second one
    assert len(chain.engine.requests) == 12 and (chain.stat("baseline"), chain.stat("shared")) == (24, 12)


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
