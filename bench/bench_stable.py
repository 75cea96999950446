"""The stable text's cost on the corpus pages: each page's raw text read once, then its stable
text made from it (the volatile patterns, and with a fetch time the clock-time check) many times.

    python bench/bench_stable.py [--repeat N] [--learned]

Prints the mean CPU time per page in milliseconds (the best of three rounds). The stable text is
on the hot path of a second crawl (a page whose raw text differs from the stored one's), so this
is what a change of the patterns costs. Run it with another checkout first on PYTHONPATH to
compare: a normaliser without fetch times is timed without one."""

from __future__ import annotations

import argparse
import inspect
import time
from datetime import UTC, datetime
from pathlib import Path

from changewatch.core.text import volatile
from changewatch.core.text.normalise import visible_text

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "pages"
FETCHED = datetime(2026, 12, 5, 14, 32, tzinfo=UTC)


def _stabiliser(learned: bool):  # type: ignore[no-untyped-def]
    if "clock" not in inspect.signature(volatile.stable_lines).parameters:
        return volatile.stable_lines
    from changewatch.core.text.clock_times import Clock

    # learned: every line with a time is looked at as a clock's (its shape computed)
    clock = Clock(FETCHED, 60, ("000000000000",)) if learned else Clock(FETCHED)
    return lambda raw: volatile.stable_lines(raw, clock)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--learned", action="store_true", help="with a clock learned for the page")
    args = parser.parse_args()
    stable = _stabiliser(args.learned)
    raws = [visible_text(p.read_bytes(), like_scrapy=True).raw for p in sorted(CORPUS.rglob("*.html"))]
    for raw in raws:
        stable(raw)  # warm up (compiled patterns)
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for _ in range(args.repeat):
            for raw in raws:
                stable(raw)
        best = min(best, time.process_time() - start)
    print(f"{len(raws)} pages, {sum(map(len, raws)) / len(raws):.0f} characters of raw text each: "
          f"{best / args.repeat / len(raws) * 1000:.3f} ms a page")


if __name__ == "__main__":
    main()
