"""Runs of a site watch over the corpus site (tests/e2e/corpus_site.py), for the tests of site
watches in one process, in distributed rounds and in Scrapyd jobs: a crawl on a simulated day, the
records of the page set and of its pages, and the churn a test makes between two runs (pages
removed, added and changed) with the check of what the next run, or round, reports of it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple, TypeVar

from changewatch.core.urls import canonical_url

from .corpus_site import CorpusSite, simulate
from .crawl import Crawler, CrawlResult

DAY = ["2026-12-01T10:00:00Z", "2026-12-02T10:00:00Z", "2026-12-03T10:00:00Z", "2026-12-04T10:00:00Z",
       "2026-12-05T10:00:00Z", "2026-12-06T10:00:00Z", "2026-12-07T10:00:00Z", "2026-12-08T10:00:00Z",
       "2026-12-09T10:00:00Z", "2026-12-10T10:00:00Z"]

Site = TypeVar("Site", bound=CorpusSite)


def serving(site: Site) -> Iterator[Site]:
    """*site* served on a free port, its ``base`` set, stopped after the test (a fixture's body)."""
    site.base = site.start()
    yield site
    site.stop()


def crawl(crawler: Crawler, day: int, *extra: str) -> CrawlResult:
    """A run on day *day* of :data:`DAY` (the pages' stamps and the crawl's clock), without retries."""
    simulate(DAY[day])
    result = crawler.run("-s", f"TESTS_NOW={DAY[day]}", "-s", "RETRY_TIMES=0", *extra)
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    return result


def set_records(records: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return [r for r in records if r["key"] == key]


def page_records(records: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return [r for r in records if r["key"].startswith(key + "|")]


def urls(entries: list[dict[str, Any]]) -> set[str]:
    return {e["url"] for e in entries}


def posts_requested(site: CorpusSite, since: int) -> list[str]:
    return [p.split("?")[0] for p in site.requested[since:] if p.startswith("/posts/")]


def second_turn_page(site: CorpusSite) -> str:
    """A live page whose turn in the lastmod sample is the second run's (the URLs have the site's
    port in them): one of the site's, or a copy of its first page added under a name that has it."""
    from changewatch.core.siteset import LASTMOD_SAMPLE, _turn_of

    sampled = next((p for p in site.live if _turn_of(canonical_url(site.base + p), LASTMOD_SAMPLE) == 1), None)
    if sampled is None:
        n = next(n for n in range(1000)
                 if _turn_of(canonical_url(f"{site.base}/posts/sampled-{n}"), LASTMOD_SAMPLE) == 1)
        sampled = f"/posts/sampled-{n}"
        site.pages[sampled] = site.pages[site.live[0]]
        site.live.append(sampled)
    return sampled


class Churn(NamedTuple):
    removed: list[str]
    added: list[str]
    #: path → the sentence the page gained
    edits: dict[str, str]


def churn(site: CorpusSite, day: str, changed: int, each_way: int = 2) -> Churn:
    """Between two runs: *each_way* pages removed and as many added, *changed* pages given a new
    sentence; the lastmod of the pages added and changed is *day*."""
    removed, added = site.live[:each_way], [p for p in site.pages if p not in site.live][:each_way]
    site.live = [p for p in site.live if p not in removed] + added
    for path in added:
        site.lastmod[path] = day
    edits = {}
    for n, path in enumerate(site.live[2:2 + changed]):
        edits[path] = f"Quietly revised clause number {n} now requires written notice within ninety days."
        site.edit(path, edits[path], lastmod=day)
    return Churn(removed, added, edits)


def check_churn(records: list[dict[str, Any]], site: CorpusSite, key: str, churned: Churn, *, confirmed: bool,
                others: Iterable[str] = ()) -> None:
    """What the run (or the round) after *churned* reports of site watch *key*: one entities record
    of its page set (judged once, whichever process read the sitemap) naming the pages added and
    removed, one content record per page changed, its diff with the page's new sentence, confirmed
    by a second load or not as *confirmed* says; besides, only the changes of the watches *others*."""
    base = site.base
    sets = set_records(records, key)
    assert len(sets) == 1, sets  # judged once (in a round, by one process of it)
    pages_set = sets[0]
    assert pages_set["kind"] == "entities" and pages_set["site_watch"] == key
    assert sorted(e["url"] for e in pages_set["added"]) == sorted(canonical_url(base + p) for p in churned.added)
    assert sorted(e["url"] for e in pages_set["removed"]) == sorted(canonical_url(base + p) for p in churned.removed)
    assert "changed" not in pages_set
    # the set is not loaded twice: a loss is confirmed by the set's own check, an addition needs none
    assert "confirmed" not in pages_set
    # an added page's first observation is its silent baseline: only the changed pages are reported
    pages = page_records(records, key)
    assert sorted(r["url"] for r in pages) == sorted(canonical_url(base + p) for p in churned.edits), [
        (r["url"], r["kind"], (r.get("diff") or r.get("error") or "")[:600]) for r in pages]
    for r in pages:
        assert (r["key"], r["kind"], r["site_watch"]) == (f"{key}|{r['url']}", "content", key), r["key"]
        assert churned.edits[r["url"].removeprefix(base)] in r["diff"], r["diff"][:500]
        assert r.get("confirmed") is (True if confirmed else None), (r["url"], r.get("confirmed"))
    assert sorted(r["key"] for r in records if r["key"] != key and not r["key"].startswith(key + "|")) == sorted(others)
