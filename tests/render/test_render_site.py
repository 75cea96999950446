"""`render: true` on a site watch: every page of its sitemap rendered in real Chromium (the shell
pages of tests/render/site.py, filled in by a script), re-checked before it is rendered again, and
a page's data change reported as the page's own record under the site watch."""

from __future__ import annotations

from pathlib import Path

import pytest

from changewatch.core.urls import canonical_url
from tests.changes import field

from ..e2e.crawl import Crawler
from .site import JsSite
from .test_render_crawl import _render_stats

pytestmark = pytest.mark.slow  # crawls in subprocesses that render in Chromium


def _sitemap(js_site: JsSite) -> bytes:
    rows = "".join(f"<url><loc>{js_site.url(name)}</loc></url>" for name in js_site.pages)
    return f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{rows}</urlset>'.encode()


def test_a_site_watchs_pages_are_rendered(js_site: JsSite, tmp_path: Path) -> None:
    js_site.extra["/sitemap.xml"] = lambda h: js_site.send(h, _sitemap(js_site), "application/xml", validators=False)
    crawler = Crawler(tmp_path, [{"key": "js", "site": {"sitemap": js_site.base + "/sitemap.xml"}, "render": True,
                                  "fields": {"price": ".price::text"}}])
    first = crawler.run()
    assert first.returncode == 0 and first.records == [], (first.records, first.stderr[-3000:])
    assert _render_stats(first)["rendered"] == 3  # the shell alone has no price: an error had it not rendered
    assert js_site.hits["/sitemap.xml"] == 1 and js_site.hits["/app.js"] >= 3

    js_site.pages["p1"]["price"] = "8.25 EUR"
    second = crawler.run()
    assert second.returncode == 0, second.stderr[-3000:]
    assert [(r["key"], r["kind"], r["site_watch"], r["changes"]) for r in second.records] == [
        (f"js|{canonical_url(js_site.url('p1'))}", "field", "js", {"price": field("11.00 EUR", "8.25 EUR")})]
    stats = _render_stats(second)
    # the two unchanged pages were re-checked by conditional requests and not rendered; the changed
    # one was rendered, and rendered again to confirm the change
    assert stats["avoided"] == 2 and stats["why_changed"] == 1 and stats["rendered"] == 2, stats


def test_a_link_mode_sites_pages_are_rendered_and_a_render_not_needed_still_leads_on(js_site: JsSite,
                                                                                    tmp_path: Path) -> None:
    # the index links to p0, p0 to p1 and p2 (in its shell): p1 and p2 are found through p0 alone
    index = f'<html><body><a href="{js_site.url("p0")}">first</a></body></html>'.encode()
    js_site.extra["/"] = lambda h: js_site.send(h, index, "text/html; charset=utf-8", validators=False)
    js_site.shell = js_site.shell.replace(
        "<h1>{name}</h1>", '<h1>{name}</h1><nav><a href="/p/p1">one</a> <a href="/p/p2">two</a></nav>')
    crawler = Crawler(tmp_path, [{"key": "js", "site": {"start": js_site.base + "/", "allow": ["/p/"]},
                                  "render": True, "fields": {"price": ".price::text"}}])
    first = crawler.run()
    assert first.returncode == 0 and first.records == [], (first.records, first.stderr[-3000:])
    assert _render_stats(first)["rendered"] == 3 and first.stats["changewatch/site/pages"] == 3
    second = crawler.run()
    assert second.returncode == 0 and second.records == [], (second.records, second.stderr[-3000:])
    # no page rendered again; p0's kept links still lead to p1 and p2, which stay in the set
    assert _render_stats(second)["avoided"] == 3 and "rendered" not in _render_stats(second)
    assert second.stats["changewatch/site/links_not_modified"] == 3
    assert second.stats["changewatch/site/pages"] == 3
