"""The stable text's cost on the corpus pages: each page's raw text read once, then its stable
text made from it (the volatile patterns, and with a fetch time the clock-time check) many times.

    python bench/bench_stable.py [--repeat N]

Prints the mean time per page in milliseconds. The stable text is on the hot path of a second
crawl (a page whose raw text differs from the stored one's), so this is what a change of the
patterns costs."""

from __future__ import annotations

import argparse
import inspect
import time
from datetime import UTC, datetime
from pathlib import Path

from changewatch.core.text import volatile
from changewatch.core.text.normalise import visible_text

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "pages"


def _stable(raw: str, fetched: datetime) -> list[str]:
    if "clock" in inspect.signature(volatile.stable_lines).parameters:
        from changewatch.core.text.clock_times import Clock
        return volatile.stable_lines(raw, Clock(fetched, 60))
    return volatile.stable_lines(raw)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    raws = [visible_text(p.read_bytes(), like_scrapy=True).raw for p in sorted(CORPUS.rglob("*.html"))]
    fetched = datetime(2026, 12, 5, 14, 32, tzinfo=UTC)
    for raw in raws:
        _stable(raw, fetched)  # warm up (compiled patterns)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(args.repeat):
            for raw in raws:
                _stable(raw, fetched)
        best = min(best, time.perf_counter() - start)
    print(f"{len(raws)} pages, {sum(map(len, raws)) / len(raws):.0f} characters of raw text each: "
          f"{best / args.repeat / len(raws) * 1000:.3f} ms a page")


if __name__ == "__main__":
    main()
