"""The two ways changewatch runs: on Scrapy's asyncio reactor (every other test) and without a
Twisted reactor (``TWISTED_REACTOR_ENABLED = False``, plain asyncio); any other reactor stops the
crawl at start with one line. Real ``scrapy crawl watch`` processes against the demo site."""

from __future__ import annotations

from pathlib import Path

from changewatch.demo.site import DemoSite
from tests.changes import field

from .crawl import Crawler, by_key
from .test_watch_crawl import demo_watches

SELECT_REACTOR = "twisted.internet.selectreactor.SelectReactor"


def test_another_reactor_stops_the_crawl_with_one_line(demo_site: tuple[DemoSite, str], tmp_path: Path) -> None:
    _, base = demo_site
    result = Crawler(tmp_path, demo_watches(base)).run("-s", f"TWISTED_REACTOR={SELECT_REACTOR}")
    assert result.returncode != 0
    expected = (f"ERROR: changewatch cannot start: TWISTED_REACTOR = '{SELECT_REACTOR}': expected "
                "twisted.internet.asyncioreactor.AsyncioSelectorReactor (Scrapy's default) or "
                f"TWISTED_REACTOR_ENABLED = False; changewatch cannot run on {SELECT_REACTOR}")
    assert expected in result.stderr.splitlines()[-1], result.stderr[-3000:]
    # the one line, not Twisted's report of the dropped Deferred after it (twice, with tracebacks)
    for noise in ("Traceback", "Unhandled error in Deferred", "CRITICAL"):
        assert noise not in result.stderr, result.stderr[-3000:]
    assert result.records == [] and not (tmp_path / "state.db").exists()


def test_without_a_reactor_baselines_then_real_changes(demo_site: tuple[DemoSite, str], tmp_path: Path) -> None:
    """The documented reactor-less mode: downloads through Scrapy's aiohttp handler, no Twisted."""
    site, base = demo_site
    crawler = Crawler(tmp_path, demo_watches(base))
    reactorless = ("-s", "TWISTED_REACTOR_ENABLED=False")

    first = crawler.run(*reactorless)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "AiohttpDownloadHandler" in first.stderr  # Scrapy's reactor-less download handler did the fetching
    assert first.records == [] and first.stats["changewatch/commit/baseline"] == 4
    assert "Traceback" not in first.stderr

    noisy = crawler.run(*reactorless)  # every load of the demo site differs in noise only
    assert noisy.returncode == 0 and noisy.records == [], noisy.records

    site.publish_changes()
    changed = crawler.run(*reactorless)
    assert changed.returncode == 0, changed.stderr[-3000:]
    records = by_key(changed.records)
    assert set(records) == {"demo-kettle", "demo-terms", "demo-listings"}
    assert records["demo-kettle"]["changes"] == {"offers.price": field("89.00", "79.00", "89", "79")}
    assert "+ Clause 17. Refunds now take up to sixty days." in records["demo-terms"]["diff"]
    assert [a["key"] for a in records["demo-listings"]["added"]] == [f"{base}/rent/21-canal-walk"]
    # the SSRF guard says what it cannot check without Twisted's resolver
    assert "SSRF guard: downloads do not go through Twisted's resolver" in changed.stderr
