"""A crawl's whole fixed cost in one figure: the CPU seconds of a ``watch`` crawl of one watch whose
page is refused at once (nothing to fetch, parse or compare), process and workers, from Python's
start-up to its exit, against plain Scrapy's ``runspider`` of the same URL; interleaved runs, medians.

Run: ``.venv/bin/python bench/bench_startup.py --runs 9`` (``--tree DIR`` adds another checkout's
``changewatch``, e.g. one from ``git archive``, run the same way: before and after a change).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
URL = "http://127.0.0.1:9/"  # the discard port: refused at once
PLAIN = f'''import scrapy
class Plain(scrapy.Spider):
    name = "plain"
    start_urls = ["{URL}"]
    custom_settings = {{"TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
                       "RETRY_ENABLED": False, "LOG_LEVEL": "WARNING"}}
    def parse(self, response):
        yield {{"n": len(response.body)}}
'''


def _cpu(cmd: list[str], env: dict[str, str], cwd: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):  # 1: the watch's error was recorded as the crawl's outcome
        raise RuntimeError(proc.stderr[-2000:])
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--tree", type=Path, action="append", default=[], help="another checkout to measure")
    args = parser.parse_args(argv)
    trees = {"watch": ROOT, **{f"watch ({t})": t.resolve() for t in args.tree}}
    env = {k: v for k, v in os.environ.items() if k not in ("SCRAPY_SETTINGS_MODULE", "PYTHONPATH")}
    results: dict[str, list[float]] = {"plain Scrapy": [], **{name: [] for name in trees}}
    with tempfile.TemporaryDirectory() as work:
        Path(work, "plain.py").write_text(PLAIN, encoding="utf-8")
        Path(work, "watchlist.yaml").write_text(f"watches:\n  - url: {URL}\n", encoding="utf-8")
        for _ in range(args.runs):
            results["plain Scrapy"].append(_cpu([sys.executable, "-m", "scrapy", "runspider", "plain.py"], env, work))
            for name, tree in trees.items():
                with tempfile.TemporaryDirectory() as store:
                    crawl_env = {**env, "PYTHONPATH": str(tree), "SCRAPY_SETTINGS_MODULE": "changewatch.settings"}
                    cmd = [sys.executable, "-m", "scrapy", "crawl", "watch", "-a", "watchlist=watchlist.yaml",
                           "-s", f"CHANGEWATCH_STORE=sqlite:///{store}/s.db", "-s", "LOG_LEVEL=WARNING",
                           "-s", "RETRY_ENABLED=False"]
                    results[name].append(_cpu(cmd, crawl_env, work))
    plain = statistics.median(results["plain Scrapy"])
    print(f"CPU seconds of the whole process and its workers, medians of {args.runs} interleaved runs")
    for name, values in results.items():
        median = statistics.median(values)
        print(f"{name:>40}: {median:.3f} ({median / plain:.2f}x plain Scrapy)  " + " ".join(f"{v:.2f}" for v in values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
