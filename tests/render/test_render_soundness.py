"""When a re-check may not stand for a render, the page is rendered: dependencies that differ
from load to load, data fetched by POST, responses without validators (compared by their body),
and the bound on pages and contexts a crawl keeps open. Real crawls, real Chromium."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..e2e.crawl import Crawler, CrawlResult, by_key, scrapy_env
from .site import JsSite

pytestmark = pytest.mark.slow  # crawls in subprocesses that render in Chromium

VARYING = """<!doctype html><html><head><title>varying</title></head><body><main id="app">Loading…</main><script>
fetch('/data/p0.json?nocache=' + Math.random()).then(r => r.json()).then(d => {
  document.getElementById('app').textContent = d.lines.join(' '); });
</script></body></html>"""
POSTED = """<!doctype html><html><head><title>posted</title></head><body><main id="app">Loading…</main><script>
fetch('/api/search', {method: 'POST', body: 'q=kettle'}).then(r => r.json()).then(d => {
  document.getElementById('app').textContent = d.price; });
</script></body></html>"""


def _serve_odd_pages(site: JsSite) -> None:
    site.extra["/varying"] = lambda h: site.send(h, VARYING.encode(), "text/html; charset=utf-8")
    site.extra["/posted"] = lambda h: site.send(h, POSTED.encode(), "text/html; charset=utf-8")
    # the shell and its data without any validators: re-checked by their bodies
    site.extra["/bare"] = lambda h: site.send(h, site.shell.format(name="p1").encode(), "text/html; charset=utf-8",
                                             validators=False)


def test_re_checks_that_cannot_stand_for_a_render_do_not(js_site: JsSite, tmp_path: Path) -> None:
    _serve_odd_pages(js_site)
    js_site.post["/api/search"] = lambda h: js_site.send(h, json.dumps({"price": js_site.pages["p2"]["price"]})
                                                         .encode(), "application/json")
    crawler = Crawler(tmp_path, [{"url": js_site.base + "/varying", "key": "varying", "render": True},
                                 {"url": js_site.base + "/posted", "key": "posted", "render": True},
                                 {"url": js_site.base + "/bare", "key": "bare", "render": True}])
    first = crawler.run()
    assert first.returncode == 0 and first.records == [], first.stderr[-3000:]
    js_site.pages["p2"]["price"] = "1.00 EUR"  # only the POSTed data changes
    second = crawler.run()
    assert second.returncode == 0, second.stderr[-3000:]
    stats = _stats(second)
    # a POST cannot be re-checked by GET: rendered, and its change seen
    assert stats["why_deps_unknown"] == 1 and by_key(second.records)["posted"]["kind"] == "content"
    # no validators: the same bodies say it is unchanged; the varying page's data URL (its
    # cache-buster ignored by the server) answers what a render would be given: unchanged too
    assert stats["avoided"] == 2 and set(by_key(second.records)) == {"posted"}
    assert stats["rendered"] == 1 + 1 and stats["why_confirmation"] == 1  # the posted page's change, confirmed

    js_site.pages["p0"]["lines"][0] = "p0: a new first line."
    third = crawler.run()
    assert by_key(third.records)["varying"]["kind"] == "content" and _stats(third)["why_changed"] == 1
    # its render asked for another URL than the one before: the next visit renders to see again
    fourth = crawler.run()
    stats = _stats(fourth)
    assert stats["why_unconfirmed"] == 1 and stats["why_deps_unknown"] == 1 and stats["avoided"] == 1
    assert fourth.records == []


def _stats(result: CrawlResult) -> dict[str, int]:
    return {k.removeprefix("changewatch/render/"): v for k, v in result.stats.items() if "/render/" in k}


def test_at_most_the_configured_pages_and_contexts_are_open_and_each_is_closed(js_site: JsSite,
                                                                              tmp_path: Path) -> None:
    for i in range(3, 8):
        js_site.pages[f"p{i}"] = dict(js_site.pages["p0"])
    crawler = Crawler(tmp_path, [{"url": js_site.url(name), "render": True} for name in js_site.pages])
    result = crawler.run("-s", "CHANGEWATCH_RENDER_CONCURRENCY=2")
    assert result.returncode == 0, result.stderr[-3000:]
    stats = result.stats
    assert stats["changewatch/render/rendered"] == 16  # each page's baseline: two loads, each rendered
    assert stats["playwright/context_count"] == stats["playwright/page_count"] == 16  # one context per load
    assert stats["playwright/context_count/max_concurrent"] <= 2 and stats["playwright/page_count/max_concurrent"] <= 2


SPIDER = '''
from changewatch import ChangewatchSpider


class ShopSpider(ChangewatchSpider):
    name = "jsshop"
    render = {"wait_for": "span.price"}
    fields = {"price": "span.price::text"}

    async def start(self):
        yield self.watch(self.url("/p/p0"), callback=self.parse_product, key="p0")
        yield self.watch(self.url("/p/p1"), callback=self.parse_product, key="p1", render=False)

    def parse_product(self, response):
        yield self.observe(response, key=response.meta["changewatch_key"])
'''


def test_a_per_site_spider_renders_with_a_class_attribute_or_per_request(js_site: JsSite, tmp_path: Path) -> None:
    spider = tmp_path / "jsshop.py"
    spider.write_text(SPIDER)
    cmd = [sys.executable, "-m", "scrapy", "runspider", str(spider), "-a", f"site={js_site.base}",
           "-O", str(tmp_path / "changes.jsonl"), "-s", "CHANGEWATCH_ALLOW_PRIVATE=True",
           "-s", f"CHANGEWATCH_STORE=sqlite:///{tmp_path / 'state.db'}", "-s", "LOG_LEVEL=INFO"]
    proc = subprocess.run(cmd, cwd=tmp_path, env={**scrapy_env(), "PWD": str(tmp_path)}, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "changes.jsonl").read_text().splitlines()]
    # p0 was rendered (its price is there); p1 was not (render=False): its shell has no price
    assert [(r["key"], r["kind"]) for r in records] == [("p1", "error")], records
    assert "'changewatch/render/rendered': 1" in proc.stderr
    assert os.path.exists(tmp_path / "state.db")
