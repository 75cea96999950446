"""Distributed crawling with scrapy-redis: N processes sharing one round vs one.

The site answers each page after 200 ms, as a remote site does; each process makes 8 concurrent
requests (CONCURRENT_REQUESTS = CONCURRENT_REQUESTS_PER_DOMAIN = 8). Every configuration crawls
the same watchlist as a first round (every page a baseline) into a fresh PostgreSQL store (or
SQLite with --sqlite), through changewatch.distributed.RoundScheduler and a Redis database of its
own (--redis-db, flushed before and after). Every page must be fetched exactly once per run and
answered 200. Pages/s, counted by the site, three ways:

- steady: while every process fetches (from the last process's first fetch to the first
  process's last fetch): what N processes sustain, the figure the issue's ratio is about;
- fetching: from the first page fetched to the last (processes that start later, on a loaded
  machine, leave the first to fetch alone for a while);
- whole run: from the start of the processes to their exit (start-up included).

    .venv/bin/python bench/bench_distributed.py [--pages 600] [--processes 3] [--delay 0.2]

Needs Redis (CHANGEWATCH_TEST_REDIS, default redis://127.0.0.1:6379) and PostgreSQL
(CHANGEWATCH_TEST_POSTGRESQL, default postgresql://postgres@127.0.0.1:5432/test).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.rounds import ProductSite, finish, redis_db_url, start_round, write_watchlist  # noqa: E402

POSTGRESQL = os.environ.get("CHANGEWATCH_TEST_POSTGRESQL", "postgresql://postgres@127.0.0.1:5432/test")


def steady_rate(log: list[tuple[float, str]]) -> float:
    """Pages/s while every process fetched: fetches between the last process's first fetch and
    the first process's last fetch, over that time."""
    firsts: dict[str, float] = {}
    lasts: dict[str, float] = {}
    for t, agent in log:
        firsts.setdefault(agent, t)
        lasts[agent] = t
    start, end = max(firsts.values()), min(lasts.values())
    if end - start < 1.0:
        raise SystemExit(f"the processes fetched together for only {end - start:.2f} s: use more --pages")
    return sum(1 for t, _ in log if start < t <= end) / (end - start)


def crawl(site: ProductSite, base: str, pages: int, processes: int, redis_url: str, sqlite: bool,
          concurrency: int, workers: int) -> tuple[float, float, float]:
    """Pages/s of one round of *processes* crawls: steady, fetching, whole run."""
    import psycopg
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    schema = f"cwbench_{uuid.uuid4().hex[:10]}"
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        store = f"sqlite:///{workdir / 'state.db'}" if sqlite else f"{POSTGRESQL}?schema={schema}"
        watchlist = write_watchlist(workdir / "watchlist.json", base, range(pages))
        site.take_hits()
        started = time.monotonic()
        procs = finish(workdir, start_round(
            workdir, watchlist, store, redis_url, "bench", f"n{processes}", processes, 1,
            "-s", f"CONCURRENT_REQUESTS={concurrency}", "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={concurrency}",
            "-s", f"CHANGEWATCH_WORKERS={workers}", "-s", "LOG_LEVEL=WARNING"))
        elapsed = time.monotonic() - started
        first, last, log = site.first_hit, site.last_hit, list(site.log)
        hits = site.take_hits()
    if not sqlite:
        with psycopg.connect(POSTGRESQL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    redis.Redis.from_url(redis_url).flushdb()
    for p in procs:
        if p.returncode != 0:
            raise SystemExit(f"a crawl failed:\n{p.stderr[-3000:]}")
    if len(hits) != pages or set(hits.values()) != {1}:
        raise SystemExit(f"expected each of {pages} pages fetched once, got {len(hits)} pages, "
                         f"fetch counts {sorted(set(hits.values()))}")
    statuses = sum(int(p.stats.get("downloader/response_status_count/200", 0)) for p in procs)
    if statuses != pages:
        raise SystemExit(f"expected {pages} responses 200, got {statuses}")
    assert first is not None and last is not None
    per_process = [int(p.stats.get("changewatch/round/dequeued", 0)) for p in procs]
    steady = steady_rate(log)
    firsts = sorted({agent: t for t, agent in reversed(log)}.values())
    print(f"  {processes} process(es): {pages} pages, {steady:.1f} pages/s steady, {last - first:.2f} s from first "
          f"to last fetch, {elapsed:.2f} s in all (first fetches at "
          f"{', '.join(f'{t - started:.1f}' for t in firsts)} s, the last one {last - started:.1f} s); pages per "
          f"process {per_process}", flush=True)
    return steady, pages / (last - first + site.delay), pages / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=600)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.2, help="seconds the site takes to answer each page")
    parser.add_argument("--concurrency", type=int, default=8, help="concurrent requests per process")
    parser.add_argument("--workers", type=int, default=0, help="CHANGEWATCH_WORKERS of each process")
    parser.add_argument("--redis-db", type=int, default=15, help="a Redis database the benchmark may flush")
    parser.add_argument("--sqlite", action="store_true", help="one SQLite store file instead of PostgreSQL")
    args = parser.parse_args()

    site = ProductSite(delay=args.delay)
    site.prices.update({i: f"{10 + i}.00" for i in range(args.pages)})
    base = site.start()
    redis_url = redis_db_url(args.redis_db)
    try:
        one = crawl(site, base, args.pages, 1, redis_url, args.sqlite, args.concurrency, args.workers)
        many = crawl(site, base, args.pages, args.processes, redis_url, args.sqlite, args.concurrency, args.workers)
    finally:
        site.stop()
    ideal = args.concurrency / args.delay
    print(f"ideal: {ideal:.0f} pages/s a process ({args.concurrency} requests / {args.delay:g} s)")
    for i, what in enumerate(("steady (all processes fetching)", "first to last fetch", "whole run (start-up)")):
        print(f"pages/s, {what}: 1 process {one[i]:.1f}, {args.processes} processes {many[i]:.1f}: "
              f"ratio {many[i] / one[i]:.2f}x")


if __name__ == "__main__":
    main()
