"""End to end: a page that keeps flipping between two texts (an A/B test whose servers answer one
text for two runs, then the other), crawled by real ``scrapy crawl watch`` runs with confirmation.
Its first change is reported; each return to the earlier text is held one run and reported when
it stays; the third return within eight changes opens a ``health: flipping:`` condition, said once;
eight runs without a return close it (``recovered``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from changewatch.demo.serving import LocalServer, page_handler, serve

from .crawl import Crawler

pytestmark = pytest.mark.slow

A, B = "Subscribe today: your first month is free", "Join 40,000 readers who get our morning brief"
PARAGRAPHS = ["The harbour ferry returns after a quiet winter, with a new timetable for the spring.",
              "Council members backed the riverside footbridge in a vote on Tuesday evening.",
              "Night trains are coming back to the valley, the operator said in a statement."]


class FlippingPage:
    """Serves the page with its teaser's current text (set by the test between crawls)."""

    def __init__(self) -> None:
        self.teaser = A

    def respond(self, path: str, headers: dict[str, str]) -> tuple[int, str, bytes]:
        body = "".join(f"<p>{p}</p>" for p in PARAGRAPHS[:2]) + f"<div><p>{self.teaser}</p></div>" + \
            f"<p>{PARAGRAPHS[2]}</p>"
        return 200, "text/html; charset=utf-8", f"<html><body><h1>Town news</h1>{body}</body></html>".encode()


@pytest.fixture
def flipping() -> Iterator[tuple[FlippingPage, LocalServer]]:
    page = FlippingPage()
    server = serve(page_handler(page.respond), name="flipping-site")
    yield page, server
    server.stop()


def test_a_page_that_keeps_flipping_says_so_once_then_recovers(flipping: tuple[FlippingPage, LocalServer],
                                                               tmp_path: Path) -> None:
    page, server = flipping
    crawler = Crawler(tmp_path, [{"key": "news", "url": f"{server.base}/news"}])
    seen: list[list[tuple[str, str]]] = []
    for teaser in [A, B, B, A, A, B, B, A, A, *[A] * 8]:
        page.teaser = teaser
        result = crawler.run()
        assert result.returncode == 0, result.stderr[-2000:]
        seen.append([(r["kind"], r.get("error", "")[:17] or r.get("health", {}).get("condition", ""))
                     for r in result.records])  # 17: "health: flipping:"
    contents = [n for n, records in enumerate(seen) if ("content", "") in records]
    began = [n for n, records in enumerate(seen) if ("error", "health: flipping:") in records]
    over = [n for n, records in enumerate(seen) if ("recovered", "flipping:news") in records]
    assert contents[0] == 1 and 3 not in contents and 4 in contents, seen  # a return held, then reported: it stayed
    assert len(began) == 1 and len(over) == 1 and began[0] < over[0], seen
