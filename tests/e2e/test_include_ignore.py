"""End to end: a watch's ``include`` and ``ignore`` over real ``scrapy crawl
watch`` runs. A change only in <title> is reported with ``include: [title]`` and not without it; a
download link pointed somewhere new is a content change showing both URLs; a rotating banner and a
visitor counter the watch ignores stay silent while a real change beside them is reported; adding
the options to a watch re-baselines it silently, and the next link change is reported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .crawl import Crawler, by_key
from .hostile import HostileSite, page

BODY = ("<html><head><title>{title}</title></head><body>"
        "<div class='banner'>Special offer: {offer}</div>"
        "<main><h1>Kettle 2000</h1><p>It boils water in {minutes} minutes.</p>"
        "<p><a href='/downloads/Kettle-Manual-{version}.PDF'>Manual</a></p></main>"
        "<footer><p>Visitors: {visitors}</p></footer></body></html>")


def serve(site: HostileSite, *, title: str, offer: str, minutes: int, visitors: int, version: str) -> None:
    body = BODY.format(title=title, offer=offer, minutes=minutes, visitors=visitors, version=version).encode()
    for path in ("/plain", "/titled", "/download", "/banner"):
        site.good[path] = page(body)


def crawler_watches(crawler: Crawler) -> list[dict[str, Any]]:
    watches: list[dict[str, Any]] = yaml.safe_load(crawler.watchlist.read_text(encoding="utf-8"))["watches"]
    return watches


def changed_lines(record: dict[str, Any]) -> list[str]:
    return [line for line in record["diff"].split("\n") if line[:1] in "+-"]


def test_include_and_ignore_over_six_runs(site: HostileSite, tmp_path: Path) -> None:
    crawler = Crawler(tmp_path, [
        {"key": "plain", "url": f"{site.base}/plain"},
        # a region leaves the banner out; the title is the page's, the links the region's
        {"key": "titled", "url": f"{site.base}/titled", "region": "main", "include": ["title"]},
        {"key": "download", "url": f"{site.base}/download", "region": "main", "include": "links"},
        {"key": "banner", "url": f"{site.base}/banner",
         "ignore": {"selectors": [".banner"], "text": [r"^Visitors: \d+"]}},
    ])
    serve(site, title="Kettle 2000 | Shop", offer="free delivery", minutes=3, visitors=100, version="v1")
    first = crawler.run()
    assert first.returncode == 0 and first.records == [], first.stderr[-3000:]

    # the title, the manual's link, the banner and the counter change; nothing else
    serve(site, title="Kettle 2000 | Sale", offer="10% off", minutes=3, visitors=181, version="V2")
    second = crawler.run()
    assert second.returncode == 0, second.stderr[-3000:]
    records = by_key(second.records)
    # plain: the banner (not ignored there) changed; the title alone would not have been seen
    assert set(records) == {"plain", "titled", "download"}, records
    assert "[title]" not in records["plain"]["diff"] and "Special offer" in records["plain"]["diff"]
    assert records["titled"]["kind"] == records["download"]["kind"] == "content"
    assert changed_lines(records["titled"]) == ["- [title] Kettle 2000 | Shop", "+ [title] Kettle 2000 | Sale"]
    # the URL as written: its case, its port
    assert changed_lines(records["download"]) == [f"- [link] {site.base}/downloads/Kettle-Manual-v1.PDF",
                                                  f"+ [link] {site.base}/downloads/Kettle-Manual-V2.PDF"]

    # the banner and the counter move again, and beside them a real change
    serve(site, title="Kettle 2000 | Sale", offer="20% off", minutes=5, visitors=262, version="V2")
    third = crawler.run()
    assert third.returncode == 0, third.stderr[-3000:]
    records = by_key(third.records)
    assert {"banner", "titled", "download"} <= set(records), records
    assert changed_lines(records["banner"]) == ["- It boils water in 3 minutes.", "+ It boils water in 5 minutes."]

    # nothing moves but what is ignored: silence
    serve(site, title="Kettle 2000 | Sale", offer="30% off", minutes=5, visitors=343, version="V2")
    fourth = crawler.run()
    assert fourth.returncode == 0, fourth.stderr[-3000:]
    assert set(by_key(fourth.records)) == {"plain"}  # the only watch that does not ignore the banner

    # the plain watch is edited to ignore the banner and the counter and to compare links: re-baselined, silently
    # (the options are in the observation's options), even as the banner moves
    plain = {"key": "plain", "url": f"{site.base}/plain", "include": "links",
             "ignore": {"selectors": ".banner", "text": r"^Visitors: \d+"}}
    crawler.write_watchlist([plain, *crawler_watches(crawler)[1:]])
    serve(site, title="Kettle 2000 | Sale", offer="40% off", minutes=5, visitors=424, version="V2")
    fifth = crawler.run()
    assert fifth.returncode == 0 and fifth.records == [], fifth.stderr[-3000:]
    serve(site, title="Kettle 2000 | Sale", offer="50% off", minutes=5, visitors=505, version="v3")
    sixth = crawler.run()
    records = by_key(sixth.records)
    assert sixth.returncode == 0 and set(records) == {"plain", "download"}, sixth.stderr[-3000:]
    assert changed_lines(records["plain"]) == changed_lines(records["download"]) == [
        f"- [link] {site.base}/downloads/Kettle-Manual-V2.PDF", f"+ [link] {site.base}/downloads/Kettle-Manual-v3.PDF"]
