"""Site watches end to end: a site built from ../shared/corpus's real pages, crawled in sitemap and
link modes, with pages added, removed and changed between runs and noise on every load; then the
bad inputs that must never turn into removals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from changewatch.core.urls import canonical_url

from .corpus_site import CORPUS, CorpusSite, corpus_articles, simulate
from .crawl import Crawler
from .site_runs import (
    DAY,
    check_churn,
    churn,
    crawl,
    page_records,
    posts_requested,
    second_turn_page,
    serving,
    set_records,
    urls,
)

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (CORPUS / "MANIFEST.tsv").exists(), reason="../shared/corpus is not here")]


def run(crawler: Crawler, day: int, *extra: str) -> list[dict[str, Any]]:
    return crawl(crawler, day, *extra).records


@pytest.fixture
def site() -> Iterator[CorpusSite]:
    yield from serving(CorpusSite(corpus_articles(26)))


def test_sitemap_mode_reports_pages_added_removed_and_changed(tmp_path: Path, site: CorpusSite) -> None:
    site.live = list(site.pages)[:20]
    site.lastmod = dict.fromkeys(site.live, "2026-11-20")
    denied = site.live[19]
    crawler = Crawler(tmp_path, [{"key": "blog", "site": {"sitemap": site.base + "/robots.txt",
                                                           "deny": [denied + "$"]}}])
    assert run(crawler, 0) == []  # the first run: a silent baseline of the whole site
    churned = churn(site, "2026-12-02", 10)
    mark = len(site.requested)
    records = run(crawler, 1)
    check_churn(records, site, "blog", churned, confirmed=True)
    # lastmod is accurate here: of the unchanged pages whose lastmod did not move, ~10% are checked
    unmoved = [p for p in site.live if p not in churned.edits and p not in churned.added and p != denied]
    fetched = [p for p in posts_requested(site, mark) if p in unmoved]
    # (a handful here: the share is measured on 1,000 pages in tests/core/test_siteset.py)
    assert len(fetched) < len(unmoved) / 2, (len(fetched), len(unmoved))
    assert denied not in posts_requested(site, 0)  # denied: never requested
    # a removed page comes back, changed meanwhile: added again, with a fresh silent baseline
    back = churned.removed[0]
    site.live.append(back)
    site.edit(back, "This page came back with words it never had before.", lastmod="2026-12-03")
    records = run(crawler, 2)
    assert [urls(r["added"]) for r in set_records(records, "blog")] == [{canonical_url(site.base + back)}]
    assert page_records(records, "blog") == []


def test_sitemap_bad_inputs_never_remove_pages(tmp_path: Path, site: CorpusSite) -> None:
    site.live = list(site.pages)[:20]
    crawler = Crawler(tmp_path, [{"key": "blog", "site": {"sitemap": site.base + "/sitemap.xml"}}])
    assert run(crawler, 0) == []
    good = site.sitemap(site.base)
    bad = {
        "truncated": (200, "application/xml", good[:len(good) // 2]),
        "not a sitemap": (200, "text/html", b"<!DOCTYPE html><html><body>Are you a robot?</body></html>"),
        "empty": (200, "application/xml", b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"></urlset>'),
        "refused": (200, "application/xml", b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">'
                                            b'<!ENTITY b "&a;&a;&a;&a;">]><urlset>&b;</urlset>'),
        "http": (500, "text/html", b"oops"),
    }
    errors = []
    for day, (name, answer) in enumerate(bad.items(), 1):
        site.overrides["/sitemap.xml"] = answer
        records = run(crawler, day)
        assert not any(r.get("removed") for r in records), (name, records)
        errors += [r["error"] for r in set_records(records, "blog") if r["kind"] == "error"]
    assert errors and errors[0].startswith("truncated:"), errors
    # a sitemap that suddenly lists a small part: the loss is not confirmed (the pages still answer)
    site.overrides.clear()
    kept = site.live
    site.live = kept[:4]
    site.overrides["/sitemap.xml"] = (200, "application/xml", site.sitemap(site.base))
    site.live = kept
    records = run(crawler, 6)
    assert not any(r.get("removed") for r in records), records
    # half the pages answer 503: errors of those pages, not removals
    site.overrides.clear()
    site.failing = set(site.live[::2])
    records = run(crawler, 7, "-a", "force=1")
    assert not any(r.get("removed") for r in records), records
    # the next good run compares with the last good set: nothing came or went
    site.failing.clear()
    records = run(crawler, 8)
    assert not set_records(records, "blog") or all(r["kind"] == "recovered" for r in set_records(records, "blog"))


def test_link_mode_reports_pages_added_removed_and_changed(tmp_path: Path, site: CorpusSite) -> None:
    site.live = list(site.pages)[:20]
    crawler = Crawler(tmp_path, [{"key": "posts", "site": {
        "start": site.base + "/", "allow": [r"/posts/[^/?]+$"], "follow": [r"/page/\d+$", r"/calendar"],
        "deny": ["/tag/"], "depth": 4}}])
    assert run(crawler, 0) == []
    churned = churn(site, "2026-12-02", 10)
    check_churn(run(crawler, 1), site, "posts", churned, confirmed=True)
    assert not [p for p in site.requested if p.startswith("/tag/")]  # 0 requests into denied paths
    # a link trap, bounded by depth (4 hops, two runs): a month found again by a shorter path
    # before its first request was answered may be requested once more, as the crawl's order has it
    assert sum(p.startswith("/calendar") for p in site.requested) <= 2 * 4 + 2
    # a captcha start page: an error of the set, which keeps its baseline
    site.overrides["/"] = (200, "text/html", b"<html><body><h1>Are you a robot?</h1></body></html>")
    records = run(crawler, 2)
    assert [r["kind"] for r in set_records(records, "posts")] == ["error"]
    assert not any(r.get("removed") for r in records)
    # the second index page fails: the pages only it links to are not removed
    site.overrides = {"/page/2": (503, "text/html", b"busy")}
    records = run(crawler, 3)
    assert not any(r.get("removed") for r in records), records


def test_lastmod_that_does_not_move_is_found_out_then_every_page_is_checked(tmp_path: Path, site: CorpusSite) -> None:
    from changewatch.core.siteset import LASTMOD_SAMPLE, _turn_of
    from changewatch.store.sqlite import SQLiteStore

    site.live = list(site.pages)[:20]
    # the lastmod sample takes it in the second run (the site's key has one observation then)
    sampled = second_turn_page(site)
    other = next(p for p in site.live if _turn_of(canonical_url(site.base + p), LASTMOD_SAMPLE) != 1)
    site.lastmod = dict.fromkeys(site.live, "2026-11-20")  # a site that never updates its lastmod
    crawler = Crawler(tmp_path, [{"key": "blog", "site": {"sitemap": site.base + "/sitemap.xml"}}])
    assert run(crawler, 0) == []
    site.edit(sampled, "The sampled page now says something entirely different about deadlines.")
    site.edit(other, "Another page quietly changed its refund terms to sixty days.")
    simulate(DAY[1])
    result = crawler.run("-s", f"TESTS_NOW={DAY[1]}")
    changed = {r["url"] for r in page_records(result.records, "blog")}
    assert changed == {canonical_url(site.base + sampled)}  # the sample found it; the other is not fetched yet
    assert result.stats.get("changewatch/site/lastmod_wrong") == 1
    assert "lastmod did not move" in result.stderr
    health = [r for r in result.records if r.get("health")]
    assert [(r["kind"], r["health"]["condition"], r["site_watch"]) for r in health] == [
        ("error", "lastmod:blog", "blog")]
    assert health[0]["error"].startswith("health: lastmod: site watch blog: ") and sampled in health[0]["error"]
    # untrusted: every page is checked; the other change is found
    simulate(DAY[2])
    result = crawler.run("-s", f"TESTS_NOW={DAY[2]}")
    assert {r["url"] for r in page_records(result.records, "blog")} == {canonical_url(site.base + other)}
    assert not [r for r in result.records if r.get("health")]  # the condition is open: said once
    assert result.stats.get("changewatch/site/lastmod_untrusted_runs") == 1
    assert result.stats.get("changewatch/site/lastmod_checked") == len(site.live)
    # that run found lastmod wrong again; the next one checks everything and finds it right...
    simulate(DAY[3])
    result = crawler.run("-s", f"TESTS_NOW={DAY[3]}")
    assert result.stats.get("changewatch/site/lastmod_checked") == len(site.live)
    assert [(r["kind"], r["health"]["condition"]) for r in result.records] == [("recovered", "lastmod:blog")]
    # ... so the one after trusts it again: only the sample is checked
    simulate(DAY[4])
    result = crawler.run("-s", f"TESTS_NOW={DAY[4]}")
    assert result.stats.get("changewatch/site/lastmod_skipped", 0) > len(site.live) // 2
    store = SQLiteStore(tmp_path / "state.db")
    store.open()
    try:
        assert store.read("watch", "blog|lastmod") is None  # the health record is the trust's only trace
    finally:
        store.close()


def test_sitemap_index_that_lists_itself_and_other_hosts_and_a_private_address(tmp_path: Path,
                                                                              site: CorpusSite) -> None:
    site.live = list(site.pages)[:6]
    index = (f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
             f"<sitemap><loc>{site.base}/index.xml</loc></sitemap>"
             f"<sitemap><loc>{site.base}/sitemap.xml</loc></sitemap>"
             "<sitemap><loc>http://elsewhere.invalid/sitemap.xml</loc></sitemap></sitemapindex>").encode()
    site.overrides["/index.xml"] = (200, "application/xml", index)
    crawler = Crawler(tmp_path, [{"key": "blog", "site": {"sitemap": site.base + "/index.xml"}}])
    simulate(DAY[0])
    result = crawler.run("-s", f"TESTS_NOW={DAY[0]}")
    assert result.records == [] and result.stats.get("changewatch/site/pages") == 6
    assert result.stats.get("changewatch/site/offsite") == 1
    assert site.requested.count("/index.xml") == 1  # read once, though it lists itself
    # the guard refuses a sitemap on a private address: an error of the set, nothing else requested
    (tmp_path / "refused").mkdir()
    refused = Crawler(tmp_path / "refused", [{"key": "blog", "site": {"sitemap": site.base + "/sitemap.xml"}}],
                      allow_private=False)
    mark = len(site.requested)
    simulate(DAY[0])
    result = refused.run("-s", f"TESTS_NOW={DAY[0]}")
    (record,) = result.records
    assert record["key"] == "blog" and record["error"].startswith("refused: "), record
    assert site.requested[mark:] == []


def test_a_sites_changes_are_one_message_and_the_cli_finds_them_by_site_watch(tmp_path: Path,
                                                                              site: CorpusSite) -> None:
    import json
    import subprocess
    import sys

    from ..notify.servers import ScriptedServer, webhook
    from .crawl import scrapy_env

    receiver = ScriptedServer()
    try:
        site.live = list(site.pages)[:20]
        site.lastmod = dict.fromkeys(site.live, "2026-11-20")
        crawler = Crawler(tmp_path, [{"key": "blog", "site": {"sitemap": site.base + "/sitemap.xml"},
                                      "notify": webhook(receiver)}])
        notify = ("-s", "CHANGEWATCH_NOTIFY_TIMEOUT=5", "-s", "CHANGEWATCH_NOTIFY_RETRIES=0")
        assert run(crawler, 0, *notify) == [] and receiver.received == []  # the first run: silent
        churned = churn(site, "2026-12-02", 10)
        records = run(crawler, 1, *notify)
        check_churn(records, site, "blog", churned, confirmed=True)
        [message] = receiver.received  # one message for the site, not one per page
        sent = message.json
        assert sent["title"].startswith("changewatch: site watch blog: 2 pages added, 2 pages removed, "
                                        f"{len(churned.edits)} pages changed, {len(records)} changes"), sent["title"]
        assert sent["message"].startswith("== site watch blog: 2 pages added")
        for record in records:
            assert f"change {record['change_id']}," in sent["message"]
    finally:
        receiver.stop()

    def cli(*args: str) -> list[dict[str, Any]]:
        done = subprocess.run([sys.executable, "-m", "changewatch.cli", *args, "--store", crawler.store],
                              cwd=tmp_path, env=scrapy_env(), capture_output=True, text=True, timeout=120, check=True)
        return [json.loads(line) for line in done.stdout.splitlines()]

    logged = cli("changes", "--site-watch", "blog")
    assert sorted(line["id"] for line in logged) == sorted(r["change_id"] for r in records)
    keys = [line["key"] for line in cli("status", "--site-watch", "blog", "--json")[:-1]]
    assert keys[0] == "blog" and all(k.startswith("blog|") for k in keys[1:])
    assert {k.split("|", 1)[1] for k in keys[1:]} >= {canonical_url(site.base + p) for p in site.live}
