"""A project that lends itself the ``watch`` spider (SPIDER_MODULES) but forgot the add-on (README,
"In a Scrapy project of your own", says both lines): nothing would compare or store, and every
observation would leave the crawl as if it were a change, on every run, with exit status 0. The
crawl stops before fetching anything, with one line saying what to add. A real ``scrapy crawl``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .crawl import ROOT

pytestmark = pytest.mark.slow

SETTINGS = """\
BOT_NAME = "shop"
SPIDER_MODULES = ["changewatch.spiders.watch"]
"""


def test_the_watch_spider_without_the_addon_stops_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "settings.py").write_text(SETTINGS)
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = shop.settings\n")
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
    # the page is never fetched: an address nothing listens on would only slow a wrong crawl down
    cmd = [sys.executable, "-m", "scrapy", "crawl", "watch", "-a", 'watchlist=[{"url": "https://shop.example/p/1"}]',
           "-O", "changes.jsonl"]
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr[-3000:]
    assert done.stderr.splitlines()[-1].endswith(
        "ERROR: changewatch cannot start: spider 'watch' needs changewatch enabled: add ADDONS = "
        '{"changewatch.Addon": 0} to the project\'s settings.py'), done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "changes.jsonl").exists() or (tmp_path / "changes.jsonl").read_text() == ""
