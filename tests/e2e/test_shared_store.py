"""Several crawls sharing one store at the same time, as Scrapyd nodes or overlapping cron jobs
do: every change is exported exactly once across all of them, and none is lost."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from changewatch.demo.site import DemoSite

from .crawl import ROOT, crawl_command, read_feed, scrapy_env

PRODUCTS = 40
CRAWLS = 3


def product(i: int, price: str) -> bytes:
    node = {"@context": "https://schema.org", "@type": "Product", "name": f"Lamp {i}",
            "offers": {"@type": "Offer", "price": price, "priceCurrency": "EUR"}}
    return (f'<html><head><script type="application/ld+json">{json.dumps(node)}</script></head>'
            f"<body><h1>Lamp {i}</h1><p>A lamp.</p></body></html>").encode()


def price(i: int, round_: int) -> str:
    # every third product changes price in each round after the first
    return f"{10 + i + (round_ if i % 3 == 0 else 0)}.00"


def run_together(workdir: Path, watchlist: Path, store: str, round_: int) -> list[list[dict[str, Any]]]:
    procs = []
    for n in range(CRAWLS):
        cmd, feed = crawl_command(workdir, "watch", round_ * 10 + n, "-a", f"watchlist={watchlist}",
                                  "-s", f"CHANGEWATCH_STORE={store}", "-s", "CHANGEWATCH_ALLOW_PRIVATE=True",
                                  "-s", "CHANGEWATCH_WORKERS=0", "-s", "LOG_LEVEL=WARNING")
        procs.append((subprocess.Popen(cmd, cwd=workdir, env=scrapy_env(), stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, text=True), feed))
    feeds = []
    for proc, feed in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]
        feeds.append(read_feed(feed))
    return feeds


def test_concurrent_crawls_export_each_change_once(tmp_path: Path, demo_site: tuple[DemoSite, str]) -> None:
    site, base = demo_site
    watchlist = tmp_path / "watchlist.yaml"
    watchlist.write_text(json.dumps({"watches": [
        {"url": f"{base}/p/{i}", "key": f"p{i}", "jsonld": {"type": "Product", "fields": ["offers.price"]}}
        for i in range(PRODUCTS)]}), encoding="utf-8")
    store = f"sqlite:///{tmp_path / 'state.db'}"
    assert ROOT.exists()
    for round_ in range(3):
        for i in range(PRODUCTS):
            site.overrides[f"/p/{i}"] = (200, "text/html; charset=utf-8", product(i, price(i, round_)))
        feeds = run_together(tmp_path, watchlist, store, round_)
        records = [r for feed in feeds for r in feed]
        assert not [r for r in records if r.get("redelivery")]  # live crawls never re-export each other's
        changed = sorted(r["key"] for r in records)
        expected = sorted(f"p{i}" for i in range(PRODUCTS) if round_ and i % 3 == 0)
        assert changed == expected, (round_, changed)
        for r in records:
            i = int(r["key"][1:])
            assert r["changes"] == {"offers.price": {"old": price(i, round_ - 1), "new": price(i, round_)}}
        assert len({r["change_id"] for r in records}) == len(records)
