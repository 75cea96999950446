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
    """Crawls one watchlist repeatedly with one store, as a user's cron job would.

    The test servers listen on 127.0.0.1, which the SSRF guard refuses by default: crawls allow
    private addresses unless *allow_private* is False (the SSRF tests)."""

    def __init__(self, workdir: Path, watches: list[dict[str, Any]], store: str | None = None, *,
                 allow_private: bool = True):
        self.allow_private = allow_private
        self.workdir = workdir
        self.watchlist = workdir / "watchlist.yaml"
        self.watchlist.write_text(yaml.safe_dump({"watches": watches}), encoding="utf-8")
        self.store = store or f"sqlite:///{workdir / 'state.db'}"
        self.runs = 0

    def run(self, *extra: str, feed_option: bool = True) -> CrawlResult:
        self.runs += 1
        feed = self.workdir / f"changes-{self.runs}.jsonl"
        stats = self.workdir / f"stats-{self.runs}.json"
        env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "changewatch.settings",
               "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
        cmd = [sys.executable, "-m", "scrapy", "crawl", "watch", "-a", f"watchlist={self.watchlist}",
               *(["-O", str(feed)] if feed_option else []),
               "-s", f"CHANGEWATCH_STORE={self.store}", "-s", "LOG_LEVEL=INFO",
               "-s", f"CHANGEWATCH_TEST_STATS_FILE={stats}",
               "-s", 'EXTENSIONS={"tests.e2e.statsdump.StatsDump": 0}',
               *(["-s", "CHANGEWATCH_ALLOW_PRIVATE=True"] if self.allow_private else []), *extra]
        proc = subprocess.run(cmd, cwd=self.workdir, env=env, capture_output=True, text=True, timeout=300)
        lines = feed.read_text(encoding="utf-8").splitlines() if feed.exists() else []
        return CrawlResult(proc.returncode, [json.loads(line) for line in lines if line.strip()], proc.stderr,
                           json.loads(stats.read_text()) if stats.exists() else {})


def by_key(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {r["key"]: r for r in records}
    assert len(out) == len(records), f"a key was reported twice: {records}"
    return out
