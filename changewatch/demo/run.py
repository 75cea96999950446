"""``changewatch demo``: crawl the demo site three times and print the change feed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .site import DemoSite

WATCHLIST = """\
# The demo's watchlist: one watch of each kind.
watches:
  - url: {base}/terms              # a long page compared by its text
    key: demo-terms
    region: main
  - url: {base}/product/kettle     # fields from JSON-LD
    key: demo-kettle
    jsonld: {{type: Product, fields: [name, offers.price, offers.availability]}}
  - url: {base}/listings           # an entity set keyed by canonical URL
    key: demo-listings
    entities:
      selector: li.listing
      key: "a::attr(href)"
      fields: {{title: a, rent: span.price}}
  - url: {base}/news               # modules that shuffle on every load
    key: demo-news
    region: main
    sort_lines: true
"""


def crawl(workdir: Path, watchlist: Path, feed: Path, *extra: str) -> list[dict[str, Any]]:
    """Run ``scrapy crawl watch`` in a subprocess and return the exported change records."""
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "changewatch.settings"}
    cmd = [sys.executable, "-m", "scrapy", "crawl", "watch", "-a", f"watchlist={watchlist}", "-O", str(feed),
           "-s", f"CHANGEWATCH_STORE=sqlite:///{workdir / 'state.db'}", "-s", "LOG_LEVEL=WARNING",
           # the demo site is on 127.0.0.1, which the SSRF guard refuses unless told otherwise
           "-s", "CHANGEWATCH_ALLOW_PRIVATE=True", *extra]
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"crawl failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    lines = feed.read_text(encoding="utf-8").splitlines() if feed.exists() else []
    return [json.loads(line) for line in lines if line.strip()]


def _show(records: list[dict[str, Any]]) -> None:
    if not records:
        print("  (no change records: nothing really changed)")
    for r in records:
        print(f"  [{r['kind']}] {r['key']}")
        for name, change in r.get("changes", {}).items():
            print(f"      {name}: {change['old']} → {change['new']}")
        for e in r.get("added", []):
            print(f"      + {e['key']}  {e['fields']}")
        for e in r.get("removed", []):
            print(f"      - {e['key']}  {e['fields']}")
        for e in r.get("changed", []):
            print(f"      ~ {e['key']}  {e['changes']}")
        if "diff" in r:
            print(f"      simhash distance {r.get('distance')} bits; diff:")
            print("\n".join("        " + line for line in r["diff"].splitlines()))
        if "error" in r:
            print(f"      error: {r['error']}")


def run_demo(keep: str | None = None) -> int:
    site = DemoSite()
    base = site.start()
    tmp = None if keep else tempfile.TemporaryDirectory(prefix="changewatch-demo-")
    workdir = Path(keep or tmp.name)  # type: ignore[union-attr]
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        watchlist = workdir / "watchlist.yaml"
        watchlist.write_text(WATCHLIST.format(base=base), encoding="utf-8")
        print(f"Demo site on {base}; store, watchlist and feeds in {workdir}\n")
        steps = [("Run 1: first crawl, a silent baseline", None),
                 ("Run 2: every page differs (tokens, clocks, shuffles, tracking parameters), nothing real", None),
                 ("Run 3: after a price cut, a one-sentence edit and a new listing", site.publish_changes)]
        for i, (title, action) in enumerate(steps, 1):
            if action:
                action()
            records = crawl(workdir, watchlist, workdir / f"changes-{i}.jsonl")
            print(f"{title}: {len(records)} change record(s)")
            _show(records)
            print()
        print(f"The change feed of run 3 is {workdir / 'changes-3.jsonl'}" if keep else "Done.")
        return 0
    finally:
        site.stop()
        if tmp is not None:
            tmp.cleanup()
