"""End to end: editing a watch re-baselines what it reads another way, silently.
Real ``scrapy crawl watch`` runs against a local server, the watchlist edited between
them: no record comes from the edit (not even an error), a change made in the same run to what
was not edited is reported, and later changes are compared against the new baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.changes import field

from .crawl import Crawler, CrawlResult, by_key
from .hostile import HostileSite, page

NAV = "".join(f"<li><a href='/section/{i}'>Section {i} of the shop</a></li>" for i in range(12))


def terms(article: str) -> bytes:
    return (f"<html><head><title>Terms</title></head><body><nav><ul>{NAV}</ul></nav>"
            f"<aside><p>Sign up for our newsletter and get 10% off your first order.</p></aside>"
            f"<main><h1>Terms of sale</h1><p>{article}</p><p>These terms apply to every order.</p></main>"
            f"<footer><p>Company Ltd, 1 High Street, Town</p></footer></body></html>").encode()


def product(price: str, stock: str, availability: str) -> bytes:
    return (f"<html><body><nav><ul>{NAV}</ul></nav><main><h1>Lamp</h1><p class='price'>{price}</p>"
            f"<p class='stock'>{stock}</p><p class='availability'>{availability}</p></main></body></html>").encode()


def listing(*flats: str) -> bytes:
    items = "".join(f"<li class='flat'><a href='/flat/{f}'>Flat {f}</a><span class='rent'>900</span></li>"
                    for f in flats)
    return (f"<html><body><aside><ul><li class='flat'><a href='/ad/1'>Advert</a></li></ul></aside>"
            f"<main><ul class='flats'>{items}</ul></main></body></html>").encode()


def quiet(result: CrawlResult) -> None:
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.records == [], result.records


def text_watch(site: HostileSite, **options: Any) -> dict[str, Any]:
    return {"key": "terms", "url": f"{site.base}/terms", **options}


def test_a_region_added_to_a_text_watch_is_no_record_and_later_changes_in_it_are(site: HostileSite,
                                                                                  tmp_path: Path) -> None:
    site.good["/terms"] = page(terms("You may cancel any order within 30 days."))
    crawler = Crawler(tmp_path, [text_watch(site)])
    quiet(crawler.run())

    crawler.write_watchlist([text_watch(site, region="main")])
    second = crawler.run()
    quiet(second)
    assert second.stats.get("changewatch/content/rebaselined") == 1

    site.good["/terms"] = page(terms("You may cancel any order within 14 days."))
    third = crawler.run()
    assert third.returncode == 0, third.stderr[-3000:]
    record = by_key(third.records)["terms"]
    assert record["kind"] == "content"
    assert "- You may cancel any order within 30 days." in record["diff"]
    assert "+ You may cancel any order within 14 days." in record["diff"]
    assert "newsletter" not in record["diff"] and "Section 3" not in record["diff"]  # outside the region
    assert "changewatch/content/rebaselined" not in third.stats


def test_an_edited_selector_starts_afresh_while_a_price_change_in_the_same_run_is_reported(
        site: HostileSite, tmp_path: Path) -> None:
    site.good["/lamp"] = page(product("89.00", "In stock", "Ships in 2 days"))
    watch = {"key": "lamp", "url": f"{site.base}/lamp", "fields": {"price": "p.price::text", "stock": "p.stock::text"}}
    crawler = Crawler(tmp_path, [watch])
    quiet(crawler.run())

    # the watch now reads availability where it read stock, and the price moved meanwhile
    crawler.write_watchlist([{**watch, "fields": {"price": "p.price::text", "stock": "p.availability::text"}}])
    site.good["/lamp"] = page(product("79.00", "In stock", "Ships in 2 days"))
    second = crawler.run()
    assert second.returncode == 0, second.stderr[-3000:]
    assert len(second.records) == 1, second.records
    record = second.records[0]
    assert record["kind"] == "field" and record["changes"] == {"price": field("89.00", "79.00", "89", "79")}
    assert second.stats.get("changewatch/fields/rebaselined") == 1

    # the edited field now compares from what it read after the edit
    site.good["/lamp"] = page(product("79.00", "In stock", "Sold out"))
    third = crawler.run()
    assert third.returncode == 0, third.stderr[-3000:]
    assert [r["changes"] for r in third.records] == [{"stock": field("Ships in 2 days", "Sold out")}]


def test_an_entity_watch_whose_selector_is_edited_is_no_record(site: HostileSite, tmp_path: Path) -> None:
    site.good["/flats"] = page(listing("a", "b"))
    watch = {"key": "flats", "url": f"{site.base}/flats",
             "entities": {"selector": "li.flat", "key": "a::attr(href)", "fields": {"title": "a::text"}}}
    crawler = Crawler(tmp_path, [watch])
    quiet(crawler.run())

    # the advert in the aside was counted as a flat: the selector now keeps to the listing
    edited = {**watch, "entities": {**watch["entities"], "selector": "ul.flats li.flat"}}
    crawler.write_watchlist([edited])
    second = crawler.run()
    quiet(second)
    assert second.stats.get("changewatch/entities/rebaselined") == 1

    site.good["/flats"] = page(listing("a", "b", "c"))
    third = crawler.run()
    assert third.returncode == 0, third.stderr[-3000:]
    record = by_key(third.records)["flats"]
    assert record["kind"] == "entities" and [e["key"] for e in record["added"]] == [f"{site.base}/flat/c"]
    assert "removed" not in record  # the advert left the set with the edit, not now
