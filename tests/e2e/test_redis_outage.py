"""Redis goes away mid-round: two real ``scrapy crawl watch`` processes sharing a round
through ``changewatch.distributed.RoundScheduler`` on a redis-server of the test's own, which the
test kills (SIGKILL, nothing saved) once both processes are fetching. Restarted empty a few seconds
later, the round goes on: both processes exit 0, every watch is observed, every change reported
once. Left down past CHANGEWATCH_ROUND_RETRY_TIME, each process stops with one CRITICAL line naming
Redis and exits non-zero, without hanging; the next round, Redis back, observes every watch and
every change is reported exactly once between the two rounds.

Before the fix, both processes hung for good once Redis was killed (a RedisError raised out of the
scheduler's methods into Scrapy's engine)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from .rounds import (
    Proc,
    ProductSite,
    RedisServer,
    finish,
    price,
    records_of,
    served_products,
    start_round,
    stat,
    write_watchlist,
)

WATCHES = 150
PROCESSES = 2
CHANGED = sorted(f"p{i}" for i in range(WATCHES) if i % 7 == 0)
#: ~10 pages/s a process: the round takes several seconds, the outage lands in its middle
SLOW = ("-s", "CONCURRENT_REQUESTS_PER_DOMAIN=2")


site = pytest.fixture(name="site")(served_products)


def baseline(tmp_path: Path, served: ProductSite, base: str, store: str, redis_url: str) -> Path:
    """Round r1, undisturbed: every watch observed once, silently (a baseline: no change record)."""
    watchlist = write_watchlist(tmp_path / "watchlist.json", base, range(WATCHES))
    served.prices.update({i: price(i, 1) for i in range(WATCHES)})
    procs = finish(tmp_path, start_round(tmp_path, watchlist, store, redis_url, "t", "r1", PROCESSES, 10),
                   timeout=60)
    for p in procs:
        assert p.returncode == 0 and p.records == [], p.stderr[-3000:]
    hits = served.take_hits()
    assert len(hits) == WATCHES and set(hits.values()) == {1}
    served.prices.update({i: price(i, 2) for i in range(WATCHES)})  # every 7th price changes for r2
    return watchlist


def kill_when_both_fetch(served: ProductSite, server: RedisServer, restart_after: float | None) -> list[int]:
    """Kill *server* once every process has fetched and 30 pages are done; start it again, empty,
    *restart_after* seconds later (None: leave it down). Returns the pages fetched at the kill."""
    killed: list[int] = []

    def on_hit(s: ProductSite) -> None:
        if not killed and len(s.agents) == PROCESSES and sum(s.hits.values()) >= 30:
            killed.append(sum(s.hits.values()))
            server.kill()
            if restart_after is not None:
                threading.Timer(restart_after, server.start).start()

    served.on_hit = on_hit
    return killed


def once_each(*runs: list[Proc]) -> dict[str, int]:
    """Each changed key was logged once (one change id), whatever was exported again."""
    ids: dict[str, set[int]] = {}
    for procs in runs:
        for p in procs:
            for record in p.records:
                assert record["changes"]["offers.price"]["old"] != record["changes"]["offers.price"]["new"]
                ids.setdefault(str(record["key"]), set()).add(int(record["change_id"]))
    assert sorted(ids) == CHANGED, sorted(set(CHANGED) ^ set(ids))
    assert all(len(found) == 1 for found in ids.values()), ids
    return {key: next(iter(found)) for key, found in ids.items()}


def test_redis_killed_mid_round_and_restarted_empty(tmp_path: Path, site: tuple[ProductSite, str], pg_store: str,
                                                    own_redis: RedisServer) -> None:
    served, base = site
    watchlist = baseline(tmp_path, served, base, pg_store, own_redis.url)

    served.delay = 0.2
    killed = kill_when_both_fetch(served, own_redis, restart_after=3)
    started = time.monotonic()
    procs = finish(tmp_path, start_round(tmp_path, watchlist, pg_store, own_redis.url, "t", "r2", PROCESSES, 20,
                                         *SLOW), timeout=90)
    took = time.monotonic() - started
    served.on_hit = None
    assert killed and killed[0] < WATCHES // 2, killed
    for p in procs:
        assert p.returncode == 0, p.stderr[-3000:]
        assert "Traceback" not in p.stderr and "CRITICAL" not in p.stderr, p.stderr[-3000:]
        assert p.stats.get("changewatch/round/redis_outages", 0) >= 1, p.stats
        assert "is unreachable" in p.stderr and "answers again after" in p.stderr, p.stderr[-3000:]
    assert took < 45, took
    hits = served.take_hits()
    assert set(hits) == {f"/p/{i}" for i in range(WATCHES)}  # every watch observed in the round (some twice)
    assert stat(procs, "changewatch/round/lost") >= 1  # restarted empty: re-seeded
    records = records_of(procs)
    assert sorted(str(r["key"]) for r in records) == CHANGED  # each change reported once
    once_each(procs)
    assert not [r for r in records if r.get("redelivery")]


def test_redis_down_past_the_retry_time_stops_each_process_and_the_next_round_catches_up(
        tmp_path: Path, site: tuple[ProductSite, str], pg_store: str, own_redis: RedisServer) -> None:
    served, base = site
    watchlist = baseline(tmp_path, served, base, pg_store, own_redis.url)

    served.delay = 0.2
    killed = kill_when_both_fetch(served, own_redis, restart_after=None)
    procs = start_round(tmp_path, watchlist, pg_store, own_redis.url, "t", "r2", PROCESSES, 20, *SLOW,
                        "-s", "CHANGEWATCH_ROUND_RETRY_TIME=3")
    while not killed:
        assert all(proc.poll() is None for proc, _ in procs), "a process ended before Redis went away"
        time.sleep(0.05)
    down = time.monotonic()
    failed = finish(tmp_path, procs, timeout=40)  # no hang
    assert time.monotonic() - down < 40
    served.on_hit = None
    for p in failed:
        assert p.returncode != 0, p.stderr[-3000:]
        critical = [line for line in p.stderr.splitlines() if "] CRITICAL:" in line]
        assert len(critical) == 1, critical
        assert f"Redis at 127.0.0.1:{own_redis.port}/0 unreachable for more than 3 s" in critical[0], critical
        assert "CHANGEWATCH_ROUND_RETRY_TIME" in critical[0] and "Traceback" not in p.stderr, p.stderr[-3000:]
    fetched = served.take_hits()
    assert 0 < len(fetched) < WATCHES, len(fetched)

    own_redis.start()  # back, empty; the next round
    served.delay = 0
    after = finish(tmp_path, start_round(tmp_path, watchlist, pg_store, own_redis.url, "t", "r3", PROCESSES, 30),
                   timeout=60)
    for p in after:
        assert p.returncode == 0, p.stderr[-3000:]
    hits = served.take_hits()
    # every watch observed once; a change the failed round did not commit also confirmed (twice)
    fresh = {f"/p/{str(r['key'])[1:]}" for p in after for r in p.records if not r.get("redelivery")}
    assert hits == {f"/p/{i}": 2 if f"/p/{i}" in fresh else 1 for i in range(WATCHES)}, hits
    ids = once_each(failed, after)  # every change logged once between the two rounds
    # what the failed round exported is exported again (never confirmed), with the same change id
    redelivered = {str(r["key"]): int(r["change_id"]) for p in after for r in p.records if r.get("redelivery")}
    assert all(ids[key] == change_id for key, change_id in redelivered.items())
