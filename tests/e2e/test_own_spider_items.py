"""A spider of a user's own project yields observations as plain dicts (README, "Your own
spiders"); one of the wrong shape (entities as a dict by key, fields as a list) is an ``error``
record saying which shape is expected, never a traceback in the log nor a silent drop. Real
``scrapy crawl`` processes in a project folder, against a local site."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from changewatch.demo.serving import ServedSite

from .crawl import ROOT, read_feed

pytestmark = pytest.mark.slow

SETTINGS = """\
BOT_NAME = "shop"
SPIDER_MODULES = ["shop.spiders"]
ADDONS = {"changewatch.Addon": 0}
CHANGEWATCH_ALLOW_PRIVATE = True
"""

SPIDER = '''\
import scrapy


class MineSpider(scrapy.Spider):
    name = "mine"

    def __init__(self, site, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [site + "/board"]

    def parse(self, response):
        rows = [(a.attrib["href"], a.css("::text").get()) for a in response.css("li a")]
        yield {"key": "by-key", "url": response.url, "entities": {response.urljoin(h): {"title": t} for h, t in rows}}
        yield {"key": "strings", "url": response.url, "entities": [response.urljoin(h) for h, _ in rows]}
        yield {"key": "fields-list", "url": response.url, "fields": ["price", "9.99"]}
        yield {"key": "good", "url": response.url,
               "entities": [{"key": response.urljoin(h), "fields": {"title": t}} for h, t in rows]}
'''


class Board(ServedSite):
    def respond_to(self, path: str, headers: dict[str, str]) -> tuple[int, str, bytes]:
        if path == "/robots.txt":
            return 404, "text/plain", b""
        return 200, "text/html", b'<html><body><ul><li><a href="/a">A flat</a></li><li><a href="/b">B flat</a></li>' \
                                  b"</ul></body></html>"


@pytest.fixture
def site() -> Iterator[str]:
    served = Board()
    base = served.start()
    try:
        yield base
    finally:
        served.stop()


def crawl(project: Path, base: str) -> tuple[subprocess.CompletedProcess[str], list[dict[str, object]]]:
    (project / "shop" / "spiders").mkdir(parents=True, exist_ok=True)
    (project / "shop" / "__init__.py").write_text("")
    (project / "shop" / "settings.py").write_text(SETTINGS)
    (project / "shop" / "spiders" / "__init__.py").write_text("")
    (project / "shop" / "spiders" / "mine.py").write_text(SPIDER)
    (project / "scrapy.cfg").write_text("[settings]\ndefault = shop.settings\n")
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
    feed = project / "changes.jsonl"
    cmd = [sys.executable, "-m", "scrapy", "crawl", "mine", "-a", f"site={base}", "-O", str(feed)]
    done = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=120)
    return done, read_feed(feed)


def test_an_item_of_the_wrong_shape_is_an_error_that_says_the_shape(site: str, tmp_path: Path) -> None:
    done, records = crawl(tmp_path, site)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    errors = {str(r["key"]): r["error"] for r in records}
    shape = 'entities: expected a list of entities, each {"key": …, "fields": {…}}'
    assert errors == {
        "by-key": f"{shape}, not a dict",
        "strings": f"{shape}, not a list holding a str ('{site}/a')",
        "fields-list": "fields: expected a mapping of name → value, not a list",
    }
    assert {str(r["kind"]) for r in records} == {"error"}  # and the good one is a silent baseline
