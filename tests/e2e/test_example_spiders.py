"""End to end: the example per-site spiders crawl their fixture sites for real, several runs,
one store, with edits between runs; their ``scrapy check`` contracts pass."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from changewatch.examples.site import FixtureSite
from tests.changes import field

from .crawl import ROOT, SpiderCrawler, by_key, scrapy_env

NEW_LAMP = """<article class="product" data-sku="LMP-005">
    <a href="/p/lmp-005.html?utm_source=grid"><h2>Wall sconce</h2></a>
    <span class="price">€ 45,00</span> <span class="stock">Pre-order</span>
  </article>
  <!-- new-products -->"""


def test_catalogue_reports_field_and_entity_changes(catalogue: tuple[FixtureSite, str], tmp_path: Path) -> None:
    site, base = catalogue
    crawler = SpiderCrawler(tmp_path, "catalogue", "-a", f"site={base}")

    first = crawler.run()
    assert first.returncode == 0, first.stderr[-3000:]
    assert first.records == []  # baselines are silent
    # 3 category pages (lamps has two) and 6 products; every page really observed
    assert first.stats["changewatch/commit/baseline"] == 9, first.stats
    assert "changewatch/spider/error" not in first.stats
    assert first.stats["changewatch/spider/observed"] == 9
    assert first.stats["changewatch/spider/jsonld_invalid_blocks"] == 1  # ktl-011 has one beyond repair

    second = crawler.run()  # tokens, clocks and tracking parameters differ: silence
    assert second.returncode == 0 and second.records == [], second.records
    # the product pages answer 304 (the site's ETag is its content's version); the category
    # pages, which lead to the products, are always fetched in full
    assert second.stats["changewatch/conditional/not_modified"] == 6
    assert second.stats["changewatch/conditional/opt_out"] == 3

    site.edit("/p/lmp-001.html", '"price": "129.00"', '"price": "119.00"')
    site.edit("/c/lamps/", "€ 129,00", "€ 119,00")
    site.edit("/p/ktl-010.html", '"price": "59.00", "priceCurrency": "EUR",\n    "availability": "https://schema.org/InStock"',
              '"price": "59.00", "priceCurrency": "EUR",\n    "availability": "https://schema.org/OutOfStock"')
    site.edit("/p/lmp-002.html", '"price": "1234.56"', '"price": "1234.560"')  # same price, other spelling
    site.edit("/c/lamps/page-2.html", "<!-- new-products -->", NEW_LAMP)
    third = crawler.run()
    assert third.returncode == 0, third.stderr[-3000:]
    records = by_key(third.records)
    lamps, lamps2 = f"{base}/c/lamps/", f"{base}/c/lamps/page-2.html"
    assert set(records) == {"LMP-001", "KTL-010", lamps, lamps2}, third.records

    assert records["LMP-001"]["kind"] == "field"
    assert records["LMP-001"]["changes"] == {"price": field("129.00", "119.00", "129", "119")}
    # one size out of stock: a change of that size, not "more than one price found"
    assert records["KTL-010"]["kind"] == "entities"
    assert records["KTL-010"]["changed"] == [{"key": "KTL-010-17", "changes": {"availability": field(
        "https://schema.org/InStock", "https://schema.org/OutOfStock", "InStock", "OutOfStock")}}]
    assert records[lamps]["changed"] == [{"key": f"{base}/p/lmp-001.html",
                                         "changes": {"price": field("€ 129,00", "€ 119,00", "129 EUR", "119 EUR")}}]
    assert records[lamps2]["added"] == [{"key": f"{base}/p/lmp-005.html", "fields": {
        "sku": "LMP-005", "name": "Wall sconce", "price": "€ 45,00", "stock": "Pre-order"}}]
    assert third.stats["changewatch/commit/baseline"] == 1  # the new product's own page

    # A redesign drops the microdata of one product: an error naming what stopped matching.
    site.edit("/p/lmp-003.html", 'itemprop="price" content="39.90"', 'data-price="39.90"')
    fourth = crawler.run()
    records = by_key(fourth.records)
    assert set(records) == {"LMP-003"}
    assert records["LMP-003"]["kind"] == "error"
    assert "'price' (JSON-LD/microdata Product offers.price|offers.lowPrice) matched nothing" in \
        records["LMP-003"]["error"]

    site.edits.pop("/p/lmp-003.html")  # repaired: compared with the last good page, nothing changed
    fifth = crawler.run()
    assert fifth.returncode == 0, fifth.stderr[-3000:]
    assert [(r["key"], r["kind"]) for r in fifth.records] == [("LMP-003", "recovered")]  # the streak is over
    assert fifth.stats["changewatch/conditional/not_modified"] == 7  # the error kept the last good validators


def test_board_reports_added_removed_and_changed(board: tuple[FixtureSite, str], tmp_path: Path) -> None:
    site, base = board
    crawler = SpiderCrawler(tmp_path, "board", "-a", f"site={base}")
    assert crawler.run().records == []
    quiet = crawler.run()  # session ids in links, "N hours ago": silence
    assert quiet.records == []
    # one observation over every page: none of them may answer 304 (it would drop the others)
    assert "changewatch/conditional/sent" not in quiet.stats and quiet.stats["changewatch/conditional/opt_out"] >= 2

    site.edit("/board/", "£1,150 pcm", "£1,095 pcm")
    start = site.page("/board/").index('<li class="ad" id="ad-1077">')
    site.edit("/board/", site.page("/board/")[start:site.page("/board/").index("</li>", start) + 5], "")
    site.edit("/board/", "<!-- newest -->", '<li class="ad" id="ad-1101"><a class="title" '
              'href="/ad/1101?ref=board&amp;sid={{token}}">Garden flat</a> <span class="rent">£875 pcm</span> '
              '<span class="area">Riverside</span></li>')
    changed = crawler.run()
    assert changed.returncode == 0, changed.stderr[-3000:]
    [record] = changed.records
    assert record["kind"] == "entities" and record["key"] == f"{base}/board/"
    assert record["added"] == [{"key": f"{base}/ad/1101", "fields": {
        "title": "Garden flat", "rent": "£875 pcm", "area": "Riverside"}}]
    assert record["removed"] == [{"key": f"{base}/ad/1077", "fields": {
        "title": "Studio above the bakery", "rent": "£720 pcm", "area": "Old Town"}}]
    assert record["changed"] == [{"key": f"{base}/ad/1042",
                                  "changes": {"rent": field("£1,150 pcm", "£1,095 pcm", "1150 GBP", "1095 GBP")}}]

    # the second page fails: the board is an error, not the removal of its older adverts
    site.overrides["/board/page/2/"] = (503, b"<h1>Busy</h1>")
    failed = crawler.run()
    [record] = failed.records
    assert record["kind"] == "error" and record["error"].startswith("blocked: HTTP 503")
    site.overrides.clear()
    assert [(r["key"], r["kind"]) for r in crawler.run().records] == [(f"{base}/board/", "recovered")]

    # the vantage point reached the server on every request
    for path, headers in site.requests:
        assert headers.get("Accept-Language") == "en-GB", (path, headers)
        if path != "/robots.txt":
            assert "region=all" in headers.get("Cookie", ""), (path, headers)


@pytest.mark.parametrize("spider", ["catalogue", "board"])
def test_contracts_pass(spider: str, catalogue: tuple[FixtureSite, str], board: tuple[FixtureSite, str],
                        tmp_path: Path) -> None:
    base = {"catalogue": catalogue[1], "board": board[1]}[spider]
    proc = subprocess.run([sys.executable, "-m", "scrapy", "check", spider, "-a", f"site={base}",
                           "-s", "CHANGEWATCH_ALLOW_PRIVATE=True"], cwd=tmp_path,
                          env=scrapy_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "OK" in proc.stderr and "Ran 0 contracts" not in proc.stderr, proc.stderr[-3000:]


def test_bare_scrapy_check_serves_the_examples_own_fixtures(tmp_path: Path) -> None:
    """What CI jobs run: `scrapy check`, no arguments, in a fresh checkout. The example spiders
    are checked against their own fixture sites, served on a free port; nothing else on
    127.0.0.1 is let through the SSRF guard."""
    proc = subprocess.run([sys.executable, "-m", "scrapy", "check"], cwd=ROOT, env=scrapy_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "OK" in proc.stderr and "Ran 8 contracts" in proc.stderr, proc.stderr[-3000:]


def test_a_spider_without_a_site_or_fixture_still_says_what_it_needs(tmp_path: Path) -> None:
    (tmp_path / "nosite.py").write_text(
        "from changewatch import ChangewatchSpider\n\n"
        "class NoSite(ChangewatchSpider):\n"
        "    name = 'nosite'\n\n"
        "    def parse(self, response):\n"
        "        \"\"\"@site_path /x\n        @observes key\n        \"\"\"\n", encoding="utf-8")
    env = {**scrapy_env(), "PYTHONPATH": f"{tmp_path}{os.pathsep}{scrapy_env()['PYTHONPATH']}"}
    proc = subprocess.run([sys.executable, "-m", "scrapy", "check", "nosite", "-s", "SPIDER_MODULES=nosite"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "@site_path needs a ChangewatchSpider with a site" in proc.stderr
