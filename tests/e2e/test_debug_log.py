"""A crawl's DEBUG log says what became of each observation without copying its page: Scrapy logs
an item the pipeline drops (every baseline, unchanged or noisy page) by its repr, and an
observation's repr gives its page's size. A real ``scrapy crawl watch`` of the demo site."""

from __future__ import annotations

from pathlib import Path

import pytest

from changewatch.demo.site import DemoSite

from .crawl import Crawler
from .test_watch_crawl import demo_watches

pytestmark = pytest.mark.slow


def test_a_dropped_observation_is_logged_without_its_page(demo_site: tuple[DemoSite, str], tmp_path: Path) -> None:
    _, base = demo_site
    crawler = Crawler(tmp_path, demo_watches(base))
    for run in (crawler.run("-s", "LOG_LEVEL=DEBUG"), crawler.run("-s", "LOG_LEVEL=DEBUG")):
        assert run.returncode == 0, run.stderr[-3000:]
        dropped = [line for line in run.stderr.splitlines() if line.startswith("Observation(key='demo-terms'")]
        assert len(dropped) == 1 and "html=<" in dropped[0], run.stderr[-3000:]
        assert "Clause 17." not in run.stderr  # the terms page's own words stay out of the log
