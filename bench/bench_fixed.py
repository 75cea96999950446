"""What a crawl costs outside its pages: start-up and closing of the ``watch`` spider against plain
Scrapy, with one watch and with many, on tiny pages (so that the pages themselves cost little).

Run: ``.venv/bin/python bench/bench_fixed.py`` (``--watches 1500 --runs 5``, about 3 minutes on a
quiet 2-core machine; ``--profile DIR`` writes a cProfile of each watch crawl of the largest size).

Each crawl is a subprocess (``bench_fixed.py crawl``) on the settings of ``bench_crawl.py`` (plain
Scrapy on Scrapy's defaults plus the same concurrency and reactor; the ``watch`` spider on the
project's settings, a SQLite store in a temporary directory). The crawl records, on the wall clock
and in its own CPU time (``time.process_time``), when its script began (after Python's start-up),
the crawler was built, the spider opened, the first request reached the downloader, the last
response came back, the spider closed and ``CrawlerProcess.start`` returned; the benchmark adds
when the process was started and when it exited, and the CPU time of the process and its children
(the workers) from ``RUSAGE_CHILDREN``.

*Fixed cost* here is everything outside the pages: the process's time before its first request
and after its last response (imports, settings, the watchlist, the store, the workers; then the
close: pipelines, store upkeep, housekeeping, the workers' shutdown, the exit). Reported as
medians over interleaved runs (plain 1, plain N, 1st and 2nd crawl of 1 watch, of N watches), in
CPU seconds (the machine may be shared: CPU moves less than wall time) and wall seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_crawl

ROOT = Path(__file__).resolve().parents[1]
SCRIPT_START = time.time(), time.process_time()

#: the phases reported, each from one mark to the next
PHASES = (("launch", "script"), ("script", "crawler"), ("crawler", "crawl"), ("crawl", "opened"),
          ("opened", "first_request"), ("first_request", "last_response"), ("last_response", "closed"),
          ("closed", "stopped"), ("stopped", "returned"), ("returned", "exit"))


def serve() -> int:
    """Tiny HTML pages, /p/<i>: a title and a paragraph that name i (distinct pages, ~300 bytes)."""
    from twisted.internet import reactor as installed_reactor
    from twisted.web.resource import Resource
    from twisted.web.server import Site

    reactor: Any = installed_reactor

    class Tiny(Resource):
        isLeaf = True

        def render_GET(self, request: Any) -> bytes:
            request.setHeader(b"content-type", b"text/html; charset=utf-8")
            name = request.path.rsplit(b"/", 1)[-1].decode()
            return (f"<!DOCTYPE html><html><head><title>Page {name}</title></head><body><h1>Page {name}</h1>"
                    f"<p>The council met on Tuesday to discuss the budget of page {name}, the library's new "
                    f"opening hours and the harbour bridge; the vote is next week.</p></body></html>").encode()

    class QuietSite(Site):
        def log(self, request: Any) -> None:
            pass

    port = reactor.listenTCP(0, QuietSite(Tiny()), backlog=128, interface="127.0.0.1")  # type: ignore[no-untyped-call]
    print(f"PORT {port.getHost().port}", flush=True)
    reactor.run()
    return 0


def crawl(spider: str, urls_file: str, overrides: dict[str, Any], out: str, profile: str | None) -> int:
    """One crawl, as bench_crawl.crawl does it, writing the marks of its phases to *out*."""
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess
    from scrapy.settings import Settings
    from scrapy.utils.project import get_project_settings

    marks: dict[str, tuple[float, float]] = {"script": SCRIPT_START}

    def mark(name: str, once: bool = True) -> None:
        if not once or name not in marks:
            marks[name] = time.time(), time.process_time()

    settings = get_project_settings() if spider == "watch" else Settings()
    settings.setdict(overrides, priority="cmdline")
    process = CrawlerProcess(settings)
    crawler = process.create_crawler("watch" if spider == "watch" else bench_crawl._plain_spider(urls_file))
    mark("crawler")
    for signal, name, once in ((signals.spider_opened, "opened", True),
                               (signals.request_reached_downloader, "first_request", True),
                               (signals.response_received, "last_response", False),
                               (signals.spider_closed, "closed", True),
                               (signals.engine_stopped, "stopped", True)):
        crawler.signals.connect(lambda name=name, once=once, **_: mark(name, once), signal=signal, weak=False)
    process.crawl(crawler, **({"watchlist": urls_file} if spider == "watch" else {}))
    mark("crawl")
    if profile:
        import cProfile

        cProfile.runctx("process.start()", globals(), {"process": process}, profile)
    else:
        process.start()
    mark("returned")
    assert crawler.stats is not None
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    Path(out).write_text(json.dumps({"marks": marks, "stats": crawler.stats.get_stats(),
                                     "cpu_children": children.ru_utime + children.ru_stime}, default=str),
                         encoding="utf-8")
    return 0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_one(kind: str, urls: Path, watchlist: Path, store: Path, workdir: Path, profile: Path | None) -> dict[str, Any]:
    out = workdir / "result.json"
    out.unlink(missing_ok=True)
    spider = "plain" if kind == "plain" else "watch"
    overrides = dict(bench_crawl.PLAIN_SETTINGS if spider == "plain" else bench_crawl.COMMON_SETTINGS)
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    if spider == "watch":
        overrides["CHANGEWATCH_STORE"] = f"sqlite:///{store}"
        env["SCRAPY_SETTINGS_MODULE"] = "changewatch.settings"
    listed = watchlist if spider == "watch" else urls
    cmd = [sys.executable, __file__, "crawl", "--spider", spider, "--urls", str(listed),
           "--settings-json", json.dumps(overrides), "--out", str(out),
           *(["--profile", str(profile)] if profile else [])]
    cpu0 = _children_cpu()
    launch = time.time()
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=600)
    exited = time.time()
    cpu = _children_cpu() - cpu0
    if proc.returncode != 0 or not out.exists():
        raise RuntimeError(f"{kind} crawl failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    wall = {name: t for name, (t, _) in result["marks"].items()} | {"launch": launch, "exit": exited}
    own = {name: c for name, (_, c) in result["marks"].items()}
    return {"wall": wall, "cpu": own, "cpu_total": cpu, "cpu_workers": result["cpu_children"],
            "responses": result["stats"].get("response_received_count", 0),
            "elapsed": result["stats"].get("elapsed_time_seconds", 0.0)}


def summarise(results: list[dict[str, Any]]) -> dict[str, float]:
    """Medians: the wall seconds of each phase, the crawl process's CPU in each phase it can time,
    and the CPU of the whole process tree; *fixed* = all but the pages (first request to last response)."""
    row: dict[str, float] = {}
    for a, b in PHASES:
        row[f"wall {a}>{b}"] = statistics.median(r["wall"][b] - r["wall"][a] for r in results)
        if a in results[0]["cpu"] and b in results[0]["cpu"]:
            row[f"cpu {a}>{b}"] = statistics.median(r["cpu"][b] - r["cpu"][a] for r in results)
    # the crawl process's CPU outside its own clock: Python's start-up before the script, and its exit
    row["cpu launch>script"] = statistics.median(r["cpu"]["script"] for r in results)
    row["cpu returned>exit"] = statistics.median(r["cpu_total"] - r["cpu_workers"] - r["cpu"]["returned"]
                                                 for r in results)
    row["cpu total"] = statistics.median(r["cpu_total"] for r in results)
    row["cpu workers"] = statistics.median(r["cpu_workers"] for r in results)
    row["cpu pages"] = statistics.median(r["cpu"]["last_response"] - r["cpu"]["first_request"] for r in results)
    row["cpu fixed"] = statistics.median(r["cpu_total"] - r["cpu_workers"] - (r["cpu"]["last_response"]
                                         - r["cpu"]["first_request"]) for r in results)
    row["wall fixed"] = statistics.median((r["wall"]["exit"] - r["wall"]["launch"]) - (r["wall"]["last_response"]
                                          - r["wall"]["first_request"]) for r in results)
    row["wall total"] = statistics.median(r["wall"]["exit"] - r["wall"]["launch"] for r in results)
    return row


def bench(watches: int, runs: int, profile_dir: Path | None) -> int:
    server = subprocess.Popen([sys.executable, __file__, "serve"], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert server.stdout is not None
    base = f"http://127.0.0.1:{int(server.stdout.readline().split()[1])}"
    tmp = Path(tempfile.mkdtemp(prefix="bench-fixed-"))
    try:
        sizes = sorted({1, watches})
        for n in sizes:
            d = tmp / str(n)
            d.mkdir()
            urls = [f"{base}/p/{i}" for i in range(n)]
            (d / "urls.txt").write_text("\n".join(urls) + "\n", encoding="utf-8")
            (d / "watchlist.yaml").write_text("watches:\n" + "".join(f"  - url: {u}\n" for u in urls), encoding="utf-8")
        results: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for run in range(runs):
            for n in sizes:
                d = tmp / str(n)
                store = d / f"state-{run}.db"
                for kind in ("plain", "first", "second"):
                    profile = (profile_dir / f"{kind}-{n}-{run}.prof"
                               if profile_dir is not None and kind != "plain" and n == watches else None)
                    r = run_one(kind, d / "urls.txt", d / "watchlist.yaml", store, d, profile)
                    if r["responses"] != n:
                        raise SystemExit(f"ABORTED: the {kind} crawl of {n} got {r['responses']} responses")
                    results.setdefault((kind, n), []).append(r)
                    print(f"run {run + 1}/{runs}: {kind:6} {n:5}: cpu {r['cpu_total']:.2f} s, "
                          f"wall {r['wall']['exit'] - r['wall']['launch']:.2f} s", file=sys.stderr, flush=True)
        report(results, sizes)
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def report(results: dict[tuple[str, int], list[dict[str, Any]]], sizes: list[int]) -> None:
    rows = {key: summarise(r) for key, r in results.items()}
    names = list(next(iter(rows.values())))
    keys = [(k, n) for n in sizes for k in ("plain", "first", "second")]
    print(f"\nmedians of {len(next(iter(results.values())))} interleaved runs, seconds")
    print(f"{'':28}" + "".join(f"{k + ' ' + str(n):>14}" for k, n in keys))
    for name in names:
        print(f"{name:28}" + "".join(f"{rows[key].get(name, float('nan')):14.3f}" for key in keys))
    big = sizes[-1]
    plain = rows[("plain", big)]
    for kind in ("first", "second"):
        row = rows[(kind, big)]
        print(f"{kind} crawl of {big}: fixed cost {row['cpu fixed']:.2f} CPU s against plain Scrapy's "
              f"{plain['cpu fixed']:.2f} ({row['cpu fixed'] / plain['cpu fixed']:.2f}x); wall {row['wall fixed']:.2f} "
              f"against {plain['wall fixed']:.2f} ({row['wall fixed'] / plain['wall fixed']:.2f}x)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("serve", help="(internal) serve tiny pages")
    c = sub.add_parser("crawl", help="(internal) run one crawl")
    c.add_argument("--spider", choices=("plain", "watch"), required=True)
    c.add_argument("--urls", required=True)
    c.add_argument("--settings-json", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--profile")
    parser.add_argument("--watches", type=int, default=1500)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", type=Path, help="write a cProfile of each watch crawl of --watches here")
    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve()
    if args.command == "crawl":
        return crawl(args.spider, args.urls, json.loads(args.settings_json), args.out, args.profile)
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    return bench(args.watches, args.runs, args.profile)


if __name__ == "__main__":
    sys.exit(main())
