"""Run real ``scrapy crawl`` subprocesses (the watch spider, per-site spiders) against local servers."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "changewatch" / "watchlist.schema.json"


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

    def __init__(self, workdir: Path, watches: list[dict[str, Any]] | None, store: str | None = None,
                 spider: str = "watch", *, allow_private: bool = True, valid_watchlist: bool = True,
                 settings_module: str = "changewatch.settings"):
        self.allow_private = allow_private
        self.settings_module = settings_module
        #: False for a test that crawls a watchlist the schema refuses on purpose
        self.valid_watchlist = valid_watchlist
        self.workdir = workdir
        self.watchlist = workdir / "watchlist.yaml"
        if watches is not None:
            self.write_watchlist(watches)
        self.store = store or f"sqlite:///{workdir / 'state.db'}"
        self.spider = spider
        self.runs = 0

    def write_watchlist(self, watches: list[dict[str, Any]]) -> None:
        self.watchlist.write_text(yaml.safe_dump({"watches": watches}), encoding="utf-8")

    def command(self, *extra: str) -> tuple[list[str], Path]:
        """The next run's command line and feed, for a test that runs (and kills) it itself."""
        self.runs += 1
        args = ["-a", f"watchlist={self.watchlist}"] if self.watchlist.exists() else []
        return crawl_command(self.workdir, self.spider, self.runs, *args, "-s", f"CHANGEWATCH_STORE={self.store}",
                             *self._private(), *extra, valid_watchlist=self.valid_watchlist)

    def _private(self) -> list[str]:
        return ["-s", "CHANGEWATCH_ALLOW_PRIVATE=True"] if self.allow_private else []

    def run(self, *extra: str, feed_option: bool = True) -> CrawlResult:
        self.runs += 1
        args = ["-a", f"watchlist={self.watchlist}"] if self.watchlist.exists() else []
        return scrapy_crawl(self.workdir, self.spider, self.runs, *args, "-s", f"CHANGEWATCH_STORE={self.store}",
                            *self._private(), *extra, feed_option=feed_option, valid_watchlist=self.valid_watchlist,
                            settings_module=self.settings_module)


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
                            "-s", "CHANGEWATCH_ALLOW_PRIVATE=True", *extra)


def scrapy_env(settings_module: str = "changewatch.settings") -> dict[str, str]:
    return {**os.environ, "SCRAPY_SETTINGS_MODULE": settings_module,
            "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def schema_problems(document: Any) -> list[str]:
    """What the shipped JSON Schema (changewatch/watchlist.schema.json) finds wrong in *document*."""
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(document)'}: {e.message}"
            for e in validator.iter_errors(document)]


def check_watchlists(workdir: Path, args: tuple[str, ...]) -> None:
    """Every watchlist a crawl's *args* name (``-a watchlist=`` a file, or inline JSON) is valid by
    the shipped schema (every watchlist the tests show is), so a watchlist written inside
    a test is checked as it is crawled. A watchlist at a URL is not read here."""
    pairs = list(itertools.pairwise(args))
    folders = [workdir] + [Path(v.split("=", 1)[1]) for flag, v in pairs
                           if flag == "-s" and v.startswith("CHANGEWATCH_WATCHLIST_DIR=")]
    for flag, value in pairs:
        if flag != "-a" or not value.startswith("watchlist="):
            continue
        given = value.split("=", 1)[1]
        if given.lstrip().startswith(("[", "{")):
            document = json.loads(given)
            where = "the inline watchlist"
        else:
            path = next((folder / given for folder in folders if (folder / given).is_file()), None)
            if path is None:
                continue  # a URL, or a file that is not there (the test is about that)
            document = yaml.safe_load(path.read_text(encoding="utf-8"))  # JSON is YAML too
            where = str(path)
        if isinstance(document, list):
            document = {"watches": document}
        problems = schema_problems(document)
        assert not problems, (f"{where} is not valid by the shipped schema (pass valid_watchlist=False if that is "
                              f"the point): {problems}")


def crawl_command(workdir: Path, spider: str, run: int, *args: str, feed_option: bool = True,
                  valid_watchlist: bool = True) -> tuple[list[str], Path]:
    """The ``scrapy crawl SPIDER`` command line of run *run*, and the feed it writes. The
    watchlists it names are checked against the shipped schema unless *valid_watchlist* is False."""
    if valid_watchlist:
        check_watchlists(workdir, args)
    feed = workdir / f"changes-{run}.jsonl"
    stats = workdir / f"stats-{run}.json"
    cmd = [sys.executable, "-m", "scrapy", "crawl", spider, *(["-O", str(feed)] if feed_option else []),
           "-s", "LOG_LEVEL=INFO", "-s", f"TESTS_STATS_FILE={stats}",
           "-s", 'EXTENSIONS={"tests.e2e.statsdump.StatsDump": 0, "tests.e2e.statsdump.SimulatedClock": 0}', *args]
    return cmd, feed


def scrapy_crawl(workdir: Path, spider: str, run: int, *args: str, feed_option: bool = True,
                 valid_watchlist: bool = True, settings_module: str = "changewatch.settings") -> CrawlResult:
    """``scrapy crawl SPIDER`` in a subprocess: its change records and final stats."""
    cmd, feed = crawl_command(workdir, spider, run, *args, feed_option=feed_option, valid_watchlist=valid_watchlist)
    stats = workdir / f"stats-{run}.json"
    proc = subprocess.run(cmd, cwd=workdir, env=scrapy_env(settings_module), capture_output=True, text=True,
                          timeout=300)
    return CrawlResult(proc.returncode, read_feed(feed, killed=proc.returncode < 0), proc.stderr,
                       json.loads(stats.read_text()) if stats.exists() else {})


def read_feed(feed: Path, killed: bool = False) -> list[dict[str, Any]]:
    """The records of a JSON-lines feed; a killed crawl may have left its last line unfinished."""
    lines = [line for line in feed.read_text(encoding="utf-8").splitlines() if line.strip()] if feed.exists() else []
    records = []
    for i, line in enumerate(lines):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if not (killed and i == len(lines) - 1):
                raise
    return records


def by_key(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {r["key"]: r for r in records}
    assert len(out) == len(records), f"a key was reported twice: {records}"
    return out
