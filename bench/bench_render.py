"""Rendered pages: what a second crawl costs when only some pages changed, and whether memory stays
flat over a long crawl of rendered pages.

Run: ``.venv/bin/python bench/bench_render.py`` (a few minutes; ``--pages 40 --flat 60`` for a
smoke run). Needs Chromium (``apt-get install chromium``; ``.ci/run`` installs it).

What it does, on 127.0.0.1: serves N JavaScript pages (default 200, tests/render/site.py: each a
shell whose text a script fills in from the page's JSON endpoint; every file with an ETag and
Last-Modified, answering 304s). For each variant, two crawls of the ``watch`` spider (every watch
``render: true``, a fresh SQLite store), with 10% of the pages' data changed in between:

- ``re-checked``: as shipped (the second crawl re-checks each page's dependencies and renders
  only the pages whose data changed);
- ``always rendered``: ``CHANGEWATCH_RENDER_FULL_RUNS=0``, every visit renders (the reference);
- ``not rendered``: the same watches without ``render`` (what a crawl costs without a browser;
  it sees only the shells' "Loading…", so it reports nothing).

Reported per crawl: renders (``changewatch/render/rendered``), renders avoided, change records,
wall time (``elapsed_time_seconds``), the peak RSS of the crawl process (its VmHWM) and the peak
memory of its browser (the sum, sampled every 0.2 s, of the proportional set size, PSS, of the
Playwright driver and every Chromium process: RSS would count the pages Chromium's processes
share once per process). Ratios: second crawl / first crawl of the same variant, and re-checked /
always rendered for the second crawl.

``--flat M``: one crawl of M rendered pages (default 500); the crawl process's RSS and the
browser's PSS when 20%, 40%, ... 100% of the pages were rendered: flat when contexts are closed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.rss import vm_hwm_kb, vm_rss_kb  # noqa: E402
from changewatch.render.browser import find_browser, how_to_install  # noqa: E402
from tests.e2e.crawl import Crawler, read_feed, scrapy_env  # noqa: E402
from tests.render.site import JsSite  # noqa: E402

SETTINGS = ("-s", "LOG_LEVEL=WARNING", "-s", "ROBOTSTXT_OBEY=False", "-s", "CONCURRENT_REQUESTS=16",
            "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=16", "-s", "CHANGEWATCH_ALLOW_PRIVATE=True")


def _descendants(root: int) -> list[int]:
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        try:
            tasks = list(Path(f"/proc/{pid}/task").iterdir())
        except OSError:  # it ended meanwhile
            continue
        for task in tasks:
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            found += children
            todo += children
    return found


def _pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _is_browser(pid: int) -> bool:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"chrom" in cmd or b"playwright" in cmd or b"node" in cmd.split(b"\0")[0]


@dataclass
class Sampler:
    """Samples a crawl process and its browser every 0.2 s while it runs."""

    pid: int
    progress: Any = None  # a callable giving how many pages were rendered so far
    crawl_peak: int = 0
    browser_peak: int = 0
    series: list[tuple[int, int, int]] = field(default_factory=list)  # (rendered, crawl RSS KB, browser PSS KB)
    _done: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self._done.wait(0.2):
            crawl = vm_rss_kb(self.pid)
            browser = sum(_pss_kb(p) for p in _descendants(self.pid) if _is_browser(p))
            self.crawl_peak = max(self.crawl_peak, vm_hwm_kb(self.pid), crawl)
            self.browser_peak = max(self.browser_peak, browser)
            if self.progress is not None:
                self.series.append((self.progress(), crawl, browser))

    def stop(self) -> None:
        self._done.set()


def crawl(crawler: Crawler, *extra: str, progress: Any = None) -> dict[str, Any]:
    cmd, feed = crawler.command(*SETTINGS, *extra)
    proc = subprocess.Popen(cmd, cwd=crawler.workdir, env=scrapy_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    sampler = Sampler(proc.pid, progress)
    thread = threading.Thread(target=sampler.run, daemon=True)
    thread.start()
    _, stderr = proc.communicate(timeout=3600)
    sampler.stop()
    thread.join()
    if proc.returncode != 0:
        raise SystemExit(f"crawl failed:\n{stderr[-3000:]}")
    stats = json.loads((crawler.workdir / f"stats-{crawler.runs}.json").read_text())
    errors = [r for r in read_feed(feed) if r["kind"] == "error"]
    if errors:
        raise SystemExit(f"{len(errors)} pages failed, e.g. {errors[0]}")
    return {"renders": stats.get("changewatch/render/rendered", 0),
            "avoided": stats.get("changewatch/render/avoided", 0), "records": len(read_feed(feed)),
            "time": stats["elapsed_time_seconds"],
            "crawl_mb": sampler.crawl_peak / 1024, "browser_mb": sampler.browser_peak / 1024, "series": sampler.series}


def two_crawls(work: Path, site: JsSite, render: bool, extra: tuple[str, ...], changed: list[str]
               ) -> tuple[dict[str, Any], dict[str, Any]]:
    site.pages.update({name: {**site.pages[name], "price": "1.00 EUR"} for name in site.pages})  # a fresh start
    work.mkdir()
    watches = [{"url": site.url(name), "key": name, **({"render": True} if render else {})} for name in site.pages]
    crawler = Crawler(work, watches)
    first = crawl(crawler, *extra)
    for name in changed:
        site.pages[name] = {**site.pages[name], "price": f"{2 + len(name)}.00 EUR"}
    second = crawl(crawler, *extra)
    return first, second


def compare(pages: int) -> None:
    site = JsSite(page_count=pages)
    changed = sorted(site.pages)[:: 10][: max(1, pages // 10)]
    variants = (("re-checked", True, ()), ("always rendered", True, ("-s", "CHANGEWATCH_RENDER_FULL_RUNS=0")),
                ("not rendered", False, ()))
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="cw-bench-render-") as tmp:
            for i, (label, render, extra) in enumerate(variants):
                first, second = two_crawls(Path(tmp) / str(i), site, render, extra, changed)
                rows.append((label, first, second))
    finally:
        site.stop()
    print(f"{pages} JavaScript pages, {len(changed)} ({100 * len(changed) / pages:.0f}%) with changed data before the "
          "second crawl; renders at most 4 at once (CHANGEWATCH_RENDER_CONCURRENCY)")
    print(f"{'variant':<17}{'crawl':<7}{'renders':>8}{'avoided':>8}{'records':>8}{'time s':>8}{'crawl MB':>10}"
          f"{'browser MB':>11}")
    for label, first, second in rows:
        for name, run in (("1st", first), ("2nd", second)):
            print(f"{label:<17}{name:<7}{run['renders']:>8}{run['avoided']:>8}{run['records']:>8}{run['time']:>8.1f}"
                  f"{run['crawl_mb']:>10.0f}{run['browser_mb']:>11.0f}")
    (_, f1, s1), (_, f2, s2), _ = rows
    print(f"second / first crawl, wall time: re-checked {s1['time'] / f1['time']:.2f}, always rendered "
          f"{s2['time'] / f2['time']:.2f}")
    print(f"second crawl, re-checked / always rendered: renders {s1['renders'] / max(1, s2['renders']):.2f} "
          f"({s1['renders']} vs {s2['renders']}; target: the {len(changed)} changed), wall time "
          f"{s1['time'] / s2['time']:.2f}, browser peak {s1['browser_mb'] / max(1, s2['browser_mb']):.2f}")


def flat(pages: int) -> None:
    site = JsSite(page_count=pages)
    try:
        with tempfile.TemporaryDirectory(prefix="cw-bench-render-flat-") as tmp:
            crawler = Crawler(Path(tmp), [{"url": site.url(n), "key": n, "render": True} for n in site.pages])
            run = crawl(crawler, progress=lambda: sum(v for k, v in site.hits.items() if k.startswith("/data/")))
    finally:
        site.stop()
    print(f"one crawl of {pages} rendered pages ({run['time']:.1f} s): memory as the renders went on")
    print(f"{'rendered':>9}{'crawl RSS MB':>14}{'browser PSS MB':>16}")
    marks = [round(pages * f) for f in (0.2, 0.4, 0.6, 0.8, 1.0)]
    for mark in marks:
        sample = next((s for s in run["series"] if s[0] >= mark), run["series"][-1] if run["series"] else (0, 0, 0))
        print(f"{sample[0]:>9}{sample[1] / 1024:>14.0f}{sample[2] / 1024:>16.0f}")
    middle = [s for s in run["series"] if marks[0] <= s[0] < pages]
    if middle:
        lo, hi = min(s[2] for s in middle), max(s[2] for s in middle)
        print(f"browser PSS between {marks[0]} and {pages} pages: {lo / 1024:.0f}-{hi / 1024:.0f} MB; crawl RSS "
              f"{min(s[1] for s in middle) / 1024:.0f}-{max(s[1] for s in middle) / 1024:.0f} MB; "
              f"peaks {run['crawl_mb']:.0f} MB (crawl), {run['browser_mb']:.0f} MB (browser)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=200, help="pages of the two-crawl comparison (0: none)")
    parser.add_argument("--flat", type=int, default=500, help="pages of the memory run (0: none)")
    args = parser.parse_args()
    if find_browser(os.environ.get("CHANGEWATCH_RENDER_BROWSER")) is None:
        raise SystemExit(f"no Chromium: {how_to_install()}")
    started = time.monotonic()
    if args.pages:
        compare(args.pages)
    if args.flat:
        flat(args.flat)
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
