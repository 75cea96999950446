"""End to end on the test web: real ``scrapy crawl watch`` runs against a local server of busy,
clock-only and quiet pages built from the corpus (tests/worlds/busy.py, each load new furniture,
its clock the time of the request), calibrated (``-a calibrate=5``) or not (confirmation alone):
noise-only runs report nothing, a one-word edit of a busy page is reported, its diff showing the
word, and confirmations are counted per 100 observations."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest

from changewatch.demo.serving import LocalServer, page_handler, serve

from ..e2e.crawl import Crawler, CrawlResult
from .busy import CORPUS, WorldPage, load, world
from .edits import edit
from .harness import changed_lines, confirmation_available
from .vocab import furniture_kind

pytestmark = pytest.mark.slow
NOISE_RUNS = 4


@dataclass
class WorldSite:
    """Serves ``pages[name]`` at ``/<name>``, each request a new load (numbered per path)."""

    pages: dict[str, WorldPage]
    loads: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def respond(self, path: str, headers: dict[str, str]) -> tuple[int, str, bytes]:
        name = path.split("?", 1)[0].lstrip("/")
        page = self.pages.get(name)
        if page is None:
            return 404, "text/plain", b"not found"
        with self.lock:
            n = self.loads[name] = self.loads.get(name, -1) + 1
        return 200, "text/html; charset=utf-8", load(page, n, datetime.now(UTC))


@pytest.fixture
def world_site() -> Iterator[tuple[WorldSite, LocalServer]]:
    pages = world(3)
    if not pages:
        pytest.skip(f"real-page corpus not found at {CORPUS}")
    served = {f"busy-{i}": p for i, p in enumerate(pages)}
    served["clock-0"] = pages[0].as_kind("clock")
    served["quiet-0"] = pages[1].as_kind("quiet")
    site = WorldSite(served)
    server = serve(page_handler(site.respond), name="world-site")
    yield site, server
    server.stop()


def _alerts(result: CrawlResult) -> list[str]:
    """Each record as "key: kind [the furniture its changed lines show] diff"."""
    out = []
    for r in result.records:
        kinds = sorted({furniture_kind(line[1:]) for line in changed_lines(r.get("diff", ""))})
        out.append(f"{r['key']}: {r['kind']} {kinds} {r.get('error') or ''}{r.get('diff', '')[:300]}")
    return out


@pytest.mark.parametrize("condition", [
    pytest.param("calibrate=5", marks=pytest.mark.xfail(not confirmation_available(), strict=True,
                                                         reason="busy pages need confirmation and learned slots")),
    "confirm only",
])
def test_busy_pages_crawled_stay_quiet_and_a_word_edit_is_reported(world_site: tuple[WorldSite, LocalServer],
                                                                   tmp_path: Path, condition: str) -> None:
    site, server = world_site
    watches = [{"key": name, "url": f"{server.base}/{name}"} for name in site.pages]
    crawler = Crawler(tmp_path, watches)
    first = crawler.run(*(("-a", "calibrate=5") if condition == "calibrate=5" else ()))
    assert first.returncode == 0 and first.records == [], first.stderr[-2000:]
    alerts: list[str] = []
    sent = 0
    for _ in range(NOISE_RUNS):
        result = crawler.run()
        assert result.returncode == 0, result.stderr[-2000:]
        alerts += _alerts(result)
        sent += int(result.stats.get("changewatch/confirm/sent", 0))
    observations = NOISE_RUNS * len(watches)
    per_kind = {kind: sum(a.startswith(kind) for a in alerts) for kind in ("busy", "clock", "quiet")}
    print(f"busy-crawl {condition}: {observations} noise-only observations, alerts {per_kind}, "
          f"{100 * sent / observations:.1f} confirmations per 100 observations")
    for alert in alerts:
        print("    " + alert[:200].replace("\n", " | "))
    assert alerts == [], alerts

    change = edit(site.pages["busy-1"], "word")
    assert change is not None
    site.pages["busy-1"] = change.page
    records = crawler.run().records
    assert [(r["key"], r["kind"]) for r in records] == [("busy-1", "content")], _alerts_of(records)
    lines = changed_lines(records[0]["diff"])
    assert any(change.removed[0] in line for line in lines if line.startswith("-")), lines
    assert any(change.added[0] in line for line in lines if line.startswith("+")), lines


def _alerts_of(records: list[dict[str, object]]) -> list[str]:
    return [f"{r['key']}: {r['kind']} {str(r.get('diff', ''))[:300]}" for r in records]
