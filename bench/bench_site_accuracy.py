"""Site watches' accuracy on a site of real pages: what share of the pages added, removed and
changed between runs is reported, and how many alerts are noise.

The site is tests/e2e/corpus_site.py (../shared/corpus's articles, each served under several
slugs, a copy's title its own; every load differs: clock times, tokens, "N minutes ago"), crawled by real ``scrapy
crawl`` subprocesses in sitemap mode (accurate lastmod) and in link mode (an index paginated 8
posts a page; posts answer with an ETag and a 304 to it). Each round removes 2 pages, adds 2 and
edits 6 with a sentence of their own (its lastmod moved); one listed page is denied. The last
column: of the pages neither added nor edited in a round, those downloaded in full (a 200) that
round (sitemap mode: the lastmod sample; link mode: pages answer 304s).

    python bench/bench_site_accuracy.py [--pages 40] [--rounds 8]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from changewatch.core.urls import canonical_url  # noqa: E402
from tests.e2e.corpus_site import CORPUS, CorpusSite, corpus_articles, simulate  # noqa: E402
from tests.e2e.crawl import Crawler  # noqa: E402

DENIED = "/posts/denied-page"
WORDS = ["written", "signed", "notarised", "countersigned", "stamped", "certified", "witnessed", "registered"]


def _site(pages: int) -> CorpusSite:
    articles = corpus_articles(100)
    # each copy of an article its own page: a line of its own in its <title>
    served = [(f"{slug}-{n}", html.replace("<title>", f"<title>Copy {n}: ", 1))
              for n in range(1 + 2 * pages // len(articles)) for slug, html in articles]
    site = CorpusSite(served[:2 * pages])
    site.pages[DENIED] = articles[0][1]
    site.live = [*list(site.pages)[:pages], DENIED]
    site.lastmod = dict.fromkeys(site.live, "2026-11-20T09:00:00+00:00")
    return site


def _watch(mode: str, base: str) -> dict[str, Any]:
    if mode == "sitemap":
        return {"key": "site", "site": {"sitemap": base + "/sitemap.xml", "deny": ["/denied-"]}}
    return {"key": "site", "site": {"start": base + "/", "allow": [r"/posts/[^/?]+$"], "follow": [r"/page/\d+$"],
                                    "deny": ["/tag/", "/calendar", "/denied-"], "depth": 12}}


def _day(n: int) -> str:
    return (datetime(2026, 12, 1, 10, tzinfo=UTC) + timedelta(days=n)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _round(site: CorpusSite, n: int) -> tuple[set[str], set[str], dict[str, str]]:
    day = _day(n)[:10] + "T09:00:00+00:00"  # an hour before the run (a date alone is the end of its day)
    movable = [p for p in site.live if p != DENIED]
    removed = set(movable[:2])
    added = [p for p in site.pages if p not in site.live and p != DENIED][:2]
    site.live = [p for p in site.live if p not in removed] + added
    for path in added:
        site.lastmod[path] = day
    edits = {}
    for k, path in enumerate([p for p in site.live if p != DENIED and p not in added][2:8]):
        word = WORDS[(n + k) % len(WORDS)]
        edits[path] = f"Round {n} clause {k}: notices must now be {word} within {n + k + 3} days."
        site.edit(path, edits[path], lastmod=day)
    return removed, set(added), edits


def measure(mode: str, pages: int, rounds: int) -> dict[str, int]:
    site = _site(pages)
    site.validators = mode == "links"
    base = site.start()
    tally = dict.fromkeys(("added", "added_reported", "removed", "removed_reported", "changes", "changes_reported",
                           "first_run_alerts", "added_page_alerts", "other_alerts", "denied_requests",
                           "unchanged", "unchanged_downloaded"), 0)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            crawler = Crawler(Path(tmp), [_watch(mode, base)])

            def crawl(n: int) -> list[dict[str, Any]]:
                simulate(_day(n))
                result = crawler.run("-s", f"TESTS_NOW={_day(n)}", "-s", "RETRY_TIMES=0")
                if result.returncode != 0 or "Traceback" in result.stderr:
                    raise SystemExit(f"{mode} run {n} failed:\n{result.stderr[-3000:]}")
                return result.records

            tally["first_run_alerts"] = len(crawl(0))
            for n in range(1, rounds + 1):
                removed, added, edits = _round(site, n)
                mark = len(site.full)
                records = crawl(n)
                unchanged = {p for p in site.live if p != DENIED} - added - set(edits)
                tally["unchanged"] += len(unchanged)
                tally["unchanged_downloaded"] += len(unchanged & set(site.full[mark:]))
                url = {path: canonical_url(base + path) for path in site.pages}
                sets = [r for r in records if r["key"] == "site"]
                reported_added = {e["url"] for r in sets for e in r.get("added", ())}
                reported_removed = {e["url"] for r in sets for e in r.get("removed", ())}
                tally["added"] += len(added)
                tally["added_reported"] += len({url[p] for p in added} & reported_added)
                tally["removed"] += len(removed)
                tally["removed_reported"] += len({url[p] for p in removed} & reported_removed)
                by_url = {r["url"]: r for r in records if r["key"].startswith("site|")}
                tally["changes"] += len(edits)
                tally["changes_reported"] += sum(sentence in (by_url.get(url[p]) or {}).get("diff", "")
                                                 for p, sentence in edits.items())
                for page_url in set(by_url) - {url[p] for p in edits}:
                    tally["added_page_alerts" if page_url in {url[p] for p in added} else "other_alerts"] += 1
                tally["other_alerts"] += len(reported_added - {url[p] for p in added})
                tally["other_alerts"] += len(reported_removed - {url[p] for p in removed})
    finally:
        site.stop()
    tally["denied_requests"] = sum(p.split("?")[0] == DENIED or p.startswith("/tag/") for p in site.requested)
    return tally


def _share(reported: int, total: int) -> str:
    return f"{reported}/{total} ({100 * reported / total:.1f}%)" if total else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args(argv)
    if not (CORPUS / "MANIFEST.tsv").exists():
        print(f"no corpus at {CORPUS}", file=sys.stderr)
        return 1
    print(f"{args.pages} pages, {args.rounds} rounds of 2 added, 2 removed, 6 changed")
    print("| mode | added reported | removed reported | changes reported | first-run alerts | added-page alerts "
          "| other alerts | requests into denied paths | unchanged pages downloaded in full |")
    print("|---|---|---|---|---|---|---|---|---|")
    for mode in ("sitemap", "links"):
        t = measure(mode, args.pages, args.rounds)
        print(f"| {mode} | {_share(t['added_reported'], t['added'])} | {_share(t['removed_reported'], t['removed'])} "
              f"| {_share(t['changes_reported'], t['changes'])} | {t['first_run_alerts']} | {t['added_page_alerts']} "
              f"| {t['other_alerts']} | {t['denied_requests']} | {_share(t['unchanged_downloaded'], t['unchanged'])} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
