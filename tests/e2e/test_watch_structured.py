"""End to end with the generic watch spider: several products on one page compared per entity
(jsonld.key), microdata when there is no JSON-LD, kinds for prices shown as text."""

from __future__ import annotations

from pathlib import Path

from changewatch.examples.site import FixtureSite
from tests.changes import field

from .crawl import Crawler, by_key


def test_per_entity_offers_microdata_and_kinds(catalogue: tuple[FixtureSite, str], tmp_path: Path) -> None:
    fixture, base = catalogue
    watches = [
        {"url": f"{base}/p/ktl-010.html", "key": "kettle-sizes",
         "jsonld": {"type": "Offer", "key": "sku", "fields": ["name", "price", "availability"]}},
        {"url": f"{base}/p/lmp-003.html", "key": "shade",  # microdata only
         "jsonld": {"type": "Product", "fields": ["name", "offers.price", "offers.availability"]}},
        {"url": f"{base}/p/lmp-002.html", "key": "brass", "fields": {"shown": "p.price"}, "kinds": {"shown": "price"}},
    ]
    crawler = Crawler(tmp_path, watches)
    first = crawler.run()
    assert first.returncode == 0, first.stderr[-3000:]
    assert first.records == [] and first.stats["changewatch/commit/baseline"] == 3

    fixture.edit("/p/ktl-010.html", '"price": "49.00"', '"price": "45.00"')
    fixture.edit("/p/lmp-003.html", 'href="https://schema.org/LimitedAvailability"', 'href="https://schema.org/SoldOut"')
    fixture.edit("/p/lmp-002.html", "<p class=\"price\">€ 1.234,56</p>", "<p class=\"price\">1.234,56 EUR</p>")
    second = crawler.run()
    assert second.returncode == 0, second.stderr[-3000:]
    records = by_key(second.records)
    assert set(records) == {"kettle-sizes", "shade"}  # "1.234,56 EUR" is the same price as "€ 1.234,56"
    assert records["kettle-sizes"]["kind"] == "entities"
    assert records["kettle-sizes"]["changed"] == [{"key": "KTL-010-10",
                                                   "changes": {"price": field("49.00", "45.00", "49", "45")}}]
    assert records["shade"]["changes"] == {"offers.availability": field(
        "https://schema.org/LimitedAvailability", "https://schema.org/SoldOut", "LimitedAvailability", "SoldOut")}
