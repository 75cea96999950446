"""A user's own Scrapy project that enables only the add-on (no changewatch.settings: the
guard's resolver comes from the add-on's process settings): a bad setting stops ``scrapy crawl
watch`` before anything is fetched, with one line naming the setting and the value; good values
still work. A project made by ``scrapy startproject`` itself: tests/e2e/test_own_project.py."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from changewatch.demo.serving import ServedSite

from .crawl import ROOT, read_feed

PROJECT_SETTINGS = """\
BOT_NAME = "myproject"
SPIDER_MODULES = ["changewatch.spiders"]
ADDONS = {"changewatch.Addon": 0}
"""


class LoggedSite(ServedSite):
    """One page; remembers every path asked for, robots.txt included."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def respond_to(self, path: str, headers: dict[str, str]) -> tuple[int, str, bytes]:
        self.paths.append(path)
        if path == "/robots.txt":
            return 404, "text/plain", b""
        return 200, "text/html", b"<html><body><main><p>Opening hours: 9 to 5.</p></main></body></html>"


@pytest.fixture
def site() -> Iterator[tuple[LoggedSite, str]]:
    served = LoggedSite()
    base = served.start()
    try:
        yield served, base
    finally:
        served.stop()


def crawl_user_project(project: Path, base: str, *extra: str, settings: str = "") -> subprocess.CompletedProcess[str]:
    (project / "myproject").mkdir(parents=True, exist_ok=True)
    (project / "myproject" / "__init__.py").write_text("")
    (project / "myproject" / "settings.py").write_text(PROJECT_SETTINGS + settings)
    (project / "scrapy.cfg").write_text("[settings]\ndefault = myproject.settings\n")
    (project / "watchlist.yaml").write_text(f"watches:\n  - url: {base}/hours\n    key: hours\n")
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
    cmd = [sys.executable, "-m", "scrapy", "crawl", "watch", "-a", "watchlist=watchlist.yaml", "-O", "changes.jsonl",
           "-s", "LOG_LEVEL=INFO", *extra]
    return subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("setting", "value", "accepted"), [
    # reported by a review: NotConfigured dropped the guard, and the crawl fetched 127.0.0.1
    ("CHANGEWATCH_SSRF_ALLOWED_NETWORKS", "10.0.0.0/8,bogus", "IP networks such as 10.0.0.0/8"),
    # was blamed on CHANGEWATCH_SSRF_ALLOWED_NETWORKS
    ("CHANGEWATCH_ALLOW_PRIVATE", "yesplease", "True or False"),
    # was a bare ValueError that named no setting
    ("CHANGEWATCH_THRESHOLD", "abc", "an integer from 0 to 64"),
    ("CHANGEWATCH_DELIVERY_LEASE", "soon", "a duration of at least 1 s"),
])
def test_a_bad_setting_stops_the_crawl_before_any_fetch(site: tuple[LoggedSite, str], tmp_path: Path, setting: str,
                                                        value: str, accepted: str) -> None:
    served, base = site
    result = crawl_user_project(tmp_path, base, "-s", f"{setting}={value}")
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if f"{setting} = {value!r}: expected {accepted}" in line]
    assert lines and lines[-1] == result.stderr.splitlines()[-1], result.stderr[-3000:]
    # one line in the crawl's log, in a project that sets no resolver of ours: no traceback after it
    assert "ERROR: changewatch cannot start: " in lines[-1]
    assert "Traceback" not in result.stderr and "never retrieved" not in result.stderr, result.stderr[-3000:]
    assert "Disabled " not in result.stderr  # no component was dropped with a warning
    assert served.paths == [], "the crawl fetched something"
    assert read_feed(tmp_path / "changes.jsonl") == []


def test_a_misspelt_setting_stops_the_crawl_with_one_line(site: tuple[LoggedSite, str], tmp_path: Path) -> None:
    served, base = site
    result = crawl_user_project(tmp_path, base, "-s", "CHANGEWATCH_TRESHOLD=3")
    assert result.returncode == 1
    last = result.stderr.splitlines()[-1]
    assert last.endswith("ERROR: changewatch cannot start: CHANGEWATCH_TRESHOLD is not a changewatch setting: "
                         "did you mean CHANGEWATCH_THRESHOLD?"), result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert served.paths == []


def test_good_network_settings_keep_the_guard_on(site: tuple[LoggedSite, str], tmp_path: Path) -> None:
    served, base = site
    # a string from the command line: 10.0.0.0/8 is allowed, 127.0.0.1 still refused by the guard
    refused = crawl_user_project(tmp_path, base, "-s", "CHANGEWATCH_SSRF_ALLOWED_NETWORKS=10.0.0.0/8")
    assert refused.returncode == 1, refused.stderr[-3000:]  # its one watch refused: not one page observed
    [record] = read_feed(tmp_path / "changes.jsonl")
    assert record["kind"] == "error" and record["error"].startswith("refused: loopback"), record
    assert served.paths == []
    # a list in the project's settings.py: 127.0.0.0/8 is fetched, and the first observation is a baseline
    # (after the refusal: it closes that failure streak with a recovered record)
    allowed = crawl_user_project(tmp_path, base, settings='CHANGEWATCH_SSRF_ALLOWED_NETWORKS = ["10.0.0.0/8", '
                                                          '"127.0.0.0/8"]\n')
    assert allowed.returncode == 0, allowed.stderr[-3000:]
    assert "/hours" in served.paths
    assert [r["kind"] for r in read_feed(tmp_path / "changes.jsonl")] == ["recovered"]
    assert "changewatch/commit/recovered': 1" in allowed.stderr


class EditedSite(LoggedSite):
    def __init__(self) -> None:
        super().__init__()
        self.hours = "9 to 5"

    def respond_to(self, path: str, headers: dict[str, str]) -> tuple[int, str, bytes]:
        status, ctype, body = super().respond_to(path, headers)
        return status, ctype, body.replace(b"9 to 5", self.hours.encode())


def test_a_csv_feed_of_a_user_project_has_every_record_member(tmp_path: Path) -> None:
    """-O changes.csv does not take its columns from the first record alone: in a project that
    enables only the add-on, a CSV feed gets every record member as a column, nested values as
    JSON, and the page's change in it."""
    import csv

    from changewatch.feeds import RECORD_FIELDS

    served = EditedSite()
    base = served.start()
    try:
        allow = ("-s", "CHANGEWATCH_ALLOW_PRIVATE=True", "-s", "ROBOTSTXT_OBEY=False")
        first = crawl_user_project(tmp_path, base, *allow)
        assert first.returncode == 0, first.stderr[-2000:]
        served.hours = "10 to 4"
        second = crawl_user_project(tmp_path, base, *allow, "-O", "changes.csv")
        assert second.returncode == 0, second.stderr[-2000:]
    finally:
        served.stop()
    with (tmp_path / "changes.csv").open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
    assert reader.fieldnames == list(RECORD_FIELDS)
    [row] = rows
    assert row["kind"] == "content" and row["key"] == "hours" and "10 to 4" in row["diff"]
    assert read_feed(tmp_path / "changes.jsonl")[0]["change_id"] == int(row["change_id"])
