"""What the schedule reads of the store to decide the plain watches of a watchlist that also has a
site watch: the plain watches' due rows, or every key's.

Two stores, filled through the store's own API (commits), on SQLite and on PostgreSQL:

- **reference**: the ``--plain`` plain watches' keys, and nothing else;
- **mixed**: the same keys, and a site watch of ``--pages`` pages (the site's set in
  ``site_pages``, each page's key observed).

Each is crawled by the ``watch`` spider with its watchlist (the plain watches; the mixed one's with
the site watch too), the adaptive schedule on, every key observed just before: nothing is due, so
nothing is fetched, and a crawl is its start alone (the site's discovery is not due either,
``site.every``: its stored pages are requested, with their due states read with the set, and
skipped). In the crawl process, the store's due reads are timed and their rows counted: the
plain watches' (``due_table``: every key of the spider; ``due_entries``: the keys asked for), and
the site's pages (``site_pages``, in batches), apart. The figure is the mixed store's against
the reference's, the two crawled in turn in the same run: what the plain watches' start costs
once a site's pages are in the store, as a ratio to what it costs without them.

Run: ``.venv/bin/python bench/bench_site_due.py`` (``--pages 50000 --plain 5 --runs 3``; both
backends, PostgreSQL at ``$CHANGEWATCH_TEST_POSTGRESQL`` or ``postgresql://postgres@127.0.0.1:5432/test``,
in a schema of its own dropped at the end). ``--pages 0``: the plain watches alone (what a long
watchlist's reads cost, ``--plain 10000``). ``--root DIR`` measures another checkout's code (its
crawl and its store), with this benchmark: the same figures before and after a change.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PG = os.environ.get("CHANGEWATCH_TEST_POSTGRESQL", "postgresql://postgres@127.0.0.1:5432/test")
SITE = "docs"
SITEMAP = "http://127.0.0.1:9/sitemap.xml"  # never fetched: the site's discovery is not due
#: the store methods whose calls and rows the crawl process counts
READS = ("due_table", "due_entries", "site_pages")


def watchlist(plain: int, site: bool) -> dict[str, Any]:
    watches: list[dict[str, Any]] = [{"key": f"plain-{i}", "url": f"http://127.0.0.1:9/plain/{i}"}
                                     for i in range(plain)]
    if site:
        watches.append({"key": SITE, "site": {"sitemap": SITEMAP, "every": "7d", "max_pages": 1_000_000}})
    return {"watches": watches}


def fill(uri: str, plain: int, pages: int) -> None:
    """The store at *uri*: each key of the watchlist observed now (a baseline, with its schedule)."""
    from changewatch.core.comparisons import Kind, load_comparisons
    from changewatch.core.schedule import Bounds, ScheduleUpdate
    from changewatch.core.snapshot import Snapshot
    from changewatch.store import Outcome, PageSetChange, open_store
    from changewatch.store.semantics import format_time

    store = open_store(uri)
    snapshot = Snapshot({}).encode(load_comparisons())
    update = ScheduleUpdate(False, Bounds(900.0, 7 * 86400.0))
    now = format_time(store.now())
    try:
        urls = [f"http://127.0.0.1:9/p/{i:06d}" for i in range(pages)]
        for key, url in [*((f"plain-{i}", f"http://127.0.0.1:9/plain/{i}") for i in range(plain)),
                         *((f"{SITE}|{url}", url) for url in urls)]:
            store.commit("watch", key, None, Outcome(Kind.BASELINE, url, now, snapshot=snapshot, schedule=update))
        if pages:
            store.commit("watch", SITE, None, Outcome(Kind.BASELINE, SITEMAP, now, snapshot=snapshot, schedule=update,
                                                      pages=PageSetChange(added=urls, spec="max_pages=1000000")))
    finally:
        store.close()


def crawl(uri: str, path: str, out: str) -> None:
    """Crawl *path* on the store at *uri*, the store's reads counted (:data:`READS`); JSON to *out*."""
    from scrapy.crawler import CrawlerProcess
    from scrapy.utils.project import get_project_settings

    counts: dict[str, list[float]] = {name: [0, 0, 0.0] for name in READS}  # calls, rows, seconds

    def counted(name: str, method: Any) -> Any:
        def read(self: Any, *args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            rows = method(self, *args, **kwargs)
            entry = counts[name]
            entry[0] += 1
            entry[1] += len(rows)
            entry[2] += time.perf_counter() - t0
            return rows
        return read

    from changewatch.store.postgresql.store import PostgreSQLStore
    from changewatch.store.sqlite.store import SQLiteStore

    for cls in (SQLiteStore, PostgreSQLStore):
        for name in READS:
            if hasattr(cls, name):
                setattr(cls, name, counted(name, getattr(cls, name)))
    settings = get_project_settings()
    settings.setdict({"CHANGEWATCH_STORE": uri, "CHANGEWATCH_ALLOW_PRIVATE": True, "CHANGEWATCH_SCHEDULE_ENABLED": True,
                      "LOG_LEVEL": "WARNING", "ROBOTSTXT_OBEY": False}, priority="cmdline")
    process = CrawlerProcess(settings)
    crawler = process.create_crawler("watch")
    t0, cpu0 = time.perf_counter(), time.process_time()
    process.crawl(crawler, watchlist=path)
    process.start()
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    stats = crawler.stats.get_stats() if crawler.stats else {}
    kept = {k: v for k, v in stats.items()
            if isinstance(v, int | float) and k.startswith(("changewatch/", "downloader/"))}
    Path(out).write_text(json.dumps({"reads": counts, "wall": wall, "cpu": cpu, "stats": kept}))


def _run(root: Path, *args: str) -> None:
    env = {"SCRAPY_SETTINGS_MODULE": "changewatch.settings", "PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, __file__, *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=3600)
    if proc.returncode != 0:
        raise SystemExit(f"{args[0]} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")


def _backend(backend: str, tmp: Path, args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    schema = f"cwbench_{uuid.uuid4().hex[:12]}"
    names = ("reference", "mixed") if args.pages else ("reference",)  # no site: the plain watches alone
    uris = ({name: f"sqlite:///{tmp / name}.db" for name in names} if backend == "sqlite" else
            {name: f"{PG}{'&' if '?' in PG else '?'}schema={schema}_{name}" for name in names})
    try:
        for name, uri in uris.items():
            t0 = time.perf_counter()
            _run(args.root, "fill", uri, str(args.plain), str(args.pages if name == "mixed" else 0))
            print(f"{backend} {name}: filled in {time.perf_counter() - t0:.0f} s", flush=True)
        results: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        for run in range(args.runs):
            for name, uri in uris.items():
                path = tmp / f"{name}.json"
                path.write_text(json.dumps(watchlist(args.plain, name == "mixed")))
                out = tmp / f"out-{backend}-{name}-{run}.json"
                _run(args.root, "crawl", uri, str(path), str(out))
                result = json.loads(out.read_text())
                if result["stats"].get("downloader/request_count", 0):
                    raise SystemExit(f"{backend} {name}: the crawl fetched something (a key was due): {result}")
                results[name].append(result)
                reads = result["reads"]
                print(f"{backend} {name} run {run + 1}: " + ", ".join(
                    f"{n} {int(c)} call(s) {int(r)} rows {s * 1000:.1f} ms" for n, (c, r, s) in reads.items() if c)
                      + f"; crawl {result['wall']:.2f} s wall, {result['cpu']:.2f} s CPU", flush=True)
        return results
    finally:
        if backend == "postgresql":
            import psycopg

            with psycopg.connect(PG, connect_timeout=3, autocommit=True) as conn:
                for name in ("reference", "mixed"):
                    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}_{name}" CASCADE')


def _plain_reads(result: dict[str, Any]) -> tuple[int, float]:
    """Rows and seconds of the plain watches' due reads (whichever the code has)."""
    reads = result["reads"]
    return (int(reads["due_table"][1] + reads["due_entries"][1]), reads["due_table"][2] + reads["due_entries"][2])


def bench(args: argparse.Namespace) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="changewatch-bench-site-due-"))
    try:
        print(f"code: {args.root}; {args.plain} plain watches, a site of {args.pages} pages; medians of "
              f"{args.runs} interleaved runs")
        print(f"{'':<12}{'plain rows: ref':>16}{'mixed':>9}{'ratio':>9}{'plain ms: ref':>15}{'mixed':>9}"
              f"{'ratio':>9}{'site rows':>11}{'site ms':>9}")
        for backend in args.backends.split(","):
            results = _backend(backend, tmp, args)
            if not args.pages:
                ref = [_plain_reads(r) for r in results["reference"]]
                print(f"{backend:<12}{statistics.median(r for r, _ in ref):>16.0f}"
                      f"{'':>18}{statistics.median(s for _, s in ref) * 1000:>15.1f}", flush=True)
                continue
            ref = [_plain_reads(r) for r in results["reference"]]
            mixed = [_plain_reads(r) for r in results["mixed"]]
            rows = statistics.median(r for r, _ in ref), statistics.median(r for r, _ in mixed)
            ms = statistics.median(s for _, s in ref) * 1000, statistics.median(s for _, s in mixed) * 1000
            ratio = statistics.median(m[1] / r[1] for r, m in zip(ref, mixed, strict=True) if r[1])
            site_rows = statistics.median(r["reads"]["site_pages"][1] for r in results["mixed"])
            site_ms = statistics.median(r["reads"]["site_pages"][2] for r in results["mixed"]) * 1000
            print(f"{backend:<12}{rows[0]:>16.0f}{rows[1]:>9.0f}{rows[1] / max(rows[0], 1):>8.0f}x{ms[0]:>15.1f}"
                  f"{ms[1]:>9.1f}{ratio:>8.1f}x{site_rows:>11.0f}{site_ms:>9.0f}", flush=True)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command")
    f = sub.add_parser("fill")
    f.add_argument("uri")
    f.add_argument("plain", type=int)
    f.add_argument("pages", type=int)
    c = sub.add_parser("crawl")
    c.add_argument("uri")
    c.add_argument("watchlist")
    c.add_argument("out")
    parser.add_argument("--pages", type=int, default=50_000, help="the site's pages (default 50000)")
    parser.add_argument("--plain", type=int, default=5, help="plain watches (default 5)")
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs (default 3)")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the checkout whose code is measured (default: this one)")
    args = parser.parse_args(argv)
    if args.command == "fill":
        fill(args.uri, args.plain, args.pages)
        return 0
    if args.command == "crawl":
        crawl(args.uri, args.watchlist, args.out)
        return 0
    return bench(args)


if __name__ == "__main__":
    sys.exit(main())
