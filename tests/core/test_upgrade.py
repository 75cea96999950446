"""A store written by NORMALISER_VERSION 1 (case folded, punctuation trimmed at line ends) keeps
working: the first comparison reads the new page as that version did, reports a change made
across the upgrade, absorbs what only the new reading differs in and stores the new form.

``data/normaliser_v1.json`` was written by the code of that version (changewatch before issue
11): the encoded snapshots of one page (whole, with ``sort_lines``, with a region), their texts,
and the content hash of its stable text for every corpus page (hashes only: the corpus is never
copied into the repository).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.comparisons.content import ContentComparison, ContentPart, _digest
from changewatch.core.normalise import legacy_stable_text, visible_text
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.verdict import Verdict, observe

from ._support import CORPUS_PAGES, require_corpus, stored_as_version_5

V1 = json.loads((Path(__file__).parent / "data" / "normaliser_v1.json").read_text(encoding="utf-8"))
PAGE: str = V1["page"]
COMPARISONS = load_comparisons()
KWARGS: dict[str, dict[str, Any]] = {
    "page": {}, "sorted": {"options": {"sort_lines": True}}, "region": {"region": "body"},
}


def stored_v1(name: str = "page") -> Snapshot:
    return Snapshot.decode(base64.b64decode(V1["snapshots"][name]), COMPARISONS)


def run(html: str, old: Snapshot, name: str = "page", threshold: int | None = None) -> Verdict:
    obs = Observation(key="k", url="https://e.example/", html=html.encode(), encoding="utf-8", **KWARGS[name])
    return observe(obs, old, COMPARISONS, context=CompareContext(threshold=threshold))


def part(snapshot: Snapshot | None) -> ContentPart:
    assert snapshot is not None
    content = snapshot.part("content")
    assert isinstance(content, ContentPart)
    return content


def reread(snapshot: Snapshot | None) -> Snapshot:
    """The snapshot as the store gives it back."""
    assert snapshot is not None
    return Snapshot.decode(snapshot.encode(COMPARISONS), COMPARISONS)


@pytest.mark.parametrize("name", list(KWARGS))
def test_a_version_1_snapshot_is_read_as_case_folded(name: str) -> None:
    stored = part(stored_v1(name))
    assert stored.case_folded and stored.text == V1["texts"][name]


@pytest.mark.parametrize("name", list(KWARGS))
def test_legacy_reading_is_the_text_version_1_stored(name: str) -> None:
    visible = visible_text(PAGE, "body" if name == "region" else None, sort_lines=name == "sorted")
    assert legacy_stable_text(visible.raw, sort_lines=visible.sort_lines) == V1["texts"][name]


@pytest.mark.parametrize("name", list(KWARGS))
def test_unchanged_page_across_the_upgrade_is_none_and_stored_in_the_new_form(name: str) -> None:
    verdict = run(PAGE, stored_v1(name), name)
    assert verdict.kind is Kind.NONE and not verdict.members
    # the same bytes, but a body hash of the old normaliser never matches: re-read, re-stored
    new = part(verdict.keep)
    assert not new.case_folded and "SIMDJSON 3.0 released" in new.text and "Correct!" in new.text
    after = reread(verdict.keep)
    assert not part(after).case_folded
    # and from then on the new form is compared as usual: unchanged, nothing to rewrite
    again = run(PAGE, after, name)
    assert again.kind is Kind.NONE and again.keep is None


def test_case_and_punctuation_differences_across_the_upgrade_are_absorbed() -> None:
    edited = PAGE.replace("SIMDJSON", "simdjson").replace("Correct!", "CORRECT!").replace("second.", "second")
    verdict = run(edited, stored_v1())
    assert verdict.kind is Kind.NONE
    assert "simdjson 3.0 released" in part(verdict.keep).text
    # a case-only change after the upgrade is a change
    later = run(PAGE, reread(verdict.keep))
    assert later.kind is Kind.CONTENT and later.diff is not None
    assert "- simdjson 3.0 released" in later.diff and "+ SIMDJSON 3.0 released" in later.diff


def test_a_real_change_made_across_the_upgrade_is_reported() -> None:
    edited = PAGE.replace("gigabytes", "terabytes")
    verdict = run(edited, stored_v1())
    assert verdict.kind is Kind.CONTENT and verdict.diff is not None
    # the diff of this one comparison is of the folded texts, as the baseline has no other
    assert "- updated : parsing json at gigabytes per second" in verdict.diff
    assert "+ updated : parsing json at terabytes per second" in verdict.diff
    new = part(verdict.keep)
    assert not new.case_folded and "Parsing JSON at terabytes per second." in new.text


def test_a_change_under_the_threshold_keeps_the_folded_baseline_across_store_round_trips() -> None:
    edited = PAGE.replace("gigabytes", "terabytes")
    verdict = run(edited, stored_v1(), threshold=64)
    assert verdict.kind is Kind.NOISE
    kept = reread(verdict.keep)
    assert part(kept).case_folded  # written back as version 3, still read as folded
    assert run(PAGE, kept, threshold=64).kind is Kind.NONE


def test_version_3_parts_that_do_not_say_so_are_not_case_folded() -> None:
    comparison = ContentComparison()
    new = comparison.digest(Observation(key="k", url="u", html=PAGE))
    assert isinstance(new, ContentPart)
    data, blob = stored_as_version_5(new)
    assert "case_folded" not in data
    decoded = comparison.decode(data, blob, 3)
    assert decoded is not None and not decoded.case_folded
    assert comparison.decode(data, blob, 2).case_folded  # type: ignore[union-attr]


def test_legacy_reading_reproduces_version_1_on_every_corpus_page() -> None:
    require_corpus()
    for name, content_hash in V1["corpus"].items():
        visible = visible_text((CORPUS_PAGES / name).read_bytes(), like_scrapy=True)
        assert _digest(legacy_stable_text(visible.raw)) == content_hash, name


def folded_v1(html: str) -> ContentPart:
    """A content part as version 1 stored *html* (its text is legacy_stable_text's, checked
    against version 1 on every corpus page above)."""
    text = legacy_stable_text(visible_text(html, like_scrapy=True).raw)
    return ContentPart(raw_hash="v1", content_hash=_digest(text), length=len(text), text=text, case_folded=True)


def compare_across_the_upgrade(old_html: str, new_html: str) -> Kind | None:
    new = ContentPart.of(visible_text(new_html, like_scrapy=True))
    difference = ContentComparison().compare(folded_v1(old_html), new, CompareContext(threshold=None))
    assert difference.status.value in {"none", "changed"}
    return None if difference.status.value == "none" else Kind.CONTENT


_DE = "<h1>Nachrichten</h1><p>Stand: {}, vor 5 Minuten</p><p>Der Text bleibt gleich.</p>"
_FR = "<h1>Actualités</h1><p>Publié le {} à 10h32</p><p>Le texte.</p>"
_ZH = "<h1>新闻</h1><p>更新于 {}</p><p>正文</p>"


@pytest.mark.parametrize(
    ("template", "then", "now"),
    [
        (_DE, "Montag, 30. November 2026", "Dienstag, 1. Dezember 2026"),
        # version 1's English pattern took "November 2026" from both, and left the days
        (_DE, "Montag, 2. November 2026", "Dienstag, 3. November 2026"),
        (_DE, "Freitag, 12. Mai", "Samstag, 13. Mai"),
        (_FR, "lundi 30 novembre 2026", "mardi 1 décembre 2026"),
        (_ZH, "2026年11月30日 星期一 5分钟前", "2026年12月1日 星期二 2小时前"),
        ("<p>Aktualizacja: 5 minut temu</p><p>Ceny</p>", "", ""),
    ],
)
def test_other_languages_dates_that_moved_across_the_upgrade_are_no_change(template: str, then: str,
                                                                          now: str) -> None:
    old_html, new_html = template.format(then), template.format(now)
    if not then:
        new_html = old_html.replace("5 minut", "2 godziny")
    assert compare_across_the_upgrade(old_html, new_html) is None


def test_a_real_change_next_to_a_moved_date_across_the_upgrade_is_reported() -> None:
    old_html = _DE.format("Montag, 30. November 2026")
    new_html = _DE.format("Dienstag, 1. Dezember 2026").replace("bleibt gleich", "ist neu")
    assert compare_across_the_upgrade(old_html, new_html) is Kind.CONTENT
    # a list's numbers are no dates
    assert compare_across_the_upgrade("<p>Schritt 1. - Teig</p>", "<p>Schritt 2. - Teig</p>") is Kind.CONTENT
