"""A project of one's own, made by ``scrapy startproject`` outside this checkout, that enables
changewatch with ``ADDONS = {"changewatch.Addon": 0}`` alone (and lends the watch spider in
``SPIDER_MODULES``): the safety defaults arrive, the project's own values win, and every settings
problem is one line and exit status 1, with no traceback after it."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from changewatch import __version__

from .crawl import ROOT, read_feed
from .hostile import HostileSite, good_page, page

pytestmark = pytest.mark.slow

OWN_SETTINGS = """
ADDONS = {"changewatch.Addon": 0}
SPIDER_MODULES = ["myshop.spiders", "changewatch.spiders.watch"]
CHANGEWATCH_WORKERS = 1  # a shared test machine
"""


def own_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return env


def startproject(root: Path) -> Path:
    """``scrapy startproject myshop`` in *root*: the project's folder, as Scrapy writes it."""
    subprocess.run([sys.executable, "-m", "scrapy", "startproject", "myshop"], cwd=root, env=own_env(), check=True,
                   capture_output=True, timeout=120)
    return root / "myshop"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``scrapy startproject myshop``, once: its settings.py as Scrapy writes it."""
    return startproject(tmp_path_factory.mktemp("startproject"))


@pytest.fixture
def project(generated: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "myshop"
    shutil.copytree(generated, copy)
    with (copy / "myshop" / "settings.py").open("a", encoding="utf-8") as f:
        f.write(OWN_SETTINGS)
    return copy


def crawl(project: Path, urls: list[str], *extra: str, settings: str = "") -> subprocess.CompletedProcess[str]:
    if settings:
        with (project / "myshop" / "settings.py").open("a", encoding="utf-8") as f:
            f.write(settings)
    (project / "watchlist.yaml").write_text("watches:\n" + "".join(f"  - url: {u}\n" for u in urls))
    cmd = [sys.executable, "-m", "scrapy", "crawl", "watch", "-a", "watchlist=watchlist.yaml", "-O", "changes.jsonl",
           "-s", "LOG_LEVEL=INFO", *extra]
    return subprocess.run(cmd, cwd=project, env=own_env(), capture_output=True, text=True, timeout=180)


def overridden(stderr: str) -> dict[str, Any]:
    """The settings the crawl logged as overridden (Scrapy's "Overridden settings:" dict)."""
    match = re.search(r"Overridden settings:\n(\{.*?\})\n\d{4}-", stderr, re.S)
    assert match, stderr[-3000:]
    settings: dict[str, Any] = ast.literal_eval(match[1])
    return settings


def enabled_extensions(stderr: str) -> str:
    match = re.search(r"Enabled extensions:\n(\[.*?\])", stderr, re.S)
    assert match, stderr[-3000:]
    return match[1]


def test_the_safety_defaults_arrive_with_the_addon_alone(project: Path, site: HostileSite) -> None:
    site.good["/hours"] = page(good_page("hours"))
    result = crawl(project, [f"{site.base}/hours"], settings='CHANGEWATCH_CONTACT = "ops@shop.example"\n'
                                                            "CHANGEWATCH_ALLOW_PRIVATE = True\n")
    assert result.returncode == 0, result.stderr[-3000:]
    settings = overridden(result.stderr)
    assert settings["DOWNLOAD_MAXSIZE"] == 10 * 1024 * 1024 and settings["DOWNLOAD_WARNSIZE"] == 5 * 1024 * 1024
    assert settings["DOWNLOAD_TIMEOUT"] == 30
    assert settings.get("RETRY_TIMES", 2) == 2  # Scrapy's default too: logged only when it differs
    assert 429 not in settings["RETRY_HTTP_CODES"]
    assert settings["TELNETCONSOLE_ENABLED"] is False and settings["REMOTE_CONTROL_ENABLED"] is False
    assert settings["CONCURRENT_ITEMS"] == 4
    assert settings["TWISTED_DNS_RESOLVER"] == "changewatch.guard.GuardedResolver"
    # startproject's own values are the project's: they win over the add-on's
    assert settings["CONCURRENT_REQUESTS_PER_DOMAIN"] == 1 and settings["ROBOTSTXT_OBEY"] is True
    extensions = enabled_extensions(result.stderr)
    assert "TelnetConsole" not in extensions and "RemoteControl" not in extensions
    agent = f"changewatch/{__version__} (+https://github.com/changewatch/changewatch; ops@shop.example)"
    assert set(site.agents) == {agent}, site.agents
    # the process set up its reactor with the guard's resolver: the middleware had nothing to install
    assert "installed changewatch.guard.GuardedResolver" not in result.stderr
    assert site.hits["/hours"] == 2  # a baseline of two loads


def test_the_projects_own_size_limit_and_user_agent_are_kept(project: Path, site: HostileSite) -> None:
    site.good["/small"] = page(good_page("small", paragraphs=2))
    site.good["/large"] = page(good_page("large", paragraphs=200))  # ~16 KB
    result = crawl(project, [f"{site.base}/small", f"{site.base}/large"],
                   settings='DOWNLOAD_MAXSIZE = 4096\nUSER_AGENT = "shopbot/1.0 (+https://shop.example/bot)"\n'
                            'CHANGEWATCH_CONTACT = "ops@shop.example"\nCHANGEWATCH_ALLOW_PRIVATE = True\n')
    assert result.returncode == 0, result.stderr[-3000:]  # one page observed: not a failed crawl
    settings = overridden(result.stderr)
    assert settings["DOWNLOAD_MAXSIZE"] == 4096 and settings["DOWNLOAD_TIMEOUT"] == 30
    assert set(site.agents) == {"shopbot/1.0 (+https://shop.example/bot)"}
    [record] = read_feed(project / "changes.jsonl")
    assert record["url"].endswith("/large") and record["error"].startswith("too large:"), record


#: (what goes into the project's settings.py, the one line the crawl stops with)
BAD_SETTINGS = {
    "out-of-range threshold": ("CHANGEWATCH_THRESHOLD = 65\n",
                               "CHANGEWATCH_THRESHOLD = 65: expected an integer from 0 to 64"),
    "non-numeric worker count": ('CHANGEWATCH_WORKERS = "two"\n',
                                 "CHANGEWATCH_WORKERS = 'two': expected an integer >= 0"),
    "relative SQLite URI": ('CHANGEWATCH_STORE = "sqlite://state.db"\n',
                            "CHANGEWATCH_STORE = 'sqlite://state.db': bad SQLite store URI"),
    "misspelt name": ("CHANGEWATCH_TRESHOLD = 3\n",
                      "CHANGEWATCH_TRESHOLD is not a changewatch setting: did you mean CHANGEWATCH_THRESHOLD?"),
    "another resolver": ('TWISTED_DNS_RESOLVER = "scrapy.resolver.CachingHostnameResolver"\n',
                         "TWISTED_DNS_RESOLVER = 'scrapy.resolver.CachingHostnameResolver': expected "
                         "changewatch.guard.GuardedResolver: the SSRF guard needs its own resolver"),
    "bad contact": ('CHANGEWATCH_CONTACT = "ops@shop.example\\r\\nX-Evil: 1"\n',
                    "CHANGEWATCH_CONTACT = 'ops@shop.example\\r\\nX-Evil: 1': expected an e-mail address or a URL"),
}


@pytest.mark.parametrize("case", list(BAD_SETTINGS))
def test_a_settings_problem_is_one_line_and_exit_1(project: Path, site: HostileSite, case: str) -> None:
    setting, line = BAD_SETTINGS[case]
    site.good["/hours"] = page(good_page("hours"))
    result = crawl(project, [f"{site.base}/hours"], settings=setting + "CHANGEWATCH_ALLOW_PRIVATE = True\n")
    assert result.returncode == 1, result.stderr[-3000:]
    last = result.stderr.rstrip("\n").splitlines()[-1]
    assert "ERROR: changewatch cannot start: " + line in last, result.stderr[-3000:]
    for noise in ("Traceback", "Task exception was never retrieved", "AssertionError", "Unhandled error"):
        assert noise not in result.stderr, result.stderr[-3000:]
    assert site.hits == {}, "the crawl fetched something"
    assert read_feed(project / "changes.jsonl") == []


def test_a_settings_problem_given_with_dash_s_is_one_line_too(project: Path, site: HostileSite) -> None:
    result = crawl(project, [f"{site.base}/hours"], "-s", "CHANGEWATCH_ALLOW_PRIVATE=maybe")
    assert result.returncode == 1
    assert result.stderr.rstrip("\n").splitlines()[-1].endswith(
        "ERROR: changewatch cannot start: CHANGEWATCH_ALLOW_PRIVATE = 'maybe': expected True or False (also true, "
        "false, 1, 0)"), result.stderr[-3000:]
    assert "Traceback" not in result.stderr and "never retrieved" not in result.stderr
    assert site.hits == {}
