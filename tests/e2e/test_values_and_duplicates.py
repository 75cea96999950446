"""End to end: a JSON field watch compares values by their JSON type and reports the other
fields while one path is missing; an HTML entity set whose list gains a sponsored copy of an item
reports it as added, not as a change of the item."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .crawl import Crawler, by_key
from .hostile import HostileSite, page

JSON = "application/json; charset=utf-8"


def listing(*items: tuple[str, str, str]) -> bytes:
    rows = "".join(f"<li class='item'><a class='title' href='{href}'>{title}</a><span class='price'>{price}</span></li>"
                   for href, title, price in items)
    return f"<html><body><h1>Flats</h1><ul>{rows}</ul></body></html>".encode()


def product(doc: Any) -> bytes:
    return json.dumps(doc).encode()


def test_json_types_missing_paths_and_a_sponsored_copy(site: HostileSite, tmp_path: Path) -> None:
    flats = [("/flat/1", "Sunny flat", "1200"), ("/flat/2", "Loft", "900")]
    site.good["/flats"] = page(listing(*flats))
    site.good["/api/p"] = page(product({"product": {"price": "10", "name": "Kettle", "sale": False}}), ctype=JSON)
    crawler = Crawler(tmp_path, [
        {"key": "flats", "url": f"{site.base}/flats",
         "entities": {"selector": "li.item", "key": "a.title::attr(href)",
                      "fields": {"title": "a.title::text", "price": "span.price::text"}}},
        {"key": "api", "url": f"{site.base}/api/p", "json": {"fields": ["product.price", "product.name",
                                                                         "product.sale"]}}])
    first = crawler.run()
    assert first.returncode == 0 and first.records == [], first.stderr[-3000:]

    site.good["/flats"] = page(listing(("/flat/2?utm_source=promo", "Sponsored: Loft", "850"), *flats))
    site.good["/api/p"] = page(product({"product": {"price": 10, "name": "Kettle", "sale": True}}), ctype=JSON)
    second = crawler.run()
    records = by_key(second.records)
    assert records["flats"]["kind"] == "entities" and "changed" not in records["flats"], records["flats"]
    assert [a["fields"] for a in records["flats"]["added"]] == [{"title": "Sponsored: Loft", "price": "850"}]
    assert records["api"]["kind"] == "field" and records["api"]["changes"] == {
        "product.price": {"old": "10", "new": 10, "old_normalised": "10", "new_normalised": "10",
                          "old_type": "string", "new_type": "number"},
        "product.sale": {"old": False, "new": True, "old_normalised": "false", "new_normalised": "true"}}

    site.good["/api/p"] = page(product({"product": {"name": "Kettle Pro", "sale": True}}), ctype=JSON)
    third = by_key(crawler.run().records)
    assert set(third) == {"api"} and third["api"]["kind"] == "field"
    assert third["api"]["changes"] == {"product.name": {"old": "Kettle", "new": "Kettle Pro",
                                                        "old_normalised": "Kettle", "new_normalised": "Kettle Pro"}}
    assert third["api"]["error"] == "extraction: json field 'product.price' matched nothing (was 10)"
