"""Conditional requests: what a second crawl of an unchanged site costs, as ratios to the first.

Run: ``.venv/bin/python bench/bench_conditional.py`` (about a minute; ``--pages 300`` for a smoke
run). Needs nginx (Debian package ``nginx``; ``.ci/run`` installs it).

What it does, on 127.0.0.1 in a temporary directory removed at the end: writes N distinct HTML
pages (default 2,000, ~20 KB each) and serves them with a real nginx (its own ETag and
Last-Modified). Then, for each variant, two crawls of the ``watch`` spider over a watchlist of
the N URLs with a fresh SQLite store, nothing changed in between:

- ``conditional``: as shipped (ConditionalRequestMiddleware on);
- ``unconditional``: ``CHANGEWATCH_CONDITIONAL_ENABLED=False`` (the reference).

Reported per variant: bytes received (Scrapy's ``downloader/response_bytes``: status line,
headers and body on the wire) and wall time (``elapsed_time_seconds``) of the second crawl, each
as a ratio to the first crawl of the same variant. The issue's target: the second conditional
crawl moves <= 5% of the bytes.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.crawl import Crawler  # noqa: E402
from tests.middlewares.conditional.servers import Nginx  # noqa: E402
from tests.services import find_nginx  # noqa: E402

WORDS = ("change monitor page price offer listing article clause refund delivery customer order stock "
         "market report season weather station train timetable council meeting minutes budget").split()
SETTINGS = ("-s", "LOG_LEVEL=WARNING", "-s", "ROBOTSTXT_OBEY=False", "-s", "CONCURRENT_REQUESTS=16",
            "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=16", "-s", "CHANGEWATCH_ALLOW_PRIVATE=True")


def write_pages(root: Path, count: int) -> list[str]:
    rng = random.Random(7)
    names = []
    for i in range(count):
        paragraphs = "".join("<p>" + " ".join(rng.choice(WORDS) for _ in range(120)) + "</p>" for _ in range(20))
        name = f"p{i:05d}.html"
        (root / name).write_text(f"<html><head><title>Page {i}</title></head><body><main><h1>Page {i}</h1>"
                                 f"{paragraphs}</main></body></html>", encoding="utf-8")
        names.append(name)
    return names


def crawl_twice(work: Path, base: str, names: list[str], extra: tuple[str, ...]) -> tuple[dict, dict]:
    work.mkdir()
    crawler = Crawler(work, [{"url": f"{base}/{n}", "key": n} for n in names])
    runs = []
    for _ in range(2):
        result = crawler.run(*SETTINGS, *extra)
        if result.returncode != 0:
            raise SystemExit(f"crawl failed:\n{result.stderr[-3000:]}")
        runs.append(result.stats)
    return runs[0], runs[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=2000)
    args = parser.parse_args()
    binary = find_nginx()
    if binary is None:
        raise SystemExit("nginx is not installed: apt-get install nginx")
    with tempfile.TemporaryDirectory(prefix="cw-bench-cond-") as tmp:
        tmpdir = Path(tmp)
        (tmpdir / "www").mkdir()
        (tmpdir / "nginx").mkdir()
        names = write_pages(tmpdir / "www", args.pages)
        size = sum((tmpdir / "www" / n).stat().st_size for n in names) / len(names)
        server = Nginx(binary, tmpdir / "www", tmpdir / "nginx")
        base = server.start()
        try:
            rows = []
            for label, extra in (("conditional", ()),
                                 ("unconditional", ("-s", "CHANGEWATCH_CONDITIONAL_ENABLED=False"))):
                first, second = crawl_twice(tmpdir / label, base, names, extra)
                rows.append((label, first, second))
        finally:
            server.stop()
    print(f"{args.pages} pages of {size / 1024:.1f} KB served by nginx; second crawl / first crawl, nothing changed")
    print(f"{'variant':<15}{'bytes 1st':>14}{'bytes 2nd':>14}{'bytes ratio':>13}{'time 1st':>10}{'time 2nd':>10}"
          f"{'time ratio':>12}{'304s':>7}")
    for label, first, second in rows:
        b1, b2 = first["downloader/response_bytes"], second["downloader/response_bytes"]
        t1, t2 = first["elapsed_time_seconds"], second["elapsed_time_seconds"]
        print(f"{label:<15}{b1:>14,}{b2:>14,}{b2 / b1:>13.3f}{t1:>10.2f}{t2:>10.2f}{t2 / t1:>12.2f}"
              f"{second.get('changewatch/conditional/not_modified', 0):>7}")


if __name__ == "__main__":
    main()
