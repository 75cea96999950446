"""The report gathers a site watch's changes under it: the page set's record first, then its pages',
under a line saying what changed on the site; other changes stay where they are (newest first)."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import lxml.html

from changewatch.core.comparisons import Kind
from changewatch.report.build import ReportOptions, write_report
from changewatch.store import ChangeQuery
from changewatch.store.sqlite import SQLiteStore

from .stores import Filler


def test_a_site_watchs_pages_are_grouped_under_it(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    store = SQLiteStore(tmp_path / "state.db")
    store.open()
    try:
        fill = Filler(store, now)
        fill.commit("docs|https://docs.example/a", "https://docs.example/a", Kind.BASELINE, 3)
        fill.commit("docs|https://docs.example/a", "https://docs.example/a", Kind.CONTENT, 2,
                    {"diff": "- Old words.\n+ New words!", "distance": 9, "site_watch": "docs"})
        fill.commit("https://plain.example/", "https://plain.example/", Kind.BASELINE, 3)
        fill.commit("https://plain.example/", "https://plain.example/", Kind.FIELD, 1.5,
                    {"changes": {"p": {"old": "1", "new": "2"}}})
        fill.commit("docs", "https://docs.example/sitemap.xml", Kind.BASELINE, 3)
        fill.commit("docs", "https://docs.example/sitemap.xml", Kind.ENTITIES, 1,
                    {"added": [{"url": "https://docs.example/new"}], "removed": [], "site_watch": "docs"})
        out = io.StringIO()
        options = ReportOptions(f"sqlite:///{tmp_path / 'state.db'}", ChangeQuery(), 100, now,
                                ("field", "entities", "content", "error"))
        assert write_report(store, options, out) == (3, 3)
    finally:
        store.close()
    dom = lxml.html.fromstring(out.getvalue())
    [site] = dom.xpath("//section[@class='site-watch']")
    assert site.get("id") == "site-watch-docs"
    assert site.xpath("string(h3)") == "site watch docs: 1 page added, 1 page changed"
    assert [a.xpath("string(.//header//strong)") for a in site.xpath("article")] == [
        "docs", "docs|https://docs.example/a"]
    assert site.xpath(".//a/@href")[:2] != [] and "https://docs.example/new" in site.xpath(".//a/@href")
    articles = dom.xpath("//section[@id='changes']//article")
    assert [a.xpath("string(.//header//strong)") for a in articles] == [
        "docs", "docs|https://docs.example/a", "https://plain.example/"]  # the site at its newest change
