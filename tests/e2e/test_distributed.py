"""Distributed crawling with scrapy-redis: real Redis, real PostgreSQL, real
``scrapy crawl`` processes sharing rounds through ``changewatch.distributed.RoundScheduler``.

Each test owns one Redis database (10-15), flushed before and after it, and one PostgreSQL schema.
"""

from __future__ import annotations

import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.changes import field

from .crawl import scrapy_env
from .rounds import (
    Proc,
    ProductSite,
    RedisServer,
    agents_by_path,
    finish,
    owned_redis,
    price,
    records_of,
    round_command,
    served_products,
    start_round,
    stat,
    write_watchlist,
)

WATCHES = 300
PROCESSES = 3


@pytest.fixture
def redis_10() -> Iterator[str]:
    yield from owned_redis(10)


@pytest.fixture
def redis_11() -> Iterator[str]:
    yield from owned_redis(11)


@pytest.fixture
def redis_12() -> Iterator[str]:
    yield from owned_redis(12)


site = pytest.fixture(name="site")(served_products)


def ok(procs: list[Proc]) -> list[Proc]:
    for p in procs:
        assert p.returncode == 0, p.stderr[-3000:]
    return procs


def test_three_processes_fetch_each_watch_once_per_round_and_report_each_change_once(
        tmp_path: Path, site: tuple[ProductSite, str], pg_store: str, redis_10: str) -> None:
    served, base = site
    watchlist = write_watchlist(tmp_path / "watchlist.json", base, range(WATCHES))
    paths = {f"/p/{i}" for i in range(WATCHES)}
    for round_ in (1, 2):
        served.prices.update({i: price(i, round_) for i in range(WATCHES)})
        procs = ok(finish(tmp_path, start_round(tmp_path, watchlist, pg_store, redis_10, "t1", f"r{round_}",
                                                PROCESSES, round_ * 10)))
        changed = {f"/p/{i}" for i in range(WATCHES) if round_ > 1 and i % 7 == 0}
        hits = served.take_hits()
        # once each; a changed page twice: its confirmation
        assert hits == {p: 2 if p in changed else 1 for p in paths}, Counter(hits.values())
        assert stat(procs, "changewatch/round/claimed") == WATCHES
        assert stat(procs, "changewatch/round/skipped") == WATCHES * (PROCESSES - 1)
        records = records_of(procs)
        assert not [r for r in records if r.get("redelivery")]
        expected = sorted(f"p{i}" for i in range(WATCHES) if round_ > 1 and i % 7 == 0)
        assert sorted(str(r["key"]) for r in records) == expected
        assert len({r["change_id"] for r in records}) == len(records)
        assert stat(procs, "changewatch/confirm/held") == len(changed) and all(r["confirmed"] for r in records)
        for r in records:
            i = int(str(r["key"])[1:])
            assert r["changes"] == {"offers.price": field(price(i, round_ - 1), price(i, round_),
                                                      str(10 + i + round_ - 1), str(10 + i + round_))}


def test_redis_flushed_mid_round_loses_no_watch_and_reports_each_change_once(
        tmp_path: Path, site: tuple[ProductSite, str], pg_store: str, redis_11: str) -> None:
    """Redis loses the round once every process has fetched: the queued watches are gone. The
    idle processes see the round's marker is gone and claim their watches again: every watch is
    observed in this round (some twice), every change is reported once, and the next round is
    clean."""
    import redis

    served, base = site
    count = 90
    watchlist = write_watchlist(tmp_path / "watchlist.json", base, range(count))
    paths = {f"/p/{i}" for i in range(count)}
    slow = ("-s", "CONCURRENT_REQUESTS_PER_DOMAIN=2")
    served.prices.update({i: price(i, 1) for i in range(count)})
    ok(finish(tmp_path, start_round(tmp_path, watchlist, pg_store, redis_11, "t2", "r1", PROCESSES, 10, *slow)))
    assert set(served.take_hits().values()) == {1}

    served.prices.update({i: price(i, 2) for i in range(count)})
    # pages answer slowly until every process has fetched (a process that starts late on a loaded
    # machine still finds the queue long when the flush comes), then at ~10 pages/s a process
    served.delay = 1.0
    flushed: list[int] = []

    def flush_once_every_process_fetches(s: ProductSite) -> None:
        if not flushed and len(s.agents) == PROCESSES:
            flushed.append(sum(s.hits.values()))
            redis.Redis.from_url(redis_11).flushdb()
            s.delay = 0.1

    served.on_hit = flush_once_every_process_fetches
    procs = ok(finish(tmp_path, start_round(tmp_path, watchlist, pg_store, redis_11, "t2", "r2", PROCESSES, 20,
                                            *slow)))
    served.on_hit = None
    hits = served.take_hits()
    assert flushed and flushed[0] < count // 2, flushed
    assert set(hits) == paths, sorted(paths - set(hits))  # no watch skipped
    assert stat(procs, "changewatch/round/lost") >= 1 and stat(procs, "changewatch/round/reseeded") >= 1
    records = records_of(procs)
    assert sorted(str(r["key"]) for r in records) == sorted(f"p{i}" for i in range(count) if i % 7 == 0)
    assert len({r["change_id"] for r in records}) == len(records)

    served.delay = 0
    procs = ok(finish(tmp_path, start_round(tmp_path, watchlist, pg_store, redis_11, "t2", "r3", PROCESSES, 30,
                                            *slow)))
    hits = served.take_hits()
    assert set(hits) == paths and set(hits.values()) == {1}
    assert records_of(procs) == []


def test_two_jobs_of_the_same_spider_at_once(tmp_path: Path, site: tuple[ProductSite, str], pg_store: str,
                                             redis_12: str) -> None:
    """Two rounds that overlap (a cron job that overran) each fetch every watch once and report
    each change once between them; a late process of a finished round fetches nothing; a job of
    another watchlist that claims a key of the round for another URL stops, non-zero, saying so."""
    served, base = site
    count = 40
    watchlist = write_watchlist(tmp_path / "watchlist.json", base, range(count))
    served.prices.update({i: price(i, 1) for i in range(count)})
    ok(finish(tmp_path, start_round(tmp_path, watchlist, pg_store, redis_12, "t3", "base", 1, 10)))
    served.take_hits()

    served.prices.update({i: price(i, 2) for i in range(count)})
    served.delay = 0.02
    both = start_round(tmp_path, watchlist, pg_store, redis_12, "t3", "a", 2, 20)
    both += start_round(tmp_path, watchlist, pg_store, redis_12, "t3", "b", 2, 30)
    procs = ok(finish(tmp_path, both))
    hits = served.take_hits()
    changed = {f"/p/{i}" for i in range(count) if i % 7 == 0}
    assert len(hits) == count and all(hits[p] == 2 for p in set(hits) - changed), hits  # once in a, once in b
    # and a change's confirmation: by the round that saw it first, and by the other too if it
    # read the key before that round committed (its judgement then finds the change made)
    assert all(hits[p] in (3, 4) for p in changed), hits
    records = records_of(procs)
    assert sorted(str(r["key"]) for r in records) == sorted(f"p{i}" for i in range(count) if i % 7 == 0)

    late = ok(finish(tmp_path, start_round(tmp_path, watchlist, pg_store, redis_12, "t3", "a", 1, 40)))
    assert served.take_hits() == Counter() and records_of(late) == []
    assert stat(late, "changewatch/round/all_claimed") == 1
    assert "round a: all 40 of this process's watches" in late[0].stderr, late[0].stderr[-2000:]

    other = tmp_path / "other.json"
    other.write_text(watchlist.read_text().replace(f'"{base}/p/3"', f'"{base}/p/300"'), encoding="utf-8")
    served.prices[300] = "1.00"
    cmd, _ = round_command(tmp_path, 50, other, pg_store, redis_12, "t3", "a")
    proc = subprocess.run(cmd, cwd=tmp_path, env=scrapy_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "claimed key:p3 for" in proc.stderr and "CHANGEWATCH_ROUND" in proc.stderr, proc.stderr[-2000:]


def test_a_change_is_confirmed_by_the_process_that_observed_it(
        tmp_path: Path, site: tuple[ProductSite, str], pg_store: str, own_redis: RedisServer) -> None:
    """In a round of two processes, the confirmation of a changed page is loaded by the process
    that observed the change, outside the round's queue (no claim, no push, no other process
    fetches it), and reported once; a page whose confirmation answers 429 is reported as one load
    showed it, ``"confirmed": false``, and that answer is never its baseline."""
    served, base = site
    count, processes = 60, 2
    watchlist = write_watchlist(tmp_path / "watchlist.json", base, range(count))
    served.prices.update({i: price(i, 1) for i in range(count)})
    ok(finish(tmp_path, start_round(tmp_path, watchlist, pg_store, own_redis.url, "t4", "r1", processes, 10)))
    served.take_hits()

    changed = {i for i in range(count) if i % 7 == 0}
    served.prices.update({i: price(i, 2) for i in range(count)})
    served.refused = {"/p/14"}
    procs = ok(finish(tmp_path, start_round(tmp_path, watchlist, pg_store, own_redis.url, "t4", "r2", processes, 20)))
    fetched = agents_by_path(served.fetched)
    served.take_hits()
    assert stat(procs, "changewatch/round/claimed") == count and stat(procs, "changewatch/round/dequeued") == count
    assert stat(procs, "changewatch/round/skipped") == count * (processes - 1)
    for i in range(count):
        agents = fetched[f"/p/{i}"]
        # a change's two loads (a 429 is not retried) by one process
        assert len(agents) == (2 if i in changed else 1) and len(set(agents)) == 1, (i, agents)
    for n, proc in enumerate(procs):
        for record in proc.records:  # each process reports what it observed and confirmed itself
            assert set(fetched[f"/p/{str(record['key'])[1:]}"]) == {f"changewatch-test/{n}"}, record
        assert proc.stats.get("changewatch/confirm/sent", 0) == len(proc.records)
    records = {str(r["key"]): r for r in records_of(procs)}
    assert len(records_of(procs)) == len(changed) and sorted(records) == sorted(f"p{i}" for i in changed)
    assert {k: r["confirmed"] for k, r in records.items()} == {f"p{i}": i != 14 for i in changed}
    assert records["p14"]["changes"] == {"offers.price": field(price(14, 1), price(14, 2), "25", "26")}
    assert stat(procs, "changewatch/confirm/failed") == 1
    assert stat(procs, "changewatch/confirm/held") == len(changed) - 1

    served.refused = set()
    after = ok(finish(tmp_path, start_round(tmp_path, watchlist, pg_store, own_redis.url, "t4", "r3", processes, 30)))
    assert served.take_hits() == {f"/p/{i}": 1 for i in range(count)}
    assert records_of(after) == []  # the first load of p14 was committed, never the 429
