"""``changewatch report`` opened in a real headless Chromium: the changed words as
the pages wrote them, the tables, the charts; nothing from a page becomes markup; a screenshot is
kept for people to look at (tests/report/browser.py says where)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import lxml.html
import pytest

from changewatch.cli import main
from changewatch.store.sqlite import SQLiteStore

from .browser import browser_home, dump_dom, screenshot
from .stores import HOSTILE, every_kind

pytestmark = pytest.mark.slow  # reports opened in a real headless Chromium

__all__ = ["browser_home"]


def _report(tmp_path: Path, *args: str) -> tuple[Path, str]:
    out = tmp_path / "report.html"
    assert main(["report", "--store", f"sqlite:///{tmp_path / 'state.db'}", "-o", str(out), *args]) == 0
    return out, out.read_text(encoding="utf-8")


def test_a_store_with_every_kind_of_record(tmp_path: Path, browser_home: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    store = SQLiteStore(tmp_path / "state.db")
    store.open()
    every_kind(store, datetime.now(UTC))
    store.close()
    out, html = _report(tmp_path)
    # self-contained: nothing to fetch, nothing to run
    assert not re.search(r"<script|<link|@import|url\(|src=\"(?!data:)|<iframe|<object", html, re.I)
    dom = lxml.html.fromstring(dump_dom(out, browser_home))
    assert dom.xpath("//script") == [] and dom.xpath("//img") == []  # the page's <script> and <img> stayed text
    assert HOSTILE in dom.text_content()
    assert not dom.xpath("//a[starts-with(@href, 'javascript')]")
    summary = {c.xpath("string(span)"): c.xpath("string(b)") for c in dom.xpath("//section[@id='summary']//div"
                                                                                  "[contains(@class,'card')]")}
    assert summary["changes"] == "8" and summary["field"] == "1" and summary["error"] == "3"  # 2 watches, 1 health
    assert summary["health warnings"] == "1" and summary["failing watches"] == "1"
    # the content change: side by side, the changed words marked as the page wrote them
    terms = dom.get_element_by_id("change-" + dom.xpath("string(//article[contains(@class,'kind-content')]/@id)")
                                  .removeprefix("change-"))
    assert [m.text_content() for m in terms.xpath(".//td[@class='ins']/mark")] == ["90", ", and share it with "
                                                                                   "partners", "!"]
    assert [m.text_content() for m in terms.xpath(".//td[@class='del']/mark")] == ["30"]
    assert "changewatch evidence" in terms.xpath("string(.//footer)")
    # the field change: a table old → new
    rows = [[c.text_content() for c in r.xpath("th|td")]
            for r in dom.xpath("//article[contains(@class,'kind-field')]//table[@class='fields']/tbody/tr")]
    assert ["offers.price", "89.00", "79.00"] in rows and ["offers.availability", "InStock", "OutOfStock"] in rows
    # entities: added, removed, changed
    entities = dom.xpath("//article[contains(@class,'kind-entities')]")[0]
    assert [h.text_content() for h in entities.xpath(".//h4")] == ["added (2)", "removed (1)", "changed (1)"]
    assert entities.xpath(".//a/@href")[:2] == ["https://rent.example/2br", "https://rent.example/flat/9"]
    # the watched page is a link; the health warning and the recovery are there
    assert dom.xpath("//article[contains(@class,'kind-field')]//span[@class='url']/a/@href") == [
        "https://shop.example/p/kettle"]
    assert "health: noise: rent.example" in dom.xpath("string(//table[@class='health'])")
    assert "blocked: page says 'Access Denied'" in dom.xpath("string(//table[@class='failing'])")
    # per site, the two charts, with bars
    sites = dom.xpath("//div[contains(concat(' ', @class, ' '), ' site ')]")
    assert {s.xpath("string(h3/text())").strip() for s in sites} == {"shop.example", "rent.example"}
    assert [s.xpath("string(h3/text())").strip() for s in sites if "warned" in s.get("class")] == ["rent.example"]
    for site in sites:
        assert len(site.xpath(".//*[local-name()='svg']")) == 2
        assert site.xpath(".//*[local-name()='rect' and contains(@class,'kind-noise')]")
        assert site.xpath(".//*[local-name()='rect' and @class='bar noise']")
    screenshot(out, browser_home, "report-every-kind.png")


def test_an_empty_store_gives_an_empty_report_that_says_so(tmp_path: Path, browser_home: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    store = SQLiteStore(tmp_path / "state.db")
    store.open()
    store.close()
    out, _ = _report(tmp_path)
    assert "no changes since" in capsys.readouterr().err
    dom = lxml.html.fromstring(dump_dom(out, browser_home))
    text = " ".join(dom.text_content().split())
    assert "No changes in this period" in text and "No health history in this period" in text
    assert "none open" in text
    screenshot(out, browser_home, "report-empty.png", height=900)
