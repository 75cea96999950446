"""A site's pages get everything any watch gets, end to end (real crawls of the corpus site,
tests/e2e/corpus_site.py): calibration and learned noise, the confirmation of a change, each
page's own schedule (and a moved lastmod making a page due early), notifications with `when:`
conditions (one message per site and run), the exit status of a run whose discovery failed, and
``changewatch preview`` / ``changewatch status --site-watch`` of a site watch."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from changewatch.core.urls import canonical_url

from .corpus_site import CORPUS, CorpusSite, corpus_articles
from .crawl import Crawler, scrapy_env
from .site_runs import crawl, page_records, posts_requested, serving, set_records

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (CORPUS / "MANIFEST.tsv").exists(), reason="../shared/corpus is not here")]


@pytest.fixture
def site() -> Iterator[CorpusSite]:
    yield from serving(CorpusSite(corpus_articles(8)))


def cli(crawler: Crawler, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "changewatch.cli", *args], cwd=crawler.workdir, env=scrapy_env(),
                          capture_output=True, text=True, timeout=120, check=check)


def key(site: CorpusSite, site_key: str, path: str) -> str:
    return f"{site_key}|{canonical_url(site.base + path)}"


def test_calibration_and_confirmation_of_a_sites_pages(tmp_path: Path, site: CorpusSite) -> None:
    site.live = list(site.pages)[:5]
    crawler = Crawler(tmp_path, [{"key": "blog", "site": {"sitemap": site.base + "/sitemap.xml"}}])
    first = crawl(crawler, 0, "-a", "calibrate=3")
    assert first.returncode == 0 and first.records == [], first.records
    assert first.stats["changewatch/calibration/requests"] == 3 * len(site.live)
    # each page learned its own normal variation from the three loads
    for path in site.live:
        learned = json.loads(cli(crawler, "explain", key(site, "blog", path), "--store", crawler.store,
                                 "--json").stdout)
        assert learned["calibration_loads"] == 3, (path, learned)
    # a rotating quote is new on every load: no second load confirms it, nothing is reported;
    # an edit is confirmed by the second load and reported with the page's own words
    rotating, edited = site.live[0], site.live[1]
    site.rotating.add(rotating)
    site.edit(edited, "Refunds are now issued within NINETY days, by cheque only.")
    second = crawl(crawler, 1)
    assert [(r["key"], r["kind"], r.get("confirmed")) for r in second.records] == [
        (key(site, "blog", edited), "content", True)], second.records
    assert "Refunds are now issued within NINETY days, by cheque only." in second.records[0]["diff"]
    assert second.records[0]["site_watch"] == "blog"
    # both candidates were loaded again; the rotating page's was dropped
    assert (second.stats.get("changewatch/confirm/sent"), second.stats.get("changewatch/confirm/dropped")) == (2, 1)
    # the noise on every load (clock times, tokens, "N minutes ago") stays quiet run after run
    site.rotating.clear()
    assert crawl(crawler, 2).records == []
    assert crawl(crawler, 3).records == []


def test_each_page_keeps_its_own_schedule_and_a_moved_lastmod_makes_it_due(tmp_path: Path,
                                                                            site: CorpusSite) -> None:
    site.live = list(site.pages)[:6]
    daily, weekly, lastmodded = site.live[0], site.live[1:3], site.live[3:]
    site.lastmod = dict.fromkeys(lastmodded, "2026-11-20")
    crawler = Crawler(tmp_path, [{"key": "blog", "site": {"sitemap": site.base + "/sitemap.xml"}, "every": "3d",
                                  "rules": [{"match": daily.rsplit("/", 1)[1] + "$", "every": "1d"}]}])
    assert crawl(crawler, 0).records == []
    # a day later: the page with every: 1d is due, those with the watch's every: 3d are not; a page
    # whose lastmod moved is fetched though its 3 days are not up, and its change reported
    moved = lastmodded[0]
    site.edit(moved, "The office moves to the harbour building in January.", lastmod="2026-12-02")
    mark = len(site.requested)
    records = crawl(crawler, 1).records
    assert set(posts_requested(site, mark)) == {daily, moved}, posts_requested(site, mark)
    assert [r["key"] for r in records] == [key(site, "blog", moved)]
    # three days after the first run, the others are due
    mark = len(site.requested)
    crawl(crawler, 3)
    assert set(weekly) <= set(posts_requested(site, mark)), posts_requested(site, mark)


def test_notify_when_sends_one_message_per_site_with_the_pages_whose_condition_holds(
        tmp_path: Path, site: CorpusSite) -> None:
    from ..notify.servers import ScriptedServer, webhook

    receiver = ScriptedServer()
    try:
        site.live = list(site.pages)[:5]
        for path in site.live:
            site.edit(path, '<span class="price">89.00 EUR</span>')
        crawler = Crawler(tmp_path, [{"key": "shop", "site": {"sitemap": site.base + "/sitemap.xml"},
                                      "fields": {"price": "span.price::text"}, "kinds": {"price": "price"},
                                      "notify": {"urls": webhook(receiver), "when": "price < 80"}}])
        notify = ("-s", "CHANGEWATCH_NOTIFY_TIMEOUT=5", "-s", "CHANGEWATCH_NOTIFY_RETRIES=0")
        assert crawl(crawler, 0, *notify).records == [] and receiver.received == []
        cheaper, dearer, cheapest = site.live[:3]
        site.edit(cheaper, '<span class="price">79.00 EUR</span>')
        site.edit(dearer, '<span class="price">95.00 EUR</span>')
        site.edit(cheapest, '<span class="price">59.00 EUR</span>')
        records = crawl(crawler, 1, *notify).records
        changed = {r["url"]: r for r in page_records(records, "shop")}
        assert len(changed) == 3 and all(r["kind"] == "field" for r in changed.values()), records
        [message] = receiver.received  # one message for the site, not one per page
        sent = message.json["message"]
        assert sent.startswith("== site watch shop: 2 pages changed"), sent[:300]
        for path, price in ((cheaper, "79"), (cheapest, "59")):
            record = changed[canonical_url(site.base + path)]
            assert f"change {record['change_id']}," in sent and "sent as price < 80 holds" in sent
            assert [c["when"] for c in record["conditions"]] == ["price < 80"], record
            assert price in json.dumps(record["changes"])
        assert f"change {changed[canonical_url(site.base + dearer)]['change_id']}," not in sent
    finally:
        receiver.stop()


def test_the_exit_status_of_a_site_watch_whose_discovery_or_pages_all_failed(tmp_path: Path,
                                                                             site: CorpusSite) -> None:
    site.live = list(site.pages)[:4]
    crawler = Crawler(tmp_path, [{"key": "blog", "site": {"sitemap": site.base + "/sitemap.xml"}}])
    # the first run's sitemap fails: nothing of the site was observed, a failed watch: exit 1
    site.overrides["/sitemap.xml"] = (500, "text/html", b"oops")
    failed = crawl(crawler, 0)
    assert failed.returncode == 1, failed.stderr[-3000:]
    assert [(r["key"], r["kind"]) for r in failed.records] == [("blog", "error")]
    assert "not one page was observed" in failed.stderr
    site.overrides.clear()
    assert crawl(crawler, 1).returncode == 0  # the baseline
    # the sitemap is read, and every page of the site fails: not one page observed, exit 1
    site.failing = set(site.live)
    every_page = crawl(crawler, 2, "-a", "force=1")
    assert {r["kind"] for r in page_records(every_page.records, "blog")} == {"error"}
    assert every_page.returncode == 1, every_page.stderr[-3000:]
    # the sitemap fails, and the last good set's pages are observed: the crawl did its work, exit 0
    site.failing.clear()
    site.overrides["/sitemap.xml"] = (500, "text/html", b"oops")
    pages_only = crawl(crawler, 3, "-a", "force=1")
    assert [r["kind"] for r in set_records(pages_only.records, "blog")] == ["error"]
    assert pages_only.returncode == 0, pages_only.stderr[-3000:]


def test_preview_and_status_of_a_site_watch(tmp_path: Path, site: CorpusSite) -> None:
    site.live = list(site.pages)[:4]
    site.lastmod = dict.fromkeys(site.live, "2026-11-20")
    crawler = Crawler(tmp_path, [{"key": "blog", "site": {"sitemap": site.base + "/sitemap.xml",
                                                           "deny": [site.live[3] + "$"]}}])
    private = ("-s", "CHANGEWATCH_ALLOW_PRIVATE=True")
    preview = json.loads(cli(crawler, "preview", "--watchlist", str(crawler.watchlist), "--key", "blog", "--json",
                             *private).stdout)
    assert [p["url"] for p in preview["pages"]] == sorted(canonical_url(site.base + p) for p in site.live[:3])
    assert {p["lastmod"] for p in preview["pages"]} == {"2026-11-20"} and preview["mode"] == "sitemap"
    assert not (tmp_path / "state.db").exists()  # nothing stored
    assert not [p for p in site.requested if p.startswith("/posts/")]  # no page fetched in sitemap mode
    assert crawl(crawler, 0).records == []
    status = cli(crawler, "status", "--site-watch", "blog", "--json", "--store", crawler.store).stdout.splitlines()
    rows = [json.loads(line) for line in status]
    keys = [row["key"] for row in rows if "key" in row]
    assert keys == ["blog", *sorted(key(site, "blog", p) for p in site.live[:3])], keys
    # another site watch's keys are not listed
    assert cli(crawler, "status", "--site-watch", "bl", "--json", "--store", crawler.store).stdout.count('"key"') == 0


def test_link_mode_sends_conditional_requests_and_a_304_still_leads_to_the_pages_it_links_to(
        tmp_path: Path, site: CorpusSite) -> None:
    site.live = list(site.pages)[:8]
    site.validators = True
    linking, only_linked, edited = site.live[0], site.live[7], site.live[3]
    site.hidden = {only_linked}  # not on the index: found through linking's "See also" alone
    site.related = {linking: only_linked}
    crawler = Crawler(tmp_path, [{"key": "posts", "site": {
        "start": site.base + "/", "allow": [r"/posts/[^/?]+$"], "follow": [r"/page/\d+$"], "deny": ["/calendar"]},
        "headers": {"X-Reader": "changewatch test"}}])
    first = crawl(crawler, 0, "-a", "calibrate=2")  # each page calibrated too, as any watch
    assert first.records == [] and first.stats["changewatch/site/pages"] == 8
    assert first.stats["changewatch/calibration/requests"] == 2 * 8
    assert sorted(site.full) == sorted(site.live * 3)
    # each page is requested as its own watch: with the watch's headers (not the index pages)
    assert {site.headers[p].get("X-Reader") for p in site.live} == {"changewatch test"}
    assert site.headers["/"].get("X-Reader") is None
    # nothing changed: every page answers a 304, and the one found only through a 304 stays in the set
    site.full.clear()
    second = crawl(crawler, 1)
    assert second.records == [], second.records
    assert site.full == []  # not one page downloaded in full
    assert second.stats["changewatch/conditional/not_modified"] == 8
    assert second.stats["changewatch/site/pages"] == 8
    # a page edited, and the link to only_linked dropped: both fetched in full (and again, to confirm
    # the change); only_linked is no longer linked: removed; the others stay 304s
    site.full.clear()
    site.edit(edited, "The tariff for late returns doubles from the first of March.")
    del site.related[linking]
    third = crawl(crawler, 2)
    assert sorted(site.full) == sorted([linking, linking, edited, edited]), site.full
    (pages_set,) = set_records(third.records, "posts")
    assert "confirmed" not in pages_set  # the page set is no page: its changes are not loaded again
    assert third.stats["changewatch/confirm/sent"] == 2
    assert [e["url"] for e in pages_set["removed"]] == [canonical_url(site.base + only_linked)]
    assert "added" not in pages_set
    assert {r["key"] for r in page_records(third.records, "posts")} == {
        key(site, "posts", linking), key(site, "posts", edited)}
    # the next run: the changed pages' validators (from the load that confirmed them) kept their
    # links too, so every page answers a 304 again
    site.full.clear()
    fourth = crawl(crawler, 3)
    assert fourth.records == [] and site.full == [], (fourth.records, site.full)
    assert fourth.stats["changewatch/site/pages"] == 7
    # the pages' links were kept as these patterns follow them: other patterns, each page fetched in full
    site.full.clear()
    crawler.write_watchlist([{"key": "posts", "site": {
        "start": site.base + "/", "allow": [r"/posts/[^/?]+$"], "follow": [r"/page/\d+$"],
        "deny": ["/calendar", "/archive/"]}, "headers": {"X-Reader": "changewatch test"}}])
    fifth = crawl(crawler, 4)
    assert fifth.records == [] and sorted(site.full) == sorted(p for p in site.live if p != only_linked)
    assert fifth.stats["changewatch/conditional/full_fetch_spec_changed"] == 7


def test_link_mode_a_304_to_a_request_without_validators_is_an_error(tmp_path: Path, site: CorpusSite) -> None:
    site.live = list(site.pages)[:5]  # no validators: every page is fetched in full
    crawler = Crawler(tmp_path, [{"key": "posts", "site": {
        "start": site.base + "/", "allow": [r"/posts/[^/?]+$"], "deny": ["/calendar", "/tag/"]}}])
    assert crawl(crawler, 0).records == []
    odd = site.live[1]
    site.overrides[odd] = (304, "text/html", b"")
    result = crawl(crawler, 1)
    assert [(r["key"], r["kind"]) for r in result.records] == [(key(site, "posts", odd), "error")], result.records
    assert result.records[0]["error"].startswith("http: "), result.records[0]
    assert result.stats["changewatch/conditional/unexpected_not_modified"] == 1
