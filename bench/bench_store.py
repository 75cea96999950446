"""Observations/s into the SQLite and PostgreSQL stores at 10k, 100k and 1M keys, as ratios to the
straightforward algorithm with the same driver; and what the crawl's event loop feels of it.

Run: ``.venv/bin/python bench/bench_store.py`` (10k and 100k keys, both backends, a few minutes;
``--sizes 10k,100k,1m`` adds a million keys, ~1.5 GB per backend; ``--backends sqlite``;
``--pg URI`` for another server than ``CHANGEWATCH_TEST_POSTGRESQL`` or
``postgresql://postgres@127.0.0.1:5432/test``; ``--sample 500`` for a smoke run).

For each size N, the store is filled with N keys (a bulk load straight into its tables, rows as
a commit writes them: snapshot of ~1.4 KB, counters, validators), then ``--sample`` observations
go through the real store API as the pipeline makes them (``read``, then ``commit`` with the state
read as ``previous``, the response's validators and a lease):

* ``first``: keys not in the store (a baseline: an INSERT of the key and its validators);
* ``second``: keys already stored, observed again unchanged (kind ``none``: counters, last_seen,
  validators replaced), in random order, so that the indexes and not a warm page do the work.

The reference is what anyone would write first with the same driver: a table with the same
columns and primary key, ``SELECT`` the key, then ``INSERT`` (first) or ``UPDATE`` (second) it, one
transaction each, no version check, no validators, no change log. ``read`` is the median time of
one ``Store.read`` of a random stored key: flat from 10k to 1M when the primary key does the work.
``KB/2nd`` (SQLite): what the process wrote (``/proc/self/io`` wchar: WAL frames, checkpoints) per
second observation, the store's and the reference's: the pages a commit dirties, which the
machine's noise does not move (a rate on a shared 2-core machine moves by ±30 %).

``--loop`` (on by default) measures the crawl's side: 2,000 second observations through
``StoreRunner.update`` with 16 in flight, as the pipeline runs them, while a ticker on the same
asyncio loop wakes every millisecond; its lateness (p99, max) is how long the loop was blocked.
PostgreSQL with its commits on the store thread (as shipped) and inline on the loop; SQLite
inline (as shipped, ``synchronous=NORMAL``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from changewatch.core.comparisons import Kind, load_comparisons
from changewatch.core.comparisons.content import page_text
from changewatch.core.comparisons.content_part import ContentPart
from changewatch.core.comparisons.fields import FieldsPart
from changewatch.core.snapshot import Snapshot
from changewatch.store import HttpValidators, Lease, Outcome, Store, store_from_uri
from changewatch.store.runner import StoreRunner
from changewatch.store.semantics import dumps

SPIDER = "bench"
LEASE = Lease("bench:-:1::0", 600)
PG = os.environ.get("CHANGEWATCH_TEST_POSTGRESQL", "postgresql://postgres@127.0.0.1:5432/test")
T_FILL = datetime(2026, 1, 1, tzinfo=UTC)
WORDS = ("lamp kettle price offer stock delivery table chair walnut brass linen shade bulb cable switch "
         "warranty review colour height width depth weight returns basket checkout").split()


def snapshot_bytes(seed: int) -> bytes:
    """A snapshot as the pipeline keeps for a product page: fields and ~2.5 KB of stable text."""
    rng = random.Random(seed)
    html = "".join(f"<p>{' '.join(rng.choice(WORDS) for _ in range(40))}</p>" for _ in range(10))
    content = ContentPart.of(page_text(html, None, None, False))
    price = f"{rng.randint(10, 999)}.00"
    return Snapshot({"fields": FieldsPart({"offers.price": price}, {"offers.price": price}),
                     "content": content}).encode(load_comparisons())


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def key_of(i: int) -> str:
    return f"https://shop.example/p/{i}"


# -- filling -------------------------------------------------------------------------------------

OBS_COLUMNS = ("spider", "key", "url", "version", "snapshot", "counters", "first_seen", "last_seen", "last_good",
               "error_streak")
VAL_COLUMNS = ("spider", "url", "key", "etag", "last_modified", "size", "full_at", "runs", "spec")


def fill_rows(n: int, snapshots: list[bytes]) -> Iterator[tuple[tuple[Any, ...], tuple[Any, ...]]]:
    at = iso(T_FILL)
    counters = dumps({"baseline": 1})
    for i in range(n):
        key = key_of(i)
        yield ((SPIDER, key, key, 1, snapshots[i % len(snapshots)], counters, at, at, at, 0),
               (SPIDER, key, key, f'"{i:x}"', None, 1400, at, 0, "s1"))


def fill_sqlite(path: Path, n: int, snapshots: list[bytes], reference: bool) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    rows = list(fill_rows(n, snapshots))
    if reference:
        db.executemany("INSERT INTO ref VALUES (?, ?, ?, ?, ?, ?)",
                       [(r[1], r[2], r[4], r[5], r[7], 1) for r, _ in rows])
    else:
        db.executemany(f"INSERT INTO observations ({', '.join(OBS_COLUMNS)}) VALUES ({', '.join('?' * 10)})",
                       [r for r, _ in rows])
        db.executemany(f"INSERT INTO validators ({', '.join(VAL_COLUMNS)}) VALUES ({', '.join('?' * 9)})",
                       [v for _, v in rows])
    db.execute("COMMIT")
    db.close()


def fill_postgresql(conn: Any, schema: str, n: int, snapshots: list[bytes], reference: bool) -> None:
    with conn.transaction(), conn.cursor() as cur:
        if reference:
            with cur.copy(f'COPY "{schema}".ref (key, url, snapshot, counters, last_seen, version) FROM STDIN') as copy:
                for r, _ in fill_rows(n, snapshots):
                    copy.write_row((r[1], r[2], r[4], r[5], r[7], 1))
        else:
            with cur.copy(f'COPY "{schema}".observations ({", ".join(OBS_COLUMNS)}) FROM STDIN') as copy:
                for r, _ in fill_rows(n, snapshots):
                    copy.write_row(r)
            with cur.copy(f'COPY "{schema}".validators ({", ".join(VAL_COLUMNS)}) FROM STDIN') as copy:
                for _, v in fill_rows(n, snapshots):
                    copy.write_row(v)
    conn.execute(f'ANALYZE "{schema}".{"ref" if reference else "observations"}')


REF_TABLE = ("CREATE TABLE {t} (key text PRIMARY KEY, url text NOT NULL, snapshot {blob}, counters text NOT NULL, "
             "last_seen text, version integer NOT NULL)")


# -- one backend at one size -----------------------------------------------------------------------

class Bench:
    """A store filled with N keys, its reference table beside it, and the timed operations."""

    def __init__(self, backend: str, n: int, sample: int, snapshots: list[bytes]):
        self.backend, self.n, self.sample, self.snapshots = backend, n, sample, snapshots
        self.rng = random.Random(n)

    @contextmanager
    def opened(self, workdir: Path) -> Iterator[Store]:
        if self.backend == "sqlite":
            path = workdir / f"state-{self.n}.db"
            store = store_from_uri(f"sqlite:///{path}")
            store.open()
            store.close()
            fill_sqlite(path, self.n, self.snapshots, reference=False)
            ref = sqlite3.connect(workdir / f"ref-{self.n}.db", isolation_level=None)
            ref.execute("PRAGMA journal_mode=WAL")
            ref.execute("PRAGMA synchronous=NORMAL")
            ref.execute(REF_TABLE.format(t="ref", blob="BLOB"))
            ref.close()
            fill_sqlite(workdir / f"ref-{self.n}.db", self.n, self.snapshots, reference=True)
            self.reference = self._sqlite_reference(workdir / f"ref-{self.n}.db")
            store.open()
            try:
                yield store
            finally:
                store.close()
            return
        import psycopg

        schema = f"cwbench_{uuid.uuid4().hex[:8]}"
        store = store_from_uri(f"{PG}{'&' if '?' in PG else '?'}schema={schema}")
        store.open()
        admin = psycopg.connect(PG, autocommit=True)
        try:
            admin.execute(REF_TABLE.format(t=f'"{schema}".ref', blob="bytea"))
            fill_postgresql(admin, schema, self.n, self.snapshots, reference=False)
            fill_postgresql(admin, schema, self.n, self.snapshots, reference=True)
            self.reference = self._postgresql_reference(schema)
            yield store
        finally:
            store.close()
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
            admin.close()

    def _sqlite_reference(self, path: Path) -> Callable[[str, bool], None]:
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA synchronous=NORMAL")

        def observe(key: str, first: bool) -> None:
            db.execute("BEGIN IMMEDIATE")
            row = db.execute("SELECT url, snapshot, counters, last_seen, version FROM ref WHERE key = ?",
                             (key,)).fetchone()
            if first:
                db.execute("INSERT INTO ref VALUES (?, ?, ?, ?, ?, 1)", (key, key, self.snapshots[0], "{}", "now"))
            else:
                assert row is not None
                db.execute("UPDATE ref SET counters = ?, last_seen = ?, version = version + 1 WHERE key = ?",
                           ('{"none":1}', "later", key))
            db.execute("COMMIT")
        return observe

    def _postgresql_reference(self, schema: str) -> Callable[[str, bool], None]:
        import psycopg

        conn = psycopg.connect(PG, autocommit=True)

        def observe(key: str, first: bool) -> None:
            with conn.transaction(), conn.cursor() as cur:
                row = cur.execute(f'SELECT url, snapshot, counters, last_seen, version FROM "{schema}".ref '
                                  "WHERE key = %s", (key,)).fetchone()
                if first:
                    cur.execute(f'INSERT INTO "{schema}".ref VALUES (%s, %s, %s, %s, %s, 1)',
                                (key, key, self.snapshots[0], "{}", "now"))
                else:
                    assert row is not None
                    cur.execute(f'UPDATE "{schema}".ref SET counters = %s, last_seen = %s, version = version + 1 '
                                "WHERE key = %s", ('{"none":1}', "later", key))
        return observe

    # -- the timed parts

    def observations(self, store: Store) -> dict[str, float]:
        fresh = [key_of(self.n + i) for i in range(self.sample)]
        stored = [key_of(i) for i in self.rng.sample(range(self.n), min(self.sample, self.n))]
        at = iso(T_FILL + timedelta(hours=1))
        snapshot = self.snapshots[1]

        def first(key: str) -> None:
            assert store.read(SPIDER, key) is None
            http = HttpValidators(url=key, key=key, etag='"e1"', size=1400, spec="s1")
            store.commit(SPIDER, key, None, Outcome(Kind.BASELINE, key, at, snapshot=snapshot, http=http), lease=LEASE)

        def second(key: str) -> None:
            state = store.read(SPIDER, key)
            assert state is not None
            http = HttpValidators(url=key, key=key, etag='"e1"', size=1400, spec="s1")
            store.commit(SPIDER, key, state.version, Outcome(Kind.NONE, key, at, http=http), lease=LEASE,
                         previous=state)

        figures = {"first": rate(first, fresh)}
        written_kb(1)  # counted from here
        figures["second"], figures["second KB"] = rate(second, stored), written_kb(len(stored))
        ref_fresh = [key_of(self.n + self.sample + i) for i in range(self.sample)]
        figures["ref first"] = rate(lambda k: self.reference(k, True), ref_fresh)
        written_kb(1)
        figures["ref second"] = rate(lambda k: self.reference(k, False), stored)
        figures["ref second KB"] = written_kb(len(stored))
        reads = [key_of(i) for i in self.rng.sample(range(self.n), min(self.sample, self.n))]
        figures["read µs"] = median_time(lambda k: store.read(SPIDER, k), reads) * 1e6
        return figures


def rate(fn: Callable[[str], None], keys: list[str]) -> float:
    started = time.perf_counter()
    for key in keys:
        fn(key)
    return len(keys) / (time.perf_counter() - started)


_written_at = [0]


def written_kb(count: int) -> float:
    """KB this process handed to write() since the last call, per one of *count* observations
    (Linux ``/proc/self/io`` wchar: the WAL frames and the checkpoints of a SQLite commit; NaN
    elsewhere, and for PostgreSQL, whose server writes). Unlike a rate, the machine's noise does
    not move it: it counts the pages a commit dirties."""
    try:
        with open("/proc/self/io") as io:
            wchar = next(int(line.split()[1]) for line in io if line.startswith("wchar:"))
    except (OSError, StopIteration):
        return float("nan")
    before, _written_at[0] = _written_at[0], wchar
    return (wchar - before) / 1024 / count


def median_time(fn: Callable[[str], object], keys: list[str]) -> float:
    times = []
    for key in keys:
        started = time.perf_counter()
        fn(key)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


# -- the event loop's side ------------------------------------------------------------------------

async def loop_lag(store: Store, keys: list[str], inline: bool) -> tuple[float, float, float]:
    """Observations/s through StoreRunner.update (16 in flight), and the ticker's p99 and max
    lateness in ms."""
    runner = StoreRunner(store)
    if inline:
        async def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)
        runner.call = call  # type: ignore[method-assign]
    at = iso(T_FILL + timedelta(hours=2))
    late: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        while not done.is_set():
            started = time.perf_counter()
            await asyncio.sleep(0.001)
            late.append(time.perf_counter() - started - 0.001)

    async def compute(state: Any) -> Outcome:
        await asyncio.sleep(0)  # the pipeline awaits a worker here: the loop runs in between
        return Outcome(Kind.NONE, state.url, at)

    queue = list(keys)

    async def worker() -> None:
        while queue:
            await runner.update(SPIDER, queue.pop(), compute, lease=LEASE)

    tick = asyncio.ensure_future(ticker())
    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(16)))
    elapsed = time.perf_counter() - started
    done.set()
    await tick
    late.sort()
    return len(keys) / elapsed, late[int(len(late) * 0.99)] * 1e3, late[-1] * 1e3


def written(kb: float, backend: str) -> str:
    return f"{kb:.1f}" if backend == "sqlite" and kb == kb else "-"


def parse_size(text: str) -> int:
    text = text.strip().lower()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1], 1)
    return int(float(text.rstrip("km")) * scale)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10k,100k")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--sample", type=int, default=3000, help="observations timed per figure")
    parser.add_argument("--pg", default=None)
    parser.add_argument("--no-loop", dest="loop", action="store_false")
    args = parser.parse_args()
    if args.pg:
        global PG
        PG = args.pg
    snapshots = [snapshot_bytes(seed) for seed in range(16)]
    print(f"snapshot: {statistics.mean(map(len, snapshots)):.0f} bytes on average; {args.sample} observations "
          "per figure")
    header = (f"{'backend':<11}{'keys':>10}{'fill s':>8}{'first/s':>10}{'ref':>9}{'ratio':>7}{'second/s':>10}"
              f"{'ref':>9}{'ratio':>7}{'read µs':>9}{'KB/2nd':>8}{'ref':>6}")
    print(header)
    with tempfile.TemporaryDirectory(prefix="cwbench-") as tmp:
        for backend in args.backends.split(","):
            for n in map(parse_size, args.sizes.split(",")):
                bench = Bench(backend, n, args.sample, snapshots)
                started = time.perf_counter()
                with bench.opened(Path(tmp)) as store:
                    filled = time.perf_counter() - started
                    f = bench.observations(store)
                    print(f"{backend:<11}{n:>10,}{filled:>8.1f}{f['first']:>10.0f}{f['ref first']:>9.0f}"
                          f"{f['first'] / f['ref first']:>6.2f}x{f['second']:>10.0f}{f['ref second']:>9.0f}"
                          f"{f['second'] / f['ref second']:>6.2f}x{f['read µs']:>9.0f}"
                          f"{written(f['second KB'], backend):>8}{written(f['ref second KB'], backend):>6}", flush=True)
                    if args.loop and n == parse_size(args.sizes.split(",")[0]):
                        for inline in ((False, True) if backend == "postgresql" else (True,)):
                            keys = [key_of(i) for i in range(min(n, 2000))]
                            per_s, p99, worst = asyncio.run(loop_lag(store, keys, inline))
                            how = "inline on the loop" if inline else "on the store thread"
                            print(f"  event loop, {backend} {how}: {per_s:.0f} observations/s, ticker late "
                                  f"p99 {p99:.2f} ms, max {worst:.2f} ms", flush=True)


if __name__ == "__main__":
    main()
