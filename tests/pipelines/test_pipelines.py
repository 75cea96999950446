"""The pipelines with a real crawler and a real SQLite store, driven item by item."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import scrapy
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from changewatch import Observation
from changewatch.addon import DOWNLOADER_MIDDLEWARE_ORDER, PIPELINE_ORDER, SPIDER_MIDDLEWARE_ORDER
from changewatch.config import ChangewatchConfig, ConfigError
from changewatch.pipelines import ChangewatchPipeline
from changewatch.runtime.services import CrawlServices
from changewatch.store.sqlite import SQLiteStore
from tests.changes import field

ARTICLE = "".join(f"<p>Paragraph {i}: " + "steady words about the subject " * 8 + "</p>" for i in range(30))


class UnitSpider(scrapy.Spider):
    name = "unit"


class Chain:
    """The comparison step, on a real crawler with the add-on (and so the runtime extension)."""

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self.runtime = CrawlServices.of(crawler)
        self.pipeline = build_from_crawler(ChangewatchPipeline, crawler)

    async def _run(self, items: list[Any]) -> list[Any]:
        await self.pipeline.open_spider()
        out: list[Any] = []
        try:
            for item in items:
                try:
                    out.append(await self.pipeline.process_item(item))
                except DropItem:
                    out.append(None)
        finally:
            self.pipeline.close_spider()
            await self.runtime._engine_stopped()
        return out

    def run(self, *items: Any) -> list[Any]:
        return asyncio.run(self._run(list(items)))

    def stat(self, name: str) -> Any:
        assert self.crawler.stats is not None
        return self.crawler.stats.get_value(f"changewatch/{name}")


@pytest.fixture
def make_chain(tmp_path: Path) -> Iterator[Any]:
    def make(**settings: Any) -> Chain:
        crawler = get_crawler(UnitSpider, {"ADDONS": {"changewatch.Addon": 0},
                                           "CHANGEWATCH_STORE": f"sqlite:///{tmp_path}/state.db",
                                           "CHANGEWATCH_WORKERS": 0, **settings})
        crawler.spider = UnitSpider.from_crawler(crawler)
        return Chain(crawler)

    yield make


def obs(**kw: Any) -> Observation:
    kw.setdefault("key", "k")
    kw.setdefault("url", "https://shop.example/p/1")
    return Observation(**kw)


def test_first_observation_is_a_silent_baseline(make_chain: Any) -> None:
    chain = make_chain()
    assert chain.run(obs(fields={"price": "89.00"})) == [None]
    assert chain.stat("commit/baseline") == 1


def test_field_change_is_reported_once(make_chain: Any) -> None:
    chain = make_chain()
    out = chain.run(obs(fields={"price": "89.00"}), obs(fields={"price": "89.0"}),
                    obs(fields={"price": "79.00"}), obs(fields={"price": "79"}))
    assert out[:2] == [None, None] and out[3] is None
    record = out[2]
    assert record["kind"] == "field" and record["key"] == "k" and record["spider"] == "unit"
    # old is the value as last displayed ("89.0" equals "89.00" but is what the page said last)
    assert record["changes"] == {"price": field("89.0", "79.00", "89", "79")}
    assert "diff" not in record and "added" not in record
    assert chain.stat("commit/field") == 1 and chain.stat("commit/none") == 2


@dataclasses.dataclass
class ProductItem:
    key: str
    url: str
    fields: dict[str, Any]


class ScrapyProduct(scrapy.Item):
    key = scrapy.Field()
    url = scrapy.Field()
    fields = scrapy.Field()


@pytest.mark.parametrize("kind", [dict, ProductItem, ScrapyProduct])
def test_any_item_kind_is_an_observation(make_chain: Any, kind: Any) -> None:
    chain = make_chain()
    out = chain.run(kind(key="sku-1", url="https://s.example/1", fields={"price": 1}),
                    kind(key="sku-1", url="https://s.example/1", fields={"price": 2}))
    assert out[0] is None
    assert out[1]["changes"] == {"price": field(1, 2, "1", "2")}


@dataclasses.dataclass
class PricedItem:
    key: str
    url: str
    fields: dict[str, Any]
    kinds: dict[str, str]


@attrs.define
class AttrsPricedItem:
    key: str
    url: str
    fields: dict[str, Any]
    kinds: dict[str, str]


class ScrapyPricedItem(scrapy.Item):
    key = scrapy.Field()
    url = scrapy.Field()
    fields = scrapy.Field()
    kinds = scrapy.Field()


@pytest.mark.parametrize("kind", [dict, PricedItem, AttrsPricedItem, ScrapyPricedItem])
def test_item_kinds_say_how_fields_compare(make_chain: Any, kind: Any) -> None:
    chain = make_chain()

    def item(price: str, stock: str) -> Any:
        return kind(key="sku-1", url="https://s.example/1", fields={"price": price, "stock": stock},
                    kinds={"price": "price", "stock": "availability"})

    out = chain.run(item("€ 1.234,56", "in stock"), item("1.234,56 EUR", "http://schema.org/InStock"),
                    item("€ 1.199,00", "InStock"))
    assert out[:2] == [None, None]  # same price and stock, spelled differently
    assert out[2]["changes"] == {"price": field("1.234,56 EUR", "€ 1.199,00", "1234.56 EUR", "1199 EUR")}


def test_unknown_kind_is_an_error_record(make_chain: Any) -> None:
    chain = make_chain()
    [record] = chain.run(obs(fields={"p": "1"}, options={"kinds": {"p": "money"}}))
    assert record["kind"] == "error" and "unknown field kind 'money'" in record["error"]
    assert chain.stat("fields/unobservable") == 1


def test_entity_fields_compare_by_kind(make_chain: Any) -> None:
    chain = make_chain()

    def board(rent: str) -> Observation:
        return obs(entities=[{"key": "/ad/1", "fields": {"rent": rent}}], options={"kinds": {"rent": "price"}})

    assert chain.run(board("£1,150 pcm"), board("£ 1150 pcm"))[1] is None
    [record] = chain.run(board("£1,095 pcm"))
    assert record["changed"] == [{"key": "https://shop.example/ad/1",
                                  "changes": {"rent": field("£ 1150 pcm", "£1,095 pcm", "1150 GBP", "1095 GBP")}}]


def test_other_items_pass_untouched(make_chain: Any) -> None:
    chain = make_chain()
    item = {"title": "not an observation"}
    assert chain.run(item) == [item]


def test_text_none_noise_content(make_chain: Any) -> None:
    chain = make_chain()
    edited = ARTICLE.replace("Paragraph 17: steady", "Paragraph 17: unsteady")
    out = chain.run(obs(html=ARTICLE + "<p>3 minutes ago</p>"), obs(html=ARTICLE + "<p>3 minutes ago</p>"),
                    obs(html=ARTICLE + "<p>2 hours ago</p>"), obs(html=edited))
    assert out[:3] == [None, None, None]
    assert out[3]["kind"] == "content"
    assert "- Paragraph 17: steady" in out[3]["diff"] and "+ Paragraph 17: unsteady" in out[3]["diff"]
    assert isinstance(out[3]["distance"], int)
    assert chain.stat("commit/none") == 1 and chain.stat("commit/noise") == 1


def test_threshold_from_options_and_drift_adds_up(make_chain: Any) -> None:
    chain = make_chain()
    words = [f"w{i}" for i in range(400)]
    pages = []
    for step in range(0, 60, 6):  # each step edits a few more words of the page
        page = list(words)
        for j in range(step):
            page[j * 6] = f"x{j}"
        pages.append(obs(html="<p>" + " ".join(page) + "</p>", options={"threshold": 8}))
    out = chain.run(*pages)
    reported = [r for r in out if r is not None]
    # small steps stay below the threshold one by one, but the baseline is kept, so the drift
    # is eventually reported, and its distance exceeds the threshold
    assert reported and all(r["distance"] > 8 for r in reported)
    assert len(reported) < len(pages) - 1


def test_project_threshold_applies_when_the_watch_sets_none(make_chain: Any) -> None:
    edited = ARTICLE.replace("Paragraph 17: steady", "Paragraph 17: unsteady")
    assert make_chain().run(obs(html=ARTICLE), obs(html=edited))[1]["kind"] == "content"
    chain = make_chain(CHANGEWATCH_THRESHOLD=64)
    options = {"threshold": None}  # what the watch spider sends for a watch without a threshold
    out = chain.run(obs(key="k2", html=ARTICLE, options=options), obs(key="k2", html=edited, options=options))
    assert out == [None, None] and chain.stat("commit/noise") == 1


def test_errors_keep_the_baseline_and_are_reported_once(make_chain: Any) -> None:
    chain = make_chain()
    out = chain.run(
        obs(fields={"price": "89.00"}),
        obs(error="blocked: HTTP 403"),
        obs(error="blocked: HTTP 403"),  # the same failure again: counted, not re-reported
        obs(error="timeout: took too long"),  # a different failure: reported
        obs(fields={"price": None}),  # extraction suddenly empty: an error, never "→ None"
        obs(fields={"price": "79.00"}),  # compared with the last good observation
    )
    assert out[0] is None
    assert out[1]["kind"] == "error" and out[1]["error"] == "blocked: HTTP 403"
    assert out[2] is None
    assert out[3]["kind"] == "error" and out[3]["error"].startswith("timeout")
    assert out[4]["kind"] == "error" and "price" in out[4]["error"]
    assert out[5]["kind"] == "field" and out[5]["changes"] == {"price": field("89.00", "79.00", "89", "79")}
    assert chain.stat("commit/error") == 4 and chain.stat("commit/error_repeated") == 1


def test_repeated_errors_can_be_reported(make_chain: Any) -> None:
    chain = make_chain(CHANGEWATCH_REPORT_REPEATED_ERRORS=True)
    out = chain.run(obs(error="http: HTTP 500"), obs(error="http: HTTP 500"))
    assert [r["kind"] for r in out] == ["error", "error"]


def test_error_as_first_observation_sets_no_baseline(make_chain: Any) -> None:
    chain = make_chain()
    out = chain.run(obs(error="dns: no such host"), obs(fields={"price": "1"}), obs(fields={"price": "2"}))
    # the first good observation is the baseline; it also closes the reported failure streak
    assert out[0]["kind"] == "error" and out[1]["kind"] == "recovered" and "changes" not in out[1]
    assert out[2]["kind"] == "field" and out[2]["changes"] == {"price": field("1", "2")}


def test_entities(make_chain: Any) -> None:
    chain = make_chain()
    a = {"key": "/rent/1?utm_source=x", "fields": {"rent": "900"}}
    b = {"key": "/rent/2?fbclid=abc", "fields": {"rent": "700"}}
    c = {"key": "/rent/3", "fields": {"rent": "650"}}
    out = chain.run(obs(entities=[a, b]), obs(entities=[b, a]),
                    obs(entities=[{**a, "fields": {"rent": "950"}}, c]))
    assert out[:2] == [None, None]
    r = out[2]
    assert r["kind"] == "entities"
    assert r["added"] == [{"key": "https://shop.example/rent/3", "fields": {"rent": "650"}}]
    assert r["removed"] == [{"key": "https://shop.example/rent/2", "fields": {"rent": "700"}}]
    assert r["changed"] == [{"key": "https://shop.example/rent/1",
                             "changes": {"rent": field("900", "950")}}]


def test_bad_region_is_an_error_record(make_chain: Any) -> None:
    chain = make_chain()
    out = chain.run(obs(html="<p>x</p>", region="p[[["))
    assert out[0]["kind"] == "error" and out[0]["error"].startswith("region:")


def test_worker_process_gives_the_same_result(make_chain: Any) -> None:
    chain = make_chain(CHANGEWATCH_WORKERS=1)
    edited = ARTICLE.replace("Paragraph 3: steady", "Paragraph 3: changed")
    out = chain.run(obs(html=ARTICLE), obs(html=edited))
    assert out[0] is None and out[1]["kind"] == "content"


def test_a_page_past_the_worker_timeout_is_an_error_record_and_keeps_the_baseline(make_chain: Any) -> None:
    assert make_chain().run(obs(html=ARTICLE * 100)) == [None]
    slow = make_chain(CHANGEWATCH_WORKERS=1, CHANGEWATCH_WORKER_TIMEOUT=0.001)  # parsing ~1.7 MB takes far longer
    [record] = slow.run(obs(html=ARTICLE * 100 + "<p>edited</p>"))
    assert record["kind"] == "error"
    assert record["error"] == ("unprocessable: judging the page took longer than 0.001 s "
                               "(CHANGEWATCH_WORKER_TIMEOUT); its worker was replaced")
    assert slow.stat("workers/timeout") == 1
    [change] = make_chain().run(obs(html=ARTICLE * 100 + "<p>edited</p>"))
    assert change["kind"] == "content" and "+ edited" in change["diff"]  # against the baseline that was kept


def test_store_is_the_configured_one(make_chain: Any, tmp_path: Path) -> None:
    chain = make_chain()
    chain.run(obs(fields={"a": 1}))
    store = SQLiteStore(tmp_path / "state.db")
    store.open()
    try:
        assert store.keys("unit") == ["k"]
    finally:
        store.close()


def test_addon_enables_the_pipelines_in_order() -> None:
    crawler = get_crawler(UnitSpider, {"ADDONS": {"changewatch.Addon": 0}})
    pipelines = crawler.settings.getdict("ITEM_PIPELINES")
    assert {k: pipelines[k] for k in PIPELINE_ORDER} == PIPELINE_ORDER
    assert list(PIPELINE_ORDER) == ["changewatch.pipelines.ChangewatchPipeline"]


def test_addon_enables_the_middlewares_and_keeps_the_users_own_components() -> None:
    crawler = get_crawler(UnitSpider, {"ADDONS": {"changewatch.Addon": 0},
                                       "ITEM_PIPELINES": {"myproject.pipelines.Mine": 300}})
    pipelines = crawler.settings.getdict("ITEM_PIPELINES")
    assert pipelines["myproject.pipelines.Mine"] == 300 and "changewatch.pipelines.ChangewatchPipeline" in pipelines
    for name, order in (("DOWNLOADER_MIDDLEWARES", DOWNLOADER_MIDDLEWARE_ORDER),
                        ("SPIDER_MIDDLEWARES", SPIDER_MIDDLEWARE_ORDER)):
        assert {k: crawler.settings.getdict(name)[k] for k in order} == order


def test_user_settings_override_the_addon() -> None:
    crawler = get_crawler(UnitSpider, {"ADDONS": {"changewatch.Addon": 0},
                                       "ITEM_PIPELINES": {"changewatch.pipelines.ChangewatchPipeline": 999}})
    assert crawler.settings.getdict("ITEM_PIPELINES")["changewatch.pipelines.ChangewatchPipeline"] == 999


@pytest.mark.parametrize("setting,value", [("CHANGEWATCH_THRESHOLD", 65), ("CHANGEWATCH_WORKERS", -1),
                                           ("CHANGEWATCH_STORE_SYNCHRONOUS", "SOMETIMES")])
def test_bad_settings_are_refused(setting: str, value: Any) -> None:
    crawler = get_crawler(UnitSpider, {setting: value})
    with pytest.raises(ConfigError, match=setting):
        ChangewatchConfig.from_settings(crawler.settings)


def test_response_origins_are_taken_once_and_never_leak(make_chain: Any) -> None:
    """Every item's origin leaves the table when the comparison step sees the item, observation
    or not; an equal but different item does not get another's origin."""
    from changewatch.core.validators import HttpValidators

    chain = make_chain()
    origin = HttpValidators(url="https://s.example/p", key="", etag='"a"')
    observation = {"key": "k", "url": "https://s.example/p", "fields": {"a": 1}}
    other = {"title": "not an observation"}
    for item in (observation, other):
        chain.runtime.origins.register(item, origin)
    twin = dict(observation)
    assert chain.run(twin, other) == [None, other]
    assert len(chain.runtime.origins) == 1  # the observation's own is still there: the twin did not take it
    chain.run(observation)
    assert len(chain.runtime.origins) == 0


def test_users_items_are_left_as_they_made_them(make_chain: Any) -> None:
    chain = make_chain()
    item = {"key": "k", "url": "https://s.example/p", "fields": {"price": "1"}, "kinds": {"price": "price"}}
    snapshot = {**item, "fields": dict(item["fields"]), "kinds": dict(item["kinds"])}
    observation = Observation(key="o", url="https://s.example/o", html=ARTICLE)
    chain.run(item, observation)
    assert item == snapshot
    assert observation.html == ARTICLE and observation.error is None


class FieldsOnlyPipeline(ChangewatchPipeline):
    """A subclass whose hook judges observations by their fields alone."""

    def comparisons_for(self, obs: Observation) -> Any:
        return [c for c in self.runtime.comparisons if c.name == "fields"]


def test_the_comparisons_for_hook_decides_what_is_compared(make_chain: Any) -> None:
    chain = make_chain()
    chain.pipeline = build_from_crawler(FieldsOnlyPipeline, chain.crawler)
    edited = ARTICLE.replace("Paragraph 17: steady", "Paragraph 17: unsteady")
    out = chain.run(obs(fields={"price": "1"}, html=ARTICLE), obs(fields={"price": "1"}, html=edited),
                    obs(fields={"price": "2"}, html=edited))
    assert out[:2] == [None, None]  # the text is not compared: its edit is nothing
    assert out[2]["kind"] == "field" and "diff" not in out[2]


def test_fetch_order_is_judged_as_times_not_as_text(make_chain: Any, tmp_path: Path) -> None:
    """Schema 2 kept a spider's own ``observed_at`` as given: a stored time with an offset is
    still a time, and a later observation is compared, not dropped as fetched before it."""
    chain = make_chain()
    chain.run(obs(fields={"price": "1"}, observed_at="2026-11-30T11:00:00Z"))
    with sqlite3.connect(tmp_path / "state.db") as db:  # 12:00 UTC, as an old store may hold it
        db.execute("UPDATE observations SET last_seen='2026-11-30T13:00:00+01:00'")
    [record] = chain.run(obs(fields={"price": "2"}, observed_at="2026-11-30T12:30:00Z"))
    assert record["kind"] == "field" and record["changes"] == {"price": field("1", "2")}
    assert chain.run(obs(fields={"price": "3"}, observed_at="2026-11-30T12:10:00Z")) == [None]  # truly earlier
    assert chain.stat("commit/stale") == 1


class QuietOnErrors(ChangewatchPipeline):
    """A subclass that never reports errors and adds a member to what it exports."""

    def change_record(self, obs: Observation, judged: Any, state: Any) -> Any:
        return None if judged.error else super().change_record(obs, judged, state)

    def exported(self, record: Any, change_id: int) -> Any:
        return {**super().exported(record, change_id), "team": "pricing"}


def test_a_subclass_decides_what_is_reported_and_how_it_leaves(make_chain: Any) -> None:
    chain = make_chain()
    chain.pipeline = build_from_crawler(QuietOnErrors, chain.crawler)
    out = chain.run(obs(fields={"p": "1"}), obs(error="blocked: HTTP 403"), obs(fields={"p": "2"}))
    assert out[:2] == [None, None]
    assert out[2]["changes"] == {"p": field("1", "2")} and out[2]["team"] == "pricing"
    assert chain.stat("commit/error") == 1  # still counted, and the baseline was kept
