"""A crawl that makes its store says so, with the store's full path: the default store is relative
to the folder the crawl starts in, and a crawl started elsewhere (a subfolder of the project, a
cron job without ``cd``) would otherwise take silent baselines in a store of its own. Real
``scrapy crawl watch`` processes of the demo site."""

from __future__ import annotations

from pathlib import Path

import pytest

from changewatch.demo.site import DemoSite

from .crawl import Crawler
from .test_watch_crawl import demo_watches

pytestmark = pytest.mark.slow


def test_a_crawl_that_makes_its_store_says_where(demo_site: tuple[DemoSite, str], tmp_path: Path) -> None:
    _, base = demo_site
    crawler = Crawler(tmp_path, demo_watches(base), store="sqlite:///.changewatch/state.db")
    first = crawler.run()
    assert first.returncode == 0, first.stderr[-3000:]
    said = [line for line in first.stderr.splitlines() if "created a new store" in line]
    assert len(said) == 1 and said[0].endswith(
        f"WARNING: changewatch: created a new store {tmp_path.resolve() / '.changewatch' / 'state.db'}: the first "
        "observation of each page in it is a silent baseline"), first.stderr[-3000:]
    second = crawler.run()
    assert second.returncode == 0 and "created a new store" not in second.stderr, second.stderr[-3000:]
