"""The AI summary's cost to a crawl: is a crawl held up behind a slow model endpoint?

Run: ``.venv/bin/python bench/bench_summary.py`` (about two minutes; ``--pages 40`` for a smoke run).

What it does, on 127.0.0.1: serves N pages (default 200) and a fake OpenAI-compatible endpoint
that answers every call after ``--latency`` seconds (default 0.2). For each variant, a fresh store,
a first crawl (baselines) and a second crawl in which every page changed (N content records, each
one a summary call when summaries are on); reported: the second crawl's wall time
(``elapsed_time_seconds``), its ratio to the same crawl with summaries off, and the two bounds
a summary step could be held to: *serial* (N * latency: every call waited for in turn) and
*ideal* (N * latency / concurrency + the crawl without summaries).

- ``off``: no CHANGEWATCH_SUMMARY_URL (the reference: nothing of summaries on the crawl's path);
- ``on, concurrency C``: summaries on, ``CHANGEWATCH_SUMMARY_CONCURRENCY=C``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.crawl import Crawler  # noqa: E402
from tests.middlewares.conditional.servers import OddServer, Page  # noqa: E402
from tests.notify.servers import ScriptedServer, completion  # noqa: E402

SETTINGS = ("-s", "LOG_LEVEL=WARNING", "-s", "ROBOTSTXT_OBEY=False", "-s", "CONCURRENT_REQUESTS=16",
            "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=16")


def page(i: int, version: str) -> bytes:
    paragraphs = "".join(f"<p>Paragraph {j} of page {i} is about {version} and says so plainly.</p>"
                         for j in range(30))
    return f"<html><body><main><h1>Page {i}</h1>{paragraphs}</main></body></html>".encode()


def second_crawl(work: Path, server: OddServer, base: str, pages: int, extra: tuple[str, ...]) -> tuple[float, int]:
    for i in range(pages):
        server.pages[f"/p{i}"] = Page(page(i, "the first thing"))
    work.mkdir()
    crawler = Crawler(work, [{"url": f"{base}/p{i}", "key": f"p{i}"} for i in range(pages)])
    first = crawler.run(*SETTINGS, *extra)
    if first.returncode != 0:
        raise SystemExit(f"crawl failed:\n{first.stderr[-3000:]}")
    for i in range(pages):
        server.pages[f"/p{i}"] = Page(page(i, "another thing"))
    second = crawler.run(*SETTINGS, *extra)
    if second.returncode != 0 or len(second.records) != pages:
        raise SystemExit(f"second crawl: {len(second.records)} records, exit {second.returncode}:\n"
                         f"{second.stderr[-3000:]}")
    return float(second.stats["elapsed_time_seconds"]), sum("summary" in r for r in second.records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 16])
    args = parser.parse_args()
    os.environ["CHANGEWATCH_SUMMARY_API_KEY"] = "bench"
    server = OddServer()
    base = server.start()
    model = ScriptedServer(lambda n: (200, completion("The page now says another thing."), args.latency))
    on = ("-s", f"CHANGEWATCH_SUMMARY_URL={model.base}/v1", "-s", "CHANGEWATCH_SUMMARY_MODEL=bench")
    variants = {"off": ()} | {f"on, concurrency {c}": (*on, "-s", f"CHANGEWATCH_SUMMARY_CONCURRENCY={c}")
                              for c in args.concurrency}
    times: dict[str, list[float]] = {name: [] for name in variants}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            names = list(variants)
            for r in range(args.rounds):  # interleaved, the order rotated: load moves every variant alike
                for name in names[r % len(names):] + names[:r % len(names)]:
                    extra = variants[name]
                    seconds, summarised = second_crawl(Path(tmp) / f"{r}-{list(variants).index(name)}", server, base,
                                                       args.pages, extra)
                    expected = 0 if name == "off" else args.pages
                    if summarised != expected:
                        raise SystemExit(f"{name}: {summarised} summaries, expected {expected}")
                    times[name].append(seconds)
    finally:
        server.stop()
        model.stop()
    off = statistics.median(times["off"])
    serial = args.pages * args.latency
    print(f"{args.pages} changed pages, model latency {args.latency:g} s, median of {args.rounds} rounds")
    print(f"{'variant':<22} {'2nd crawl s':>11} {'vs off':>7} {'serial s':>9} {'vs serial':>9} {'ideal s':>8}")
    for name, values in times.items():
        median = statistics.median(values)
        concurrency = int(name.rsplit(" ", 1)[1]) if name != "off" else 0
        ideal = off + (serial / concurrency if concurrency else 0)
        print(f"{name:<22} {median:>11.2f} {median / off:>6.2f}x {serial if concurrency else 0:>9.1f} "
              f"{(median / serial if concurrency else 0):>8.2f}x {ideal:>8.2f}   "
              f"({', '.join(f'{v:.2f}' for v in values)})")


if __name__ == "__main__":
    main()
