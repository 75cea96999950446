"""Scrapyd jobs with a site watch: the project deployed to a real Scrapyd (test_scrapyd.py's
environment and helpers), ``watch`` jobs scheduled through schedule.json over a watchlist holding a
sitemap-mode site watch of a site built from ../shared/corpus's real pages. The first job is a
silent baseline; the second reports the page added, the page removed and the page changed. Then
the same as rounds of two jobs at once sharing a scrapy-redis queue (a redis-server of the test's
own) and a PostgreSQL store."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from .corpus_site import CORPUS, CorpusSite, corpus_articles
from .rounds import RedisServer
from .site_runs import Churn, check_churn, churn, serving
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


@pytest.fixture(scope="module")
def server(checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scrapyd]:
    """A real Scrapyd with items_dir (a feed per job), the project deployed to it."""
    with serve(ENV_DIR, tmp_path_factory.mktemp("scrapyd"), items=True) as scrapyd:
        deploy(checkout, scrapyd, tmp_path_factory.mktemp("deploy"))
        yield scrapyd


@pytest.fixture
def site() -> Iterator[CorpusSite]:
    served = CorpusSite(corpus_articles(14))
    served.live = list(served.pages)[:12]
    served.lastmod = dict.fromkeys(served.live, "2026-11-20")
    yield from serving(served)


def one_each(site: CorpusSite) -> Churn:
    """A page removed, a page added, a page changed, dated today (a Scrapyd job runs on the real clock)."""
    return churn(site, datetime.now(UTC).date().isoformat(), changed=1, each_way=1)


def posts(site: CorpusSite) -> list[str]:
    return sorted(p.split("?")[0] for p in site.requested if p.startswith("/posts/"))


def test_watch_jobs_with_a_site_watch(server: Scrapyd, site: CorpusSite) -> None:
    (server.workdir / "watchlist.json").write_text(json.dumps({"watches": [
        {"key": "blog", "site": {"sitemap": f"{site.base}/sitemap.xml"}}]}), encoding="utf-8")
    private = "CHANGEWATCH_ALLOW_PRIVATE=True"

    baseline = server.schedule(private, watchlist="watchlist.json")
    server.wait(baseline)
    log = finished_well(server, baseline)
    assert server.records(baseline) == []  # the first job: a silent baseline of the site
    assert "'changewatch/site/discovered': 1" in log, log[-3000:]
    assert posts(site) == sorted(site.live)

    churned = one_each(site)
    second = server.schedule(private, watchlist="watchlist.json")
    server.wait(second)
    finished_well(server, second)
    check_churn(server.records(second), site, "blog", churned, confirmed=True)


def test_scrapyd_jobs_sharing_rounds_with_a_site_watch(server: Scrapyd, site: CorpusSite, pg_store: str,
                                                       own_redis: RedisServer) -> None:
    """Two jobs at once per round, the RoundScheduler named in schedule.json's settings: the
    sitemap is read by one of them, each page fetched once, the set judged once."""
    (server.workdir / "round.json").write_text(json.dumps({"watches": [
        {"key": "docs", "site": {"sitemap": f"{site.base}/sitemap.xml"}}]}), encoding="utf-8")
    settings = ("CHANGEWATCH_ALLOW_PRIVATE=True", f"CHANGEWATCH_STORE={pg_store}", f"REDIS_URL={own_redis.url}",
                "SCHEDULER=changewatch.distributed.RoundScheduler", "CHANGEWATCH_CONFIRM_CHANGES=False")
    churned = None
    for round_ in ("s1", "s2"):
        site.requested.clear()
        jobs = [server.schedule(*settings, f"CHANGEWATCH_ROUND={round_}", watchlist="round.json") for _ in range(2)]
        finished = server.wait(*jobs)
        for job in jobs:
            finished_well(server, job)
        assert finished[jobs[0]]["start_time"] < finished[jobs[1]]["end_time"], "the jobs did not overlap"
        assert [p for p in site.requested if p.startswith("/sitemap.xml")] == ["/sitemap.xml"]  # read once
        fetched = posts(site)
        assert len(fetched) == len(set(fetched))  # each page once in the round
        records = [r for job in jobs for r in server.records(job)]
        if churned is None:
            assert records == [] and fetched == sorted(site.live)
            churned = one_each(site)
        else:
            check_churn(records, site, "docs", churned, confirmed=False)
