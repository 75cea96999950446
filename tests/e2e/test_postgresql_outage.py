"""Real crawls into a PostgreSQL store whose database goes away mid-crawl: through a TCP proxy
the test cuts and restores, and by pg_terminate_backend on the crawl's connections. A short
outage costs nothing (exit 0, every change exported once, nothing left to redeliver); one past
CHANGEWATCH_STORE_RETRY_TIME stops the crawl non-zero, and the next run exports the rest: every
change exactly once by change_id, none lost."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from changewatch.demo.site import DemoSite

from ..pgproxy import PgProxy
from ..store.conftest import POSTGRESQL
from .crawl import Crawler, CrawlResult, read_feed, scrapy_env
from .rounds import product

PRODUCTS = 60
CHANGED = sorted(f"p{i}" for i in range(PRODUCTS) if i % 3 == 0)
SLOW = ("-s", "DOWNLOAD_DELAY=0.12", "-s", "RANDOMIZE_DOWNLOAD_DELAY=False", "-s", "CHANGEWATCH_WORKERS=0")


def serve(site: DemoSite, round_: int) -> None:
    for i in range(PRODUCTS):
        price = f"{10 + i + (round_ if i % 3 == 0 else 0)}.00"
        site.overrides[f"/p/{i}"] = (200, "text/html; charset=utf-8", product(i, price))


def _logged_changes(schema: str) -> int:
    import psycopg

    with psycopg.connect(POSTGRESQL, autocommit=True) as conn:
        row = conn.execute(f'SELECT count(*) FROM "{schema}".changes').fetchone()
    return int(row[0]) if row else 0


def _baseline(tmp_path: Path, site: DemoSite, base: str, store: str) -> Crawler:
    crawler = Crawler(tmp_path, [{"url": f"{base}/p/{i}", "key": f"p{i}",
                                  "jsonld": {"type": "Product", "fields": ["offers.price"]}} for i in range(PRODUCTS)],
                      store=store)
    serve(site, 0)
    first = crawler.run("-s", "CHANGEWATCH_WORKERS=0")
    assert first.returncode == 0 and first.records == [], first.stderr[-3000:]
    serve(site, 1)
    return crawler


def _run_disturbed(crawler: Crawler, schema: str, disturb: Callable[[], None], *extra: str) -> CrawlResult:
    """Run a crawl and, once it has logged a few changes, *disturb* its database."""
    cmd, feed = crawler.command(*SLOW, *extra)
    stats = crawler.workdir / f"stats-{crawler.runs}.json"
    proc = subprocess.Popen(cmd, cwd=crawler.workdir, env=scrapy_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while _logged_changes(schema) < 3:
        assert proc.poll() is None and time.monotonic() < deadline, "the crawl ended before the test disturbed it"
        time.sleep(0.05)
    disturb()
    _, err = proc.communicate(timeout=300)
    return CrawlResult(proc.returncode, read_feed(feed), err, json.loads(stats.read_text()) if stats.exists() else {})


def _once_each(*runs: CrawlResult) -> dict[str, int]:
    """The change ids of every exported record: each expected key has exactly one."""
    ids: dict[str, set[int]] = {}
    for run in runs:
        for record in run.records:
            assert record["changes"]["offers.price"]["old"] != record["changes"]["offers.price"]["new"]
            ids.setdefault(record["key"], set()).add(record["change_id"])
    assert sorted(ids) == sorted(CHANGED)
    assert all(len(found) == 1 for found in ids.values()), ids  # logged once, whatever was exported again
    return {key: next(iter(found)) for key, found in ids.items()}


def _keys(run: CrawlResult) -> list[str]:
    return sorted(r["key"] for r in run.records)


def test_a_short_outage_costs_nothing(tmp_path: Path, demo_site: tuple[DemoSite, str], proxy: PgProxy,
                                      schema: str) -> None:
    site, base = demo_site
    crawler = _baseline(tmp_path, site, base, proxy.uri(f"schema={schema}&timeout=5"))

    def outage() -> None:
        proxy.cut()
        time.sleep(3)
        proxy.restore()

    run = _run_disturbed(crawler, schema, outage, "-s", "CHANGEWATCH_STORE_RETRY_TIME=30")
    assert run.returncode == 0, run.stderr[-3000:]
    assert _keys(run) == CHANGED and not [r for r in run.records if r.get("redelivery")]
    assert run.stats.get("changewatch/runtime/store_retries", 0) > 0
    assert "lost the database" in run.stderr and "the database answers again" in run.stderr
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    _once_each(run)
    after = crawler.run("-s", "CHANGEWATCH_WORKERS=0")  # nothing left undelivered, nothing new
    assert after.returncode == 0 and after.records == [], after.records


def test_an_outage_past_the_budget_stops_the_crawl_and_the_next_run_exports_the_rest(
        tmp_path: Path, demo_site: tuple[DemoSite, str], proxy: PgProxy, schema: str) -> None:
    site, base = demo_site
    crawler = _baseline(tmp_path, site, base, proxy.uri(f"schema={schema}&timeout=5"))

    def outage() -> None:
        proxy.cut()
        time.sleep(8)
        proxy.restore()

    started = time.monotonic()
    failed = _run_disturbed(crawler, schema, outage, "-s", "CHANGEWATCH_STORE_RETRY_TIME=2")
    assert failed.returncode == 1, failed.stderr[-3000:]
    assert time.monotonic() - started < 60
    assert failed.stderr.count("changewatch: stopping the crawl: the store cannot be written") == 1, failed.stderr
    assert "unreachable" in failed.stderr and "Traceback" not in failed.stderr, failed.stderr[-3000:]
    assert 0 < len(failed.records) < len(CHANGED)
    time.sleep(1)
    recovered = crawler.run("-s", "CHANGEWATCH_WORKERS=0")
    assert recovered.returncode == 0, recovered.stderr[-3000:]
    ids = _once_each(failed, recovered)
    # what the failed run exported is exported again (its delivery was never confirmed), with
    # the same change id; nothing it exported is logged a second time
    redelivered = {r["key"]: r["change_id"] for r in recovered.records if r.get("redelivery")}
    assert set(redelivered) >= {r["key"] for r in failed.records}
    assert all(ids[key] == change_id for key, change_id in redelivered.items())
    after = crawler.run("-s", "CHANGEWATCH_WORKERS=0")
    assert after.returncode == 0 and after.records == [], after.records


def test_backends_killed_mid_crawl_cost_nothing(tmp_path: Path, demo_site: tuple[DemoSite, str],
                                                schema: str) -> None:
    import psycopg

    site, base = demo_site
    name = f"cw_e2e_{uuid.uuid4().hex[:8]}"
    store = f"{POSTGRESQL}{'&' if '?' in POSTGRESQL else '?'}schema={schema}&application_name={name}"
    crawler = _baseline(tmp_path, site, base, store)
    killed: list[int] = []

    def kill() -> None:
        for _ in range(3):
            with psycopg.connect(POSTGRESQL, autocommit=True) as admin:
                row = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                    "WHERE application_name = %s", (name,)).fetchone()
            killed.append(row[0] if row else 0)
            time.sleep(0.7)

    run = _run_disturbed(crawler, schema, kill)
    assert run.returncode == 0, run.stderr[-3000:]
    assert sum(killed) >= 2 and run.stats.get("changewatch/runtime/store_retries", 0) > 0
    assert _keys(run) == CHANGED
    _once_each(run)
    after = crawler.run("-s", "CHANGEWATCH_WORKERS=0")
    assert after.returncode == 0 and after.records == [], after.records
