"""Scrapyd jobs with a site watch: the project deployed to a real Scrapyd (test_scrapyd.py's
environment and helpers), ``watch`` jobs scheduled through schedule.json over a watchlist holding a
sitemap-mode site watch of a site built from ../shared/corpus's real pages. The first job is a
silent baseline; the second reports the page added, the page removed and the page changed."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from changewatch.core.urls import canonical_url

from .corpus_site import CORPUS, CorpusSite, corpus_articles
from .test_scrapyd import ENV_DIR, Scrapyd, checkout, deploy, serve

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (CORPUS / "MANIFEST.tsv").exists(), reason="../shared/corpus is not here")]

__all__ = ["checkout"]


def finished_well(server: Scrapyd, job: str) -> str:
    """The job's log, once Scrapyd saw its process exit 0 and the crawl finish for no other reason."""
    log = server.job_log(job)
    assert "ERROR" not in log and "Traceback" not in log, log[-3000:]
    assert "'finish_reason': 'finished'" in log, log[-3000:]
    assert re.search(rf"Process finished: .*job='{job}'", server.log.read_text()), server.log.read_text()[-2000:]
    return log


def test_watch_jobs_with_a_site_watch(checkout: Path, tmp_path: Path) -> None:
    site = CorpusSite(corpus_articles(14))
    site.base = site.start()
    try:
        site.live = list(site.pages)[:12]
        site.lastmod = dict.fromkeys(site.live, "2026-11-20")
        (tmp_path / "scrapyd").mkdir()
        with serve(ENV_DIR, tmp_path / "scrapyd", items=True) as server:
            (server.workdir / "watchlist.json").write_text(json.dumps({"watches": [
                {"key": "blog", "site": {"sitemap": f"{site.base}/sitemap.xml"}}]}), encoding="utf-8")
            deploy(checkout, server, tmp_path)
            private = "CHANGEWATCH_ALLOW_PRIVATE=True"

            baseline = server.schedule(private, watchlist="watchlist.json")
            server.wait(baseline)
            log = finished_well(server, baseline)
            assert server.records(baseline) == []  # the first job: a silent baseline of the site
            assert "'changewatch/site/discovered': 1" in log, log[-3000:]
            assert sorted(p for p in site.requested if p.startswith("/posts/")) == sorted(site.live)

            # a page removed, a page added, a page changed (its lastmod moves)
            today = datetime.now(UTC).date().isoformat()
            removed, added, changed = site.live[0], list(site.pages)[12], site.live[5]
            site.live = [p for p in site.live if p != removed] + [added]
            site.lastmod[added] = today
            sentence = "Quietly revised: this clause now requires written notice within ninety days."
            site.edit(changed, sentence, lastmod=today)

            second = server.schedule(private, watchlist="watchlist.json")
            server.wait(second)
            finished_well(server, second)
            records = server.records(second)
            (pages_set,) = [r for r in records if r["key"] == "blog"]
            assert pages_set["kind"] == "entities" and pages_set["site_watch"] == "blog"
            assert [e["url"] for e in pages_set["added"]] == [canonical_url(site.base + added)]
            assert [e["url"] for e in pages_set["removed"]] == [canonical_url(site.base + removed)]
            pages = [r for r in records if r["key"] != "blog"]
            assert [(r["key"], r["kind"], r["site_watch"]) for r in pages] == [
                (f"blog|{canonical_url(site.base + changed)}", "content", "blog")], pages
            assert sentence in pages[0]["diff"]
    finally:
        site.stop()
