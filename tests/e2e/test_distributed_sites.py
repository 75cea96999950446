"""Site watches in distributed rounds: real ``scrapy crawl watch`` processes sharing rounds through
``changewatch.distributed.RoundScheduler`` on a redis-server of the test's own, a real PostgreSQL
store, and a site built from ../shared/corpus's real pages (noise on every load), beside plain
watches of a product site.

A sitemap-mode site is read once per round, by the process that claims it; its pages are shared
out over the round's processes; its page set is judged once. A link-mode site is crawled whole by
the process that claims it. A process killed while it reads the sitemap leaves the set as it was:
the next round compares with the last good set.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from changewatch.core.urls import canonical_url

from .corpus_site import CORPUS, CorpusSite, corpus_articles, simulate
from .rounds import Proc, ProductSite, RedisServer, finish, price, records_of, served_products, start_round, stat
from .site_runs import DAY, Churn, check_churn, churn, second_turn_page, serving

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (CORPUS / "MANIFEST.tsv").exists(), reason="../shared/corpus is not here")]

PROCESSES = 3
PLAIN = 12  # plain watches beside the site watch
#: two requests at a time per process, so that the process that reads the sitemap cannot take
#: every page before the others ask for more (a process takes CONCURRENT_REQUESTS requests from the
#: queue at once, whatever the per-domain limit lets it download)
#: each page's fetches are counted: no second load confirms a change here (a confirmation in a round,
#: by the process that observed the change, is test_distributed.py's)
SETTINGS = ("-s", "RETRY_TIMES=0", "-s", "CONCURRENT_REQUESTS=2", "-s", "CHANGEWATCH_CONFIRM_CHANGES=False")


class LoggedSite(CorpusSite):
    """The corpus site, noting which process (its User-Agent) asked for each path; *on_request*
    is called with the path and the User-Agent before it answers."""

    def __init__(self, pages: list[tuple[str, str]]):
        super().__init__(pages)
        self.delay = 0.0  # seconds before a post answers
        self.sitemap_delay = 0.0  # seconds before the sitemap answers
        self.by: dict[str, list[str]] = defaultdict(list)
        self.on_request: Callable[[str, str], None] | None = None
        #: path → a sentence the page has only for the processes that did not read the sitemap
        self.unseen_by_reader: dict[str, str] = {}
        self.reader = ""  # the User-Agent of the process that last asked for the sitemap

    def respond_to(self, path: str, headers: dict[str, str]) -> tuple[int, str, bytes] | tuple[
            int, str, bytes, dict[str, str]]:
        agent = next((v for k, v in headers.items() if k.lower() == "user-agent"), "")
        self.by[path.split("?")[0]].append(agent)
        if self.on_request is not None:
            self.on_request(path, agent)
        if self.delay and path.startswith("/posts/"):
            time.sleep(self.delay)
        if path.startswith("/sitemap.xml"):
            self.reader = agent
            time.sleep(self.sitemap_delay)
        answer = super().respond_to(path, headers)
        status, ctype, body = answer[:3]
        sentence = self.unseen_by_reader.get(path.split("?")[0])
        if sentence is not None and agent != self.reader and status == 200:
            at = ([m.end() for m in re.finditer(rb"<body\b[^>]*>", body, flags=re.IGNORECASE)] or [0])[-1]
            body = body[:at] + f"<p>{sentence}</p>".encode() + body[at:]
            return status, ctype, body  # another body: not the one its ETag names
        return answer

    def take(self) -> dict[str, list[str]]:
        by, self.by = self.by, defaultdict(list)
        return by


@pytest.fixture
def site() -> Iterator[LoggedSite]:
    yield from serving(LoggedSite(corpus_articles(26)))


products = pytest.fixture(name="products")(served_products)


def watchlist(tmp_path: Path, site_spec: dict[str, Any], products: str) -> Path:
    import json

    path = tmp_path / "watchlist.json"
    plain = [{"url": f"{products}/p/{i}", "key": f"p{i}", "jsonld": {"type": "Product", "fields": ["offers.price"]}}
             for i in range(PLAIN)]
    path.write_text(json.dumps({"watches": [{"key": "blog", "site": site_spec}, *plain]}), encoding="utf-8")
    return path


def round_of(tmp_path: Path, path: Path, store: str, redis_url: str, day: int, processes: int = PROCESSES
             ) -> list[Proc]:
    simulate(DAY[day])
    procs = finish(tmp_path, start_round(tmp_path, path, store, redis_url, "sites", f"r{day}", processes,
                                         10 * (day + 1), "-s", f"TESTS_NOW={DAY[day]}", *SETTINGS))
    for p in procs:
        assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-3000:]
    return procs


def posts(by: dict[str, list[str]]) -> dict[str, list[str]]:
    return {path: agents for path, agents in by.items() if path.startswith("/posts/")}


def check_round(records: list[dict[str, Any]], site: LoggedSite, churned: Churn, plain_changed: set[str]) -> None:
    """One entities record of the set, one content record per page changed, each plain change once."""
    check_churn(records, site, "blog", churned, confirmed=False, others=plain_changed)
    assert len({r["change_id"] for r in records}) == len(records)


def test_a_sitemap_site_is_read_once_per_round_and_its_pages_shared_out(
        tmp_path: Path, site: LoggedSite, products: tuple[ProductSite, str], pg_store: str,
        own_redis: RedisServer) -> None:
    served, base = products
    # the plain watches are done long before the sitemap answers: the other processes wait for its pages
    site.delay, site.sitemap_delay = 0.1, 2.0
    site.live = list(site.pages)[:20]
    site.lastmod = dict.fromkeys(site.live, "2026-11-20")
    path = watchlist(tmp_path, {"sitemap": site.base + "/sitemap.xml"}, base)
    served.prices.update({i: price(i, 1) for i in range(PLAIN)})

    procs = round_of(tmp_path, path, pg_store, own_redis.url, 0)
    by = site.take()
    assert records_of(procs) == []  # the first round: a silent baseline, of the set and of every page
    assert len(by["/sitemap.xml"]) == 1  # read by one process of the round
    assert sorted(posts(by)) == sorted(site.live) and {len(a) for a in posts(by).values()} == {1}
    assert len({a for agents in posts(by).values() for a in agents}) >= 2, posts(by)  # shared out
    assert stat(procs, "changewatch/round/units_claimed") == 1
    assert stat(procs, "changewatch/round/units_skipped") == PROCESSES - 1
    assert set(served.take_hits().values()) == {1}
    site.sitemap_delay = 0

    churned = churn(site, "2026-12-02", 5)
    served.prices.update({i: price(i, 2) for i in range(PLAIN)})
    procs = round_of(tmp_path, path, pg_store, own_redis.url, 1)
    by = site.take()
    check_round(records_of(procs), site, churned, {f"p{i}" for i in range(PLAIN) if i % 7 == 0})
    assert len(by["/sitemap.xml"]) == 1
    fetched = posts(by)
    assert {len(agents) for agents in fetched.values()} == {1}  # each page once in the round
    assert not set(churned.removed) & set(fetched)  # a removed page is no longer requested
    assert set(churned.added) | set(churned.edits) <= set(fetched)  # lastmod moved: fetched
    unmoved = [p for p in site.live if p not in churned.edits and p not in churned.added]
    assert len([p for p in unmoved if p in fetched]) < len(unmoved) / 2  # lastmod held: a sample only
    assert stat(procs, "changewatch/site/lastmod_skipped") >= len(unmoved) / 2

    # round 3: the process that reads the sitemap is killed as it asks for it, after more churn
    churned3 = churn(site, "2026-12-03", 5)
    procs_started: list[tuple[subprocess.Popen[str], int]] = []
    killed: list[str] = []

    def kill_the_reader(path_: str, agent: str) -> None:
        if path_.startswith("/sitemap.xml") and not killed:
            n = int(agent.rsplit("/", 1)[1])
            killed.append(agent)
            os.kill(procs_started[n][0].pid, signal.SIGKILL)
            time.sleep(0.2)

    site.on_request = kill_the_reader
    simulate(DAY[2])
    procs_started.extend(start_round(tmp_path, path, pg_store, own_redis.url, "sites", "r2", 2, 30,
                                     "-s", f"TESTS_NOW={DAY[2]}", *SETTINGS))
    deadline = time.monotonic() + 120
    while any(p.poll() is None for p, _ in procs_started) and time.monotonic() < deadline:
        time.sleep(0.1)
    site.on_request = None
    assert killed, "no process asked for the sitemap"
    victim = int(killed[0].rsplit("/", 1)[1])
    assert procs_started[victim][0].wait() == -signal.SIGKILL
    survivor = finish(tmp_path, [procs_started[1 - victim]])[0]
    procs_started[victim][0].communicate()
    assert survivor.returncode == 0, survivor.stderr[-3000:]
    assert [r for r in survivor.records if r["key"] == "blog"] == []  # the set was not judged this round
    site.take()

    # round 4: compared with the last good set (round 2's): round 3's churn reported now, once
    procs = round_of(tmp_path, path, pg_store, own_redis.url, 3)
    check_round(records_of(procs), site, churned3, set())
    assert len(site.take()["/sitemap.xml"]) == 1


def test_a_link_site_is_crawled_by_one_process_of_the_round(
        tmp_path: Path, site: LoggedSite, products: tuple[ProductSite, str], pg_store: str,
        own_redis: RedisServer) -> None:
    served, base = products
    served.delay = 0.1
    site.live = list(site.pages)[:20]
    spec = {"start": site.base + "/", "allow": ["/posts/[^/?]+$"], "follow": [r"/page/\d+$"],
            "deny": ["/tag/", "/calendar"], "depth": 4}
    path = watchlist(tmp_path, spec, base)
    served.prices.update({i: price(i, 1) for i in range(PLAIN)})

    procs = round_of(tmp_path, path, pg_store, own_redis.url, 0)
    by = site.take()
    assert records_of(procs) == []
    crawled = {p: a for p, a in by.items() if p == "/" or p.startswith(("/page/", "/posts/"))}
    assert set(site.live) <= set(posts(crawled))  # (and the broken links of the corpus's pages, 404s)
    assert len({a for agents in crawled.values() for a in agents}) == 1, crawled  # one process, all of it
    assert {len(a) for a in crawled.values()} == {1}
    assert stat(procs, "changewatch/round/units_claimed") == 1
    assert stat(procs, "changewatch/round/local_enqueued") == len(crawled)
    assert not [p for p in by if p.startswith(("/tag/", "/calendar"))]

    churned = churn(site, "2026-12-02", 5)
    served.prices.update({i: price(i, 2) for i in range(PLAIN)})
    procs = round_of(tmp_path, path, pg_store, own_redis.url, 1)
    by = site.take()
    check_round(records_of(procs), site, churned, {f"p{i}" for i in range(PLAIN) if i % 7 == 0})
    crawled = {p: a for p, a in by.items() if p == "/" or p.startswith(("/page/", "/posts/"))}
    assert len({a for agents in crawled.values() for a in agents}) == 1, crawled
    assert {len(a) for a in crawled.values()} == {1}
    assert set(site.live) <= set(posts(crawled)) and not set(churned.removed) & set(posts(crawled))



def test_a_wrong_lastmod_found_by_another_process_keeps_the_site_untrusted(
        tmp_path: Path, site: LoggedSite, products: tuple[ProductSite, str], pg_store: str,
        own_redis: RedisServer) -> None:
    """The process that reads the sitemap judges a full check of an untrusted lastmod; the pages it
    checks are fetched by every process of the round. Here only the pages the *other* process
    fetches have changed (their lastmod unmoved): the lastmod stays untrusted, and the next round
    checks every page again."""
    served, base = products
    # the other process is there when the pages are queued (a crawl process may take seconds to start on a
    # loaded machine)
    site.delay, site.sitemap_delay = 0.3, 3.0
    site.live = list(site.pages)[:20]
    site.lastmod = dict.fromkeys(site.live, "2026-11-20")  # a site that never updates its lastmod
    sampled = second_turn_page(site)  # the lastmod sample takes it in the second round
    path = watchlist(tmp_path, {"sitemap": site.base + "/sitemap.xml"}, base)
    served.prices.update({i: price(i, 1) for i in range(PLAIN)})
    assert records_of(round_of(tmp_path, path, pg_store, own_redis.url, 0, 2)) == []

    site.edit(sampled, "The sampled page now says something entirely different about deadlines.")
    procs = round_of(tmp_path, path, pg_store, own_redis.url, 1, 2)
    assert [(r["kind"], r["health"]["condition"]) for r in records_of(procs) if r.get("health")] == [
        ("error", "lastmod:blog")]  # the sample found it out, said once in the round
    site.take()

    site.unseen_by_reader = {p: f"Clause {n} of this page changed behind an unmoved lastmod."
                             for n, p in enumerate(site.live) if p != sampled}
    procs = round_of(tmp_path, path, pg_store, own_redis.url, 2, 2)
    others = {p for p, agents in posts(site.take()).items() if agents != [site.reader]}
    assert others, "the other process fetched no page: nothing to prove"
    assert stat(procs, "changewatch/site/lastmod_checked") == len(site.live)
    # (a sentence put before a page's main text may be outside what its content compares)
    reported = {r["url"] for r in records_of(procs) if r["key"].startswith("blog|")}
    assert reported and reported <= {canonical_url(site.base + p) for p in others}
    assert not [r for r in records_of(procs) if r.get("health")]  # still untrusted: not recovered

    procs = round_of(tmp_path, path, pg_store, own_redis.url, 3, 2)
    assert stat(procs, "changewatch/site/lastmod_untrusted_runs") >= 1  # every page checked again
    assert stat(procs, "changewatch/site/lastmod_checked") == len(site.live)
