"""What watching the watcher costs: a commit with its health-history upsert against the same commit
without it, in the same process, interleaved in blocks (the ratio holds on a loaded machine, where
two runs of bench_store.py differ by 2x); and the health check at the end of a crawl.

Run: ``.venv/bin/python bench/bench_health.py`` (SQLite; ``--pg URI`` adds PostgreSQL,
``--keys 10000 --blocks 20 --block 500``).

Each block commits ``--block`` observations of random stored keys (kind ``none``, the commonest,
with a distance every third: noise), with the history counted (as shipped) or with it skipped;
blocks alternate ABBA (the first block of a pair runs slower, whichever it is), and the figure is
the median rate of each. Then the check: ``run_check`` over a history
of 200 sites x 60 days (what 200 sites watched daily for two months leave), timed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from changewatch.core.comparisons import Kind
from changewatch.health.check import HealthThresholds
from changewatch.health.journal import run_check
from changewatch.store import Lease, Outcome, store_from_uri
from changewatch.store.semantics import format_time

SPIDER = "bench"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _fill(store: Any, keys: int) -> dict[str, int]:
    versions = {}
    for n in range(keys):
        key = f"k{n}"
        store.commit(SPIDER, key, None, Outcome(Kind.BASELINE, f"https://site{n % 200}.example/{key}",
                                                format_time(T0), snapshot=b"s" * 900))
        versions[key] = 1
    return versions


def _block(store: Any, versions: dict[str, int], size: int, clock: list[datetime]) -> float:
    keys = random.sample(sorted(versions), size)
    start = time.perf_counter()
    for n, key in enumerate(keys):
        clock[0] += timedelta(seconds=1)
        noisy = n % 3 == 0
        outcome = Outcome(Kind.NOISE if noisy else Kind.NONE, f"https://site{int(key[1:]) % 200}.example/{key}",
                          format_time(clock[0]), distance=3 if noisy else None)
        versions[key] = store.commit(SPIDER, key, versions[key], outcome).version
    return size / (time.perf_counter() - start)


def commits(uri: str, keys: int, blocks: int, size: int) -> tuple[float, float]:
    store = store_from_uri(uri)
    store.open()
    versions = _fill(store, keys)
    # SQLite counts in memory, written every few seconds (_counted, flush_history); PostgreSQL in a
    # WITH of the state's write (_counted)
    name = "_counted"
    skip: Callable[..., Any] = lambda *args: ("", ())  # noqa: E731
    rates: dict[bool, list[float]] = {True: [], False: []}
    clock = [T0 + timedelta(days=1)]
    try:
        for n in range(blocks * 2):
            # ABBA: the first block of a pair ran slower whatever it did (measured), so each
            # variant goes first in every other pair
            with_history = n % 4 in (0, 3)
            if with_history:
                vars(store).pop(name, None)  # the class's: as shipped
            else:
                setattr(store, name, skip)  # on this instance only: the upsert skipped
            rates[with_history].append(_block(store, versions, size, clock))
    finally:
        store.close()
    return statistics.median(rates[True]), statistics.median(rates[False])


def check_time(uri: str) -> tuple[float, int]:
    store = store_from_uri(uri)
    store.open()
    now = T0 + timedelta(days=60)
    rows = [(SPIDER, f"site{s}.example", (now - timedelta(days=d)).strftime("%Y-%m-%d"), kind, n, 0, 0, 0)
            for s in range(200) for d in range(60) for kind, n in (("none", 8), ("noise", 2), ("content", 1))]
    store.import_rows([("health_history", rows)])
    start = time.perf_counter()
    limits = HealthThresholds(recent=7 * 86400, baseline=28 * 86400, min_observations=10, stale_after=14 * 86400)
    result = run_check(store, SPIDER, now, limits, {}, {}, Lease("bench", 60))
    seconds = time.perf_counter() - start
    store.close()
    return seconds, result.rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--blocks", type=int, default=20)
    parser.add_argument("--block", type=int, default=500)
    parser.add_argument("--pg", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        uris = [("SQLite", f"sqlite:///{Path(tmp) / 'a.db'}", f"sqlite:///{Path(tmp) / 'b.db'}")]
        if args.pg:
            sep = "&" if "?" in args.pg else "?"
            uris.append(("PostgreSQL", f"{args.pg}{sep}schema=cwbench_{uuid.uuid4().hex[:8]}",
                         f"{args.pg}{sep}schema=cwbench_{uuid.uuid4().hex[:8]}"))
        for name, uri, other in uris:
            shipped, without = commits(uri, args.keys, args.blocks, args.block)
            seconds, rows = check_time(other)
            print(f"{name}: commits/s with the health history {shipped:,.0f}, without {without:,.0f}: "
                  f"{shipped / without:.2f}x; the health check over {rows:,} history rows: {seconds * 1000:.0f} ms")


if __name__ == "__main__":
    main()
