"""Second crawls of real pages: this tree against another checkout, in pairs, and where the time goes.

``bench_crawl.py --real --against PYTHON`` runs each tree's second crawl once per run among eight
crawls of other kinds (plain Scrapy, urlwatch…), so on a machine shared with other work a run's
ratio moves with whatever else ran then.

This runs only the second crawls, one of each tree back to back (in turn: who goes first
alternates), on one nginx serving the corpus (realpages.py): a first crawl of each tree makes its
store, then RUNS pairs. Per crawl: pages/s (``response_received_count / elapsed_time_seconds``, as
bench_crawl.py), the CPU seconds of the crawl process and of its workers (start-up included), the
confirmations sent (``changewatch/confirm/sent``), and the seconds from spider_opened to the first
response, the first item, the last response and spider_closed (a fixed cost at the start or the
end shows there). Prints each pair, then the median of each tree's rate and CPU and the median of
the pairs' ratios.

    .venv/bin/python bench/bench_second_crawl.py --against PYTHON [--runs 8] [--pages 1500]

PYTHON runs the other checkout, e.g. a script ``PYTHONPATH=/tmp/oldtree exec .venv/bin/python "$@"``
with ``git archive REV`` unpacked in /tmp/oldtree.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from realpages import CORPUS, CorpusServer  # noqa: E402

SETTINGS = {"LOG_LEVEL": "WARNING", "ROBOTSTXT_OBEY": False, "AUTOTHROTTLE_ENABLED": False,
            "CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 16, "CHANGEWATCH_ALLOW_PRIVATE": True}
MARKS = ("response", "item", "closed")


def crawl(watchlist: str, store: str) -> int:
    """One ``watch`` crawl (the subprocess side): prints its figures as one JSON line."""
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings()
    settings.setdict({**SETTINGS, "CHANGEWATCH_STORE": f"sqlite:///{store}"}, priority="cmdline")
    process = CrawlerProcess(settings)
    crawler = process.create_crawler("watch")
    seen: dict[str, float] = {}

    def mark(name: str) -> object:
        def noted(*args: object, **kwargs: object) -> None:
            now = time.perf_counter()
            seen.setdefault(f"{name}_first", now)
            seen[f"{name}_last"] = now
        return noted

    for signal, name in ((signals.spider_opened, "opened"), (signals.response_received, "response"),
                         (signals.item_scraped, "item"), (signals.item_dropped, "item"),
                         (signals.spider_closed, "closed")):
        crawler.signals.connect(mark(name), signal=signal, weak=False)
    process.crawl(crawler, watchlist=watchlist)
    process.start()
    usage, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    opened = seen["opened_first"]
    print(json.dumps({"rate": stats["response_received_count"] / stats["elapsed_time_seconds"],
                      "ok": stats.get("downloader/response_status_count/200", 0),
                      "confirmations": stats.get("changewatch/confirm/sent", 0),
                      "cpu": usage.ru_utime + usage.ru_stime, "worker": workers.ru_utime + workers.ru_stime,
                      **{k: v - opened for k, v in seen.items() if not k.startswith("opened")}}))
    return 0


def run(python: list[str], env: dict[str, str], workdir: Path, store: Path, pages: int) -> dict[str, float]:
    proc = subprocess.run([*python, __file__, "crawl", str(workdir / "watchlist.yaml"), str(store)],
                          env=env, cwd=workdir, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise SystemExit(f"a crawl failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    if result["ok"] != pages + result["confirmations"]:
        raise SystemExit(f"expected {pages} responses 200, got {result['ok']}")
    return result


def bench(against: str, runs: int, pages: int) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="changewatch-second-"))
    nginx = CorpusServer(CORPUS, workdir / "nginx")
    urls = nginx.urls(pages)
    (workdir / "watchlist.yaml").write_text("watches:\n" + "".join(f"  - url: {u}\n" for u in urls), encoding="utf-8")
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "changewatch.settings"}
    trees = {"this": ([sys.executable], {**env, "PYTHONPATH": str(HERE.parent)}), "against": ([against], env)}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    print(f"{nginx.describe(pages)}; {runs} pairs of second crawls")
    try:
        for name, (python, tree_env) in trees.items():
            run(python, tree_env, workdir, workdir / f"{name}.db", pages)  # the first crawl: the store
        for n in range(runs):
            for name in ("this", "against") if n % 2 == 0 else ("against", "this"):
                python, tree_env = trees[name]
                r = run(python, tree_env, workdir, workdir / f"{name}.db", pages)
                results[name].append(r)
                print(f"  pair {n + 1}: {name:<8} {r['rate']:6.1f} pages/s, CPU {r['cpu']:5.2f} s "
                      f"+ worker {r['worker']:4.2f} s; {r['confirmations']:.0f} confirmations; "
                      + ", ".join(f"{m} {r[m + '_first']:.2f}-{r[m + '_last']:.2f} s" for m in MARKS), flush=True)
    finally:
        nginx.stop()
    for name, rs in results.items():
        rates = sorted(r["rate"] for r in rs)
        print(f"{name:<8} median {statistics.median(rates):6.1f} pages/s (range {rates[0]:.1f}-{rates[-1]:.1f}), "
              f"median CPU {statistics.median(r['cpu'] for r in rs):.2f} s + worker "
              f"{statistics.median(r['worker'] for r in rs):.2f} s")
    medians = {name: statistics.median(r["rate"] for r in rs) for name, rs in results.items()}
    ratios = sorted(a["rate"] / b["rate"] for a, b in zip(results["this"], results["against"], strict=True))
    print(f"this / against: {medians['this'] / medians['against']:.3f}x (ratio of the medians); "
          f"{statistics.median(ratios):.3f}x (median of the pairs' ratios, range {ratios[0]:.3f}-{ratios[-1]:.3f})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    if len(sys.argv) > 1 and sys.argv[1] == "crawl":
        return crawl(sys.argv[2], sys.argv[3])
    parser.add_argument("--against", required=True, metavar="PYTHON")
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--pages", type=int, default=1500)
    args = parser.parse_args()
    return bench(args.against, args.runs, args.pages)


if __name__ == "__main__":
    sys.exit(main())
