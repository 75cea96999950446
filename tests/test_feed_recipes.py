"""The routing recipes of docs/notifications.md, run as written: each ``FEEDS`` code block is
executed, and every feed it declares is given its filter's records; the kind and field recipes
also route a real crawl's records. A recipe edited in the docs without its expectation here fails."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.misc import load_object

from changewatch.feeds import FieldFilter, KindFilter, SiteFilter

from .e2e.crawl import Crawler, read_feed
from .middlewares.conditional.servers import OddServer, Page
from .middlewares.conditional.test_odd_servers import html

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "notifications.md"


def _record(key: str, kind: str, url: str, **members: Any) -> dict[str, Any]:
    return {"key": key, "kind": kind, "url": url, "observed_at": "2026-11-30T12:00:00Z", "spider": "watch",
            "change_id": len(key), **members}


RECORDS = [
    _record("kettle", "field", "https://shop.example/p/kettle",
            changes={"offers.price": {"old": "89.00", "new": "79.00"}}),
    _record("toaster", "field", "https://www.shop.example/p/toaster",
            changes={"stock": {"old": "In stock", "new": "Out of stock"}}),
    _record("listings", "entities", "https://rentals.example/search",
            changed=[{"key": "https://rentals.example/1", "changes": {"price": {"old": "950", "new": "900"}}}]),
    _record("terms", "content", "https://shop.example/terms", diff="- old\n+ new", distance=7),
    _record("front", "content", "https://www.news.example/", diff="- a\n+ b", distance=3),
    _record("blocked", "error", "https://news.example/p", error="blocked: HTTP 403"),
    _record("moved", "moved", "https://old.example/a", moved_to="https://sub.news.example/a"),
    _record("back", "recovered", "https://shopexample.org/x"),
]
#: which records each documented feed takes, by the feed's name in the docs
EXPECTED = {
    "changes/prices.jsonl": {"kettle", "toaster", "listings"},
    "changes/review.jsonl": {"terms", "front"},
    "changes/operator.jsonl": {"blocked", "moved", "back"},
    "changes/shop.jsonl": {"kettle", "toaster", "terms"},
    "changes/news.csv": {"front", "blocked", "moved"},
    "changes/price-changes.jsonl": {"kettle", "listings"},
    "changes/stock.jsonl": {"toaster"},
}


def recipes() -> list[dict[str, dict[str, Any]]]:
    """The FEEDS of every Python block in the docs' "Routing recipes" section, executed as written."""
    section = DOC.read_text(encoding="utf-8").partition("## Routing recipes")[2].partition("\n## ")[0]
    found = []
    for block in re.findall(r"```python\n(.*?)```", section, re.S):
        ast.parse(block)  # it is Python, as a settings.py would hold it
        namespace: dict[str, Any] = {}
        exec(block, namespace)  # the docs' own text, nothing else
        found.append(namespace["FEEDS"])
    return found


def test_the_docs_have_the_three_recipes_and_nothing_unchecked() -> None:
    feeds = [name for recipe in recipes() for name in recipe]
    assert len(recipes()) == 3 and sorted(feeds) == sorted(EXPECTED)


@pytest.mark.parametrize("feed", sorted(EXPECTED))
def test_each_documented_feed_takes_what_it_says(feed: str) -> None:
    options = next(recipe[feed] for recipe in recipes() if feed in recipe)
    item_filter = load_object(options["item_filter"])(options)
    assert {r["key"] for r in RECORDS if item_filter.accepts(r)} == EXPECTED[feed]
    assert not item_filter.accepts({"name": "not a change record"})


@pytest.mark.parametrize(("cls", "options", "says"), [
    (SiteFilter, {}, "needs the feed option item_filter_sites"),
    (SiteFilter, {"item_filter_sites": []}, "non-empty list"),
    (FieldFilter, {}, "needs the feed option item_filter_fields"),
    (FieldFilter, {"item_filter_fields": "price,"}, "non-empty list"),
    (KindFilter, {"item_filter_kinds": ["noise"]}, "unknown kind"),
])
def test_a_filter_without_its_option_says_so(cls: type, options: dict[str, Any], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        cls(options)


def test_options_as_comma_separated_strings() -> None:
    assert SiteFilter({"item_filter_sites": "shop.example, .news.example"}).accepts(RECORDS[4])
    assert FieldFilter({"item_filter_fields": "stock,offers.price"}).accepts(RECORDS[1])


@pytest.mark.slow  # a crawl subprocess
def test_the_kind_and_field_recipes_route_a_real_crawl(odd_server: tuple[OddServer, str], tmp_path: Path) -> None:
    server, base = odd_server
    kinds, _, fields = recipes()
    feeds = {str(tmp_path / name): options for name, options in {**kinds, **fields}.items()}
    server.pages.update({"/kettle": Page(b"<html><body><p class='price'>89.00</p><p>Kettle</p></body></html>"),
                         "/terms": Page(html("Terms, version one")), "/gone": Page(html("here"))})
    crawler = Crawler(tmp_path, [{"url": base + "/kettle", "key": "kettle", "fields": {"price": "p.price::text"}},
                                 {"url": base + "/terms", "key": "terms"}, {"url": base + "/gone", "key": "gone"}])
    setting = ("-s", f"FEEDS={json.dumps(feeds)}")
    assert crawler.run(*setting, feed_option=False).returncode == 0
    server.pages.update({"/kettle": Page(b"<html><body><p class='price'>79.00</p><p>Kettle</p></body></html>"),
                         "/terms": Page(html("Terms, version two"))})
    del server.pages["/gone"]
    second = crawler.run(*setting, feed_option=False)
    assert second.returncode == 0, second.stderr
    got = {name: {r["key"] for r in read_feed(tmp_path / name)} for name in {**kinds, **fields}}
    assert got == {"changes/prices.jsonl": {"kettle"}, "changes/review.jsonl": {"terms"},
                   "changes/operator.jsonl": {"gone"}, "changes/price-changes.jsonl": {"kettle"},
                   "changes/stock.jsonl": set()}
