"""End to end: feeds watched with no options, as entity sets of their entries.
A new entry is one ``entities`` record whose ``added`` names it; the same entries re-serialised in
another order are no change; HTML served as RSS is an ``unsupported:`` error, not a baseline."""

from __future__ import annotations

import json
from pathlib import Path

from .crawl import Crawler, by_key
from .hostile import HostileSite, page

ENTRIES = [("kettle-1", "Kettle 1000 launched", "Mon, 30 Nov 2026 09:00:00 GMT"),
           ("kettle-2", "Kettle 2000 announced", "Mon, 30 Nov 2026 15:30:00 GMT"),
           ("toaster-1", "Toaster 3 reviewed", "Tue, 01 Dec 2026 08:15:00 GMT")]
NEW = ("kettle-3", "KETTLE 2000 recalled", "Tue, 01 Dec 2026 11:00:00 GMT")


def rss(entries: list[tuple[str, str, str]], *, pretty: bool = False) -> bytes:
    sep = "\n  " if pretty else ""
    items = "".join(f"<item>{sep}<title>{title}</title>{sep}<link>https://shop.example/news/{guid}</link>{sep}"
                    f'<guid isPermaLink="false">{guid}</guid>{sep}<pubDate>{date}</pubDate></item>\n'
                    for guid, title, date in entries)
    # a BOM and a stray newline before the declaration, as PHP-made feeds have
    return (f'\ufeff\n<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel><title>Shop news</title>'
            f"\n{items}</channel></rss>").encode()


def atom(entries: list[tuple[str, str, str]]) -> bytes:
    body = "".join(f'<entry><id>urn:shop:{guid}</id><title>{title}</title><link href="/a/{guid}"/>'
                   f"<updated>2026-12-01T10:00:00Z</updated></entry>" for guid, title, _ in entries)
    return f'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>A</title>{body}</feed>'.encode()


def json_feed(entries: list[tuple[str, str, str]]) -> bytes:
    items = [{"id": guid, "title": title, "url": f"https://shop.example/j/{guid}"} for guid, title, _ in entries]
    return json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "J", "items": items}).encode()


def test_a_new_entry_is_added_and_a_reordered_feed_is_quiet(site: HostileSite, tmp_path: Path) -> None:
    crawler = Crawler(tmp_path, [{"key": "rss", "url": f"{site.base}/rss"},
                                 {"key": "atom", "url": f"{site.base}/atom"},
                                 {"key": "json", "url": f"{site.base}/json"}])
    site.good["/rss"] = page(rss(ENTRIES), ctype="application/rss+xml; charset=utf-8")
    site.good["/atom"] = page(atom(ENTRIES), ctype="text/xml")  # known by its root element
    site.good["/json"] = page(json_feed(ENTRIES), ctype="application/json")  # by its version URL
    first = crawler.run()
    assert first.returncode == 0 and first.records == [], first.stderr[-3000:]

    site.good["/rss"] = page(rss([NEW, *ENTRIES]), ctype="application/rss+xml; charset=utf-8")
    site.good["/atom"] = page(atom(ENTRIES[::-1]), ctype="text/xml")
    second = crawler.run()
    assert second.returncode == 0, second.stderr[-3000:]
    records = by_key(second.records)
    assert set(records) == {"rss"}, second.records
    record = records["rss"]
    assert record["kind"] == "entities"
    assert record["added"] == [{"key": "kettle-3", "fields": {
        "title": "KETTLE 2000 recalled", "link": "https://shop.example/news/kettle-3",
        "published": "Tue, 01 Dec 2026 11:00:00 GMT"}}]
    assert "removed" not in record and "changed" not in record

    # the same entries, another order, another layout, the same instants written as RFC 3339
    reordered = [ENTRIES[2], NEW, ENTRIES[0], ENTRIES[1]]
    body = rss(reordered, pretty=True).replace(b"Tue, 01 Dec 2026 11:00:00 GMT", b"2026-12-01T12:00:00+01:00")
    site.good["/rss"] = page(body, ctype="application/rss+xml; charset=utf-8")
    third = crawler.run()
    assert third.returncode == 0 and third.records == [], (third.records, third.stderr[-3000:])


def test_html_served_as_rss_is_an_error_and_never_a_baseline(site: HostileSite, tmp_path: Path) -> None:
    crawler = Crawler(tmp_path, [{"key": "feed", "url": f"{site.base}/feed"}])
    site.good["/feed"] = page(b"<!DOCTYPE html><html><body><p>Our feed moved<br></body></html>",
                              ctype="application/rss+xml")
    first = crawler.run()
    assert first.returncode == 1, first.stderr[-3000:]  # its one watch ended in an error: nothing observed
    assert [(r["kind"], r["error"].split(":")[0]) for r in first.records] == [("error", "unsupported")]

    site.good["/feed"] = page(rss(ENTRIES), ctype="application/rss+xml")
    second = crawler.run()  # the first good observation is the baseline: no change, whatever came before
    assert second.returncode == 0, second.stderr[-3000:]
    assert [r for r in second.records if r["kind"] != "recovered"] == []

    site.good["/feed"] = page(rss([*ENTRIES, NEW]), ctype="application/rss+xml")
    third = crawler.run()
    assert [(r["kind"], [a["fields"]["title"] for a in r["added"]]) for r in third.records] == [
        ("entities", ["KETTLE 2000 recalled"])]


def test_a_feed_compared_as_text_before_starts_its_entries_silently(site: HostileSite, tmp_path: Path) -> None:
    """A feed the previous version compared by its text (here: one served as text/html, which is
    not sniffed) and that is now read as a feed: its entries start as a silent baseline, as any
    newly tracked part does; the text baseline it replaces is never reported as deleted."""
    crawler = Crawler(tmp_path, [{"key": "feed", "url": f"{site.base}/feed"}])
    site.good["/feed"] = page(rss(ENTRIES), ctype="text/html")
    first = crawler.run()
    assert first.returncode == 0 and first.records == [], first.stderr[-3000:]

    site.good["/feed"] = page(rss(ENTRIES[::-1]), ctype="application/rss+xml")
    second = crawler.run()
    assert second.returncode == 0 and second.records == [], (second.records, second.stderr[-3000:])

    site.good["/feed"] = page(rss([NEW, *ENTRIES]), ctype="application/rss+xml")
    third = crawler.run()
    assert [(r["kind"], [a["key"] for a in r["added"]]) for r in third.records] == [("entities", ["kettle-3"])]
