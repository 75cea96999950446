"""Run real ``scrapy crawl watch`` subprocesses against local servers."""

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

    def __init__(self, workdir: Path, watches: list[dict[str, Any]] | None, store: str | None = None,
                 spider: str = "watch"):
        self.workdir = workdir
        self.watchlist = workdir / "watchlist.yaml"
        if watches is not None:
            self.write_watchlist(watches)
        self.store = store or f"sqlite:///{workdir / 'state.db'}"
        self.spider = spider
        self.runs = 0

    def write_watchlist(self, watches: list[dict[str, Any]]) -> None:
        self.watchlist.write_text(yaml.safe_dump({"watches": watches}), encoding="utf-8")

    def run(self, *extra: str, feed_option: bool = True) -> CrawlResult:
        self.runs += 1
        feed = self.workdir / f"changes-{self.runs}.jsonl"
        stats = self.workdir / f"stats-{self.runs}.json"
        env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "changewatch.settings",
               "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
        args = ["-a", f"watchlist={self.watchlist}"] if self.watchlist.exists() else []
        cmd = [sys.executable, "-m", "scrapy", "crawl", self.spider, *args,
               *(["-O", str(feed)] if feed_option else []),
               "-s", f"CHANGEWATCH_STORE={self.store}", "-s", "LOG_LEVEL=INFO",
               "-s", f"CHANGEWATCH_TEST_STATS_FILE={stats}",
               "-s", 'EXTENSIONS={"tests.e2e.statsdump.StatsDump": 0}', *extra]
        proc = subprocess.run(cmd, cwd=self.workdir, env=env, capture_output=True, text=True, timeout=300)
        lines = feed.read_text(encoding="utf-8").splitlines() if feed.exists() else []
        return CrawlResult(proc.returncode, [json.loads(line) for line in lines if line.strip()], proc.stderr,
                           json.loads(stats.read_text()) if stats.exists() else {})


def by_key(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {r["key"]: r for r in records}
    assert len(out) == len(records), f"a key was reported twice: {records}"
    return out
