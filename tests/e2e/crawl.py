"""Run real ``scrapy crawl`` subprocesses (the watch spider, per-site spiders) against local servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class CrawlResult:
    returncode: int
    records: list[dict[str, Any]]
    stderr: str
    stats: dict[str, Any]


class Crawler:
    """Crawls one watchlist repeatedly with one store, as a user's cron job would."""

    def __init__(self, workdir: Path, watches: list[dict[str, Any]], store: str | None = None):
        self.workdir = workdir
        self.watchlist = workdir / "watchlist.yaml"
        self.watchlist.write_text(yaml.safe_dump({"watches": watches}), encoding="utf-8")
        self.store = store or f"sqlite:///{workdir / 'state.db'}"
        self.runs = 0

    def run(self, *extra: str, feed_option: bool = True) -> CrawlResult:
        self.runs += 1
        return scrapy_crawl(self.workdir, "watch", self.runs, "-a", f"watchlist={self.watchlist}",
                            "-s", f"CHANGEWATCH_STORE={self.store}", *extra, feed_option=feed_option)


class SpiderCrawler:
    """Crawls one per-site spider repeatedly with one store."""

    def __init__(self, workdir: Path, spider: str, *args: str):
        self.workdir = workdir
        self.spider = spider
        self.args = args
        self.store = f"sqlite:///{workdir / 'state.db'}"
        self.runs = 0

    def run(self, *extra: str) -> CrawlResult:
        self.runs += 1
        return scrapy_crawl(self.workdir, self.spider, self.runs, *self.args, "-s", f"CHANGEWATCH_STORE={self.store}",
                            *extra)


def scrapy_env() -> dict[str, str]:
    return {**os.environ, "SCRAPY_SETTINGS_MODULE": "changewatch.settings",
            "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def scrapy_crawl(workdir: Path, spider: str, run: int, *args: str, feed_option: bool = True) -> CrawlResult:
    """``scrapy crawl SPIDER`` in a subprocess: its change records and final stats."""
    feed = workdir / f"changes-{run}.jsonl"
    stats = workdir / f"stats-{run}.json"
    cmd = [sys.executable, "-m", "scrapy", "crawl", spider, *(["-O", str(feed)] if feed_option else []),
           "-s", "LOG_LEVEL=INFO", "-s", f"CHANGEWATCH_TEST_STATS_FILE={stats}",
           "-s", 'EXTENSIONS={"tests.e2e.statsdump.StatsDump": 0}', *args]
    proc = subprocess.run(cmd, cwd=workdir, env=scrapy_env(), capture_output=True, text=True, timeout=300)
    lines = feed.read_text(encoding="utf-8").splitlines() if feed.exists() else []
    return CrawlResult(proc.returncode, [json.loads(line) for line in lines if line.strip()], proc.stderr,
                       json.loads(stats.read_text()) if stats.exists() else {})


def by_key(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {r["key"]: r for r in records}
    assert len(out) == len(records), f"a key was reported twice: {records}"
    return out
