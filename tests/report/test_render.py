"""A change's HTML without a browser: the word-level diff, escaping, links, caps on long lists."""

from __future__ import annotations

import lxml.html

from changewatch.report.render import LIST_LIMIT, change_html, link
from changewatch.report.words import Segment, side_by_side, word_diff


def test_word_diff_keeps_case_and_punctuation_as_written() -> None:
    old, new = word_diff("simdjson is fast.", "SIMDJSON is fast!")
    assert old == (Segment("simdjson", True), Segment(" is fast"), Segment(".", True))
    assert new == (Segment("SIMDJSON", True), Segment(" is fast"), Segment("!", True))


def test_unpaired_lines_are_whole_changes() -> None:
    rows = side_by_side("- gone line\n- and this\n+ one new line\n  same")
    assert [(r.kind, r.old is None, r.new is None) for r in rows] == [
        ("change", False, False), ("change", False, True), ("context", False, False)]
    assert rows[1].old == (Segment("and this", True),)


def test_only_http_urls_are_links() -> None:
    assert link("https://a.example/?q=1&x=<b>").startswith('<a href="https://a.example/?q=1&amp;x=&lt;b&gt;"')
    assert link("javascript:alert(1)") == "javascript:alert(1)"
    assert link("data:text/html,<script>") == "data:text/html,&lt;script&gt;"
    assert link(None) == "null"


def test_values_of_any_type_and_long_lists() -> None:
    record = {"kind": "entities", "key": "k<", "url": "http://x.example/", "observed_at": "2026-12-01T00:00:00Z",
              "added": [{"key": f"https://x.example/{n}", "fields": {"n": n}} for n in range(LIST_LIMIT + 7)],
              "changed": [{"key": "https://x.example/1", "changes": {"price": {"old": None, "new": 12.5}}}]}
    page = lxml.html.fromstring(change_html(3, "watch", record, "changewatch evidence 3 -o d"))
    assert len(page.xpath("//div[contains(@class,'added')]//li")) == LIST_LIMIT
    assert page.xpath("string(//div[contains(@class,'added')]/p[@class='more'])") == "7 more not shown"
    assert [c.text_content() for c in page.xpath("//div[contains(@class,'changed')]//tbody//td")] == ["null", "12.5"]
    assert page.xpath("string(//header/strong)") == "k<"


def test_a_marker_after_a_passage_keeps_its_lines_paired() -> None:
    rows = side_by_side("  a\n- old 1\n- old 2\n+ new 1\n+ new 2\n… (6 more diff lines)\n  b\n@@\n- c\n+ C")
    assert [r.kind for r in rows] == ["context", "change", "change", "more", "context", "gap", "change"]
    assert rows[1].new is not None and rows[1].old is not None and rows[3].note == "… (6 more diff lines)"
