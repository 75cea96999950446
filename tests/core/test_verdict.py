"""classify: baseline, none, noise, field, entities, content and error, as the crawl decides them."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changewatch.core import verdict as engine
from changewatch.core.comparisons import CompareContext, Kind, Unobservable, load_comparisons
from changewatch.core.comparisons.content_part import ContentPart
from changewatch.core.observation import Observation
from changewatch.core.simhash import distance, simhash
from changewatch.core.snapshot import Snapshot
from changewatch.core.text.normalise import visible_text
from tests.changes import field

from ._support import article_html, prose_paragraphs, prose_words

EDIT = "The committee unexpectedly withdrew its approval of the whole plan."
COMPARISONS = load_comparisons()


def digest(**kw: Any) -> Snapshot:
    kw.setdefault("key", "k")
    kw.setdefault("url", "https://list.example/")
    return engine.digest(Observation(**kw), COMPARISONS)


def snap(html: str | bytes, *, region: str | None = None, sort_lines: bool = False) -> Snapshot:
    return digest(html=html, region=region, options={"sort_lines": sort_lines})


def fields_snap(fields: dict[str, Any], text: str | None = None) -> Snapshot:
    return digest(fields=fields, text=text)


def entities_snap(items: list[tuple[str, dict[str, Any]]], text: str | None = None) -> Snapshot:
    return digest(entities=[{"key": k, "fields": f} for k, f in items], text=text)


def classify(old: Snapshot | None, new: Snapshot, *, threshold: int | None = None,
             error: str | None = None) -> engine.Verdict:
    return engine.classify(old, new, COMPARISONS, context=CompareContext(threshold=threshold), error=error)


def content(snapshot: Snapshot) -> ContentPart:
    part = snapshot.part("content")
    assert isinstance(part, ContentPart)
    return part


PARAGRAPHS = prose_paragraphs(3000, 60, seed=1)
ARTICLE = article_html(PARAGRAPHS, header="Updated 10:32 PM", footer="Copyright 2026")


def with_sentence(paragraphs: list[str], index: int, sentence: str = EDIT) -> str:
    edited = list(paragraphs)
    edited[index] = f"{edited[index]} {sentence}"
    return article_html(edited, header="Updated 10:32 PM", footer="Copyright 2026")


# --- baseline / none / noise ---------------------------------------------------------------------------

def test_baseline_when_there_is_no_old_observation() -> None:
    new = snap(ARTICLE)
    verdict = classify(None, new)
    assert verdict.kind is Kind.BASELINE
    assert verdict.keep is new
    assert not verdict.kind.reported
    assert classify(None, fields_snap({"price": "1"})).kind is Kind.BASELINE


def test_none_for_identical_pages() -> None:
    old, new = snap(ARTICLE), snap(ARTICLE)
    verdict = classify(old, new)
    assert verdict.kind is Kind.NONE
    assert verdict.distance is None and verdict.diff is None and verdict.error is None
    assert verdict.keep is None  # identical: nothing to rewrite
    assert not verdict.kind.reported


def test_none_for_every_identical_corpus_page(corpus_texts: dict[Path, str]) -> None:
    checked = 0
    for path in corpus_texts:
        old, new = snap(path.read_bytes()), snap(path.read_bytes())
        baseline = classify(None, old)
        verdict = classify(old, new)
        if baseline.kind is Kind.ERROR:  # a page that cannot be a baseline cannot be compared either
            assert verdict.kind is Kind.ERROR, path
            continue
        assert verdict.kind is Kind.NONE, (path, verdict)
        checked += 1
    assert checked >= len(corpus_texts) - 3


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400), st.booleans())
def test_none_for_identical_arbitrary_input(text: str, sort_lines: bool) -> None:
    html = "<p>a paragraph that anchors the page</p>" + text
    verdict = classify(snap(html, sort_lines=sort_lines), snap(html, sort_lines=sort_lines))
    assert verdict.kind is Kind.NONE


def test_noise_when_only_volatile_fragments_differ() -> None:
    old_html = ARTICLE.replace("Updated 10:32 PM", "Updated 3 minutes ago, token=abc12345")
    new_html = ARTICLE.replace("Updated 10:32 PM", "Updated 1 hour ago, token=ffe9d2a7")
    old_text, new_text = visible_text(old_html), visible_text(new_html)
    assert old_text.raw != new_text.raw and old_text.stable == new_text.stable
    verdict = classify(snap(old_html), snap(new_html))
    assert verdict.kind is Kind.NOISE
    assert verdict.diff is None
    assert not verdict.kind.reported
    assert verdict.keep is not None and content(verdict.keep).raw_hash == content(snap(new_html)).raw_hash


def test_noise_for_shuffled_lines_with_sort_lines_content_without() -> None:
    items = [f"<li>{w} {n}</li>" for n, w in enumerate(prose_words(40, seed=8))]
    shuffled = list(items)
    random.Random(3).shuffle(shuffled)
    old_html, new_html = f"<ul>{''.join(items)}</ul>", f"<ul>{''.join(shuffled)}</ul>"
    assert classify(snap(old_html, sort_lines=True), snap(new_html, sort_lines=True)).kind is Kind.NOISE
    assert classify(snap(old_html), snap(new_html)).kind is Kind.CONTENT


# --- content --------------------------------------------------------------------------------------------

def test_one_sentence_edit_in_a_long_generated_article_is_content() -> None:
    old, new = snap(ARTICLE), snap(with_sentence(PARAGRAPHS, 25))
    verdict = classify(old, new)
    assert verdict.kind is Kind.CONTENT and verdict.kind.reported
    assert verdict.distance == distance(simhash(old.text or ""), simhash(new.text or ""))
    assert verdict.diff is not None
    plus = [line for line in verdict.diff.split("\n") if line.startswith("+ ")]
    assert len(plus) == 1 and EDIT in plus[0]
    # A fixed simhash threshold of 3 bits would have called this edit noise.
    assert verdict.distance <= 3
    assert classify(old, new, threshold=3).kind is Kind.NOISE


def test_one_sentence_edit_in_a_long_corpus_article_is_content(long_article: tuple[Path, bytes, str]) -> None:
    _path, html, text = long_article
    assert len(text.split()) > 2000
    marker = b"</p>"
    at = html.find(marker, len(html) // 2)
    assert at > 0, "the article has no paragraph in its second half"
    edited = html[:at] + b" " + EDIT.encode() + html[at:]
    old, new = snap(html), snap(edited)
    verdict = classify(old, new)
    assert verdict.kind is Kind.CONTENT
    assert verdict.diff is not None and EDIT in verdict.diff
    assert verdict.distance is not None and verdict.distance <= 3
    assert classify(old, new, threshold=3).kind is Kind.NOISE


def test_threshold_noise_keeps_the_old_text_and_content_above_it() -> None:
    edited = list(PARAGRAPHS)
    edited[3:8] = [" ".join(prose_words(60, seed=500 + i)) for i in range(5)]
    old, new = snap(ARTICLE), snap(article_html(edited, header="Updated 10:32 PM"))
    d = classify(old, new).distance
    assert d is not None and d >= 2, "the edit must move the fingerprint for this test to mean anything"

    at = classify(old, new, threshold=d)
    assert at.kind is Kind.NOISE and at.distance == d and at.diff is None
    assert at.keep is not None
    kept, was = content(at.keep), content(old)
    assert (kept.text, kept.content_hash, kept.fingerprint, kept.raw_hash) == \
        (was.text, was.content_hash, was.fingerprint, was.raw_hash)

    above = classify(old, new, threshold=d - 1)
    assert above.kind is Kind.CONTENT and above.distance == d and above.diff
    assert above.keep == new


def test_slow_drift_adds_up_until_it_is_reported() -> None:
    threshold = 4
    current = list(PARAGRAPHS)
    replacements = prose_words(600, seed=77)
    baseline = previous = snap(article_html(current))
    for step in range(60):
        words = current[step].split()
        words[10:16] = replacements[step * 6 : step * 6 + 6]
        current[step] = " ".join(words)
        page = snap(article_html(current))
        assert distance(content(previous).fingerprint, content(page).fingerprint) <= threshold, \
            "each step must be small for this test to mean anything"
        verdict = classify(baseline, page, threshold=threshold)
        if verdict.kind is Kind.CONTENT:
            break
        assert verdict.kind is Kind.NOISE and verdict.keep is not None
        assert verdict.keep.text == baseline.text
        baseline, previous = verdict.keep, page
    else:
        pytest.fail("60 small edits in a row were never reported")
    assert step >= 1 and verdict.distance is not None and verdict.distance > threshold


# --- fields and entities ---------------------------------------------------------------------------------

def test_field_change() -> None:
    verdict = classify(fields_snap({"price": "89.00", "name": "Tea"}), fields_snap({"price": "79.00", "name": "Tea"}))
    assert verdict.kind is Kind.FIELD
    assert verdict.changes == {"price": field("89.00", "79.00", "89", "79")}


def test_equal_field_values_are_none() -> None:
    old = fields_snap({"price": "89.00", "availability": "http://schema.org/InStock"})
    new = fields_snap({"price": 89, "availability": "InStock"})
    assert classify(old, new).kind is Kind.NONE


def test_field_change_wins_kind_over_text_but_text_members_are_filled() -> None:
    old = fields_snap({"price": "89.00"}, text="Great tea set\nPrice 89.00\nIn stock")
    new = fields_snap({"price": "79.00"}, text="Great tea set\nPrice 79.00\nOnly a few left")
    verdict = classify(old, new)
    assert verdict.kind is Kind.FIELD
    assert verdict.changes == {"price": field("89.00", "79.00", "89", "79")}
    assert verdict.diff is not None and "+ Only a few left" in verdict.diff


def test_field_starting_to_be_tracked_is_not_a_change() -> None:
    assert classify(fields_snap({"price": "1"}), fields_snap({"price": "1", "stock": "3"})).kind is Kind.NONE
    assert classify(Snapshot(), fields_snap({"price": "1"})).kind is Kind.NONE


def test_entity_change_kind() -> None:
    old = entities_snap([("/a", {"price": "10"}), ("/b", {"price": "20"})])
    new = entities_snap([("/b", {"price": "21"}), ("/c", {"price": "30"})])
    verdict = classify(old, new)
    assert verdict.kind is Kind.ENTITIES
    assert [a["key"] for a in verdict.added] == ["https://list.example/c"]
    assert [r["key"] for r in verdict.removed] == ["https://list.example/a"]
    assert verdict.changed == [{"key": "https://list.example/b", "changes": {"price": field("20", "21")}}]


def test_entity_change_wins_over_text_field_wins_over_entities() -> None:
    old = entities_snap([("/a", {})], text="list of flats\none flat")
    new = entities_snap([("/a", {}), ("/b", {})], text="list of flats\ntwo flats")
    assert classify(old, new).kind is Kind.ENTITIES
    both_old = Snapshot({**fields_snap({"count": "1"}).parts, "entities": old.part("entities")})
    both_new = Snapshot({**fields_snap({"count": "2"}).parts, "entities": new.part("entities")})
    verdict = classify(both_old, both_new)
    assert verdict.kind is Kind.FIELD
    assert verdict.added and verdict.changes


def test_same_entities_in_another_order_are_none() -> None:
    old = entities_snap([("/a", {"p": "1"}), ("/b", {"p": "2"})])
    new = entities_snap([("/b?utm_source=x", {"p": "2.0"}), ("/a", {"p": 1})])
    assert classify(old, new).kind is Kind.NONE


# --- errors -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("empty", ["", "<html><body><script>app()</script></body></html>", "<p>   </p>"])
def test_empty_text_is_an_error(empty: str) -> None:
    for old in (None, snap(ARTICLE)):
        verdict = classify(old, snap(empty))
        assert verdict.kind is Kind.ERROR and verdict.kind.reported
        assert verdict.error and "empty" in verdict.error
        assert verdict.keep is None


@pytest.mark.parametrize(
    "blocked",
    [
        "<title>Access Denied</title><h1>Access Denied</h1><p>You don't have permission to access this server.</p>",
        "<h1>Attention Required! | Cloudflare</h1><p>Please complete the security check to access the site.</p>",
        "<p>Are you a robot? Please solve the CAPTCHA below.</p>",
        "<h1>Just a moment...</h1><p>Checking your browser before accessing the site.</p>",
        "<h1>429 Too Many Requests</h1>",
    ],
)
def test_blocked_page_is_an_error(blocked: str) -> None:
    for old in (None, snap(ARTICLE)):
        verdict = classify(old, snap(blocked))
        assert verdict.kind is Kind.ERROR
        assert verdict.error and verdict.error.startswith("blocked")
        assert verdict.keep is None


def test_long_article_mentioning_captcha_is_not_blocked() -> None:
    paragraphs = list(PARAGRAPHS)
    paragraphs[10] += " Many sites now ask visitors to solve a captcha, and some say access denied to robots."
    html = article_html(paragraphs)
    assert classify(None, snap(html)).kind is Kind.BASELINE
    verdict = classify(snap(ARTICLE), snap(html))
    assert verdict.kind is Kind.CONTENT
    assert verdict.diff and "captcha" in verdict.diff


def test_a_short_page_whose_baseline_says_captcha_too_is_not_blocked() -> None:
    contact = "<h1>Contact us</h1><form><p>Name</p><p>Message</p><p>Please solve the captcha below.</p></form>"
    edited = contact.replace("<p>Name</p>", "<p>Your name</p>")
    verdict = classify(snap(contact), snap(edited))
    assert verdict.kind is Kind.CONTENT and verdict.diff and "+ Your name" in verdict.diff
    # a block page is still a block page after a baseline that never said so
    assert classify(snap("<h1>Contact us</h1><p>Name</p>"), snap(contact)).kind is Kind.ERROR


def test_collapse_to_under_a_tenth_of_a_long_baseline_is_an_error() -> None:
    old = snap(ARTICLE)
    short = article_html(PARAGRAPHS[:2])
    assert len(snap(short).text or "") < 0.1 * len(old.text or "")
    verdict = classify(old, snap(short))
    assert verdict.kind is Kind.ERROR and verdict.error and verdict.error.startswith("collapsed")
    assert verdict.keep is None
    # Losing half the page is a content change, not a failure to observe it.
    assert classify(old, snap(article_html(PARAGRAPHS[:25]))).kind is Kind.CONTENT
    # The same short page is fine as a first observation.
    assert classify(None, snap(short)).kind is Kind.BASELINE


def test_tracked_field_going_missing_is_an_error() -> None:
    verdict = classify(fields_snap({"price": "89.00", "name": "Tea"}), fields_snap({"price": None, "name": "Tea"}))
    assert verdict.kind is Kind.ERROR
    assert verdict.error and "price" in verdict.error and "89.00" in verdict.error
    assert verdict.keep is None
    # A field that was never found is not "missing" now.
    assert classify(fields_snap({"price": None}), fields_snap({"price": None})).kind is Kind.NONE


def test_all_entities_missing_is_an_error_some_missing_is_a_change() -> None:
    old = entities_snap([("/a", {}), ("/b", {})])
    verdict = classify(old, entities_snap([]))
    assert verdict.kind is Kind.ERROR and verdict.error and "entities" in verdict.error
    assert verdict.keep is None
    assert classify(old, entities_snap([("/a", {})])).kind is Kind.ENTITIES
    assert classify(entities_snap([]), entities_snap([])).kind is Kind.NONE


def test_explicit_error_wins() -> None:
    old, new = snap(ARTICLE), snap(ARTICLE)
    verdict = classify(old, new, error="http: 503 Service Unavailable")
    assert verdict.kind is Kind.ERROR
    assert verdict.error == "http: 503 Service Unavailable"
    assert verdict.keep is None
    assert classify(None, new, error="timeout: 30 s").kind is Kind.ERROR


def test_kinds_that_leave_the_crawl() -> None:
    assert {k for k in Kind if k.reported} == {Kind.FIELD, Kind.ENTITIES, Kind.CONTENT, Kind.ERROR, Kind.MOVED,
                                               Kind.RECOVERED}
    assert {k for k in Kind if k.changes_page} == {Kind.FIELD, Kind.ENTITIES, Kind.CONTENT}


# --- digest: errors the region hides ------------------------------------------------------------------------

def test_digest_of_a_region_that_matches_nothing_is_an_error() -> None:
    with pytest.raises(Unobservable, match=r"div\.moved"):
        snap(ARTICLE, region="div.moved")
    assert snap(ARTICLE, region="main").text


def test_digest_sees_a_block_page_outside_the_region() -> None:
    with pytest.raises(Unobservable, match=r"^blocked"):
        snap("<h1>Access denied</h1><p>Reference #18.2f</p>", region="main article")


def test_observe_turns_an_unobservable_page_into_an_error_and_counts_it() -> None:
    obs = Observation(key="k", url="https://list.example/", html=ARTICLE, region="div.moved")
    verdict = engine.observe(obs, snap(ARTICLE), COMPARISONS)
    assert verdict.kind is Kind.ERROR and verdict.keep is None
    assert verdict.error and "div.moved" in verdict.error
    assert verdict.counters == {"content/unobservable": 1}


def test_text_snapshot_hashes_tell_raw_and_stable_apart() -> None:
    a = ContentPart.of(visible_text("<p>Updated 3 minutes ago</p><p>Body</p>"))
    b = ContentPart.of(visible_text("<p>Updated 2 hours ago</p><p>Body</p>"))
    c = ContentPart.of(visible_text("<p>Updated 2 hours ago</p><p>Body changed</p>"))
    assert a.content_hash == b.content_hash and a.raw_hash != b.raw_hash
    assert b.content_hash != c.content_hash
    assert a.fingerprint == simhash(a.text)


def test_the_diff_shows_the_page_s_own_words_case_and_punctuation() -> None:
    old = snap("<h1>News</h1><p>Mr Obama lands in Kenya.</p><p>More soon!</p>")
    new = snap("<h1>News</h1><p>UPDATED: Mr Obama lands in Kenya.</p><p>More soon!</p>")
    verdict = classify(old, new)
    assert verdict.kind is Kind.CONTENT and verdict.diff is not None
    assert verdict.diff.split("\n") == ["  News", "- Mr Obama lands in Kenya.", "+ UPDATED: Mr Obama lands in Kenya.",
                                        "  More soon!"]


def test_a_change_of_case_only_is_a_content_change() -> None:
    verdict = classify(snap("<p>Built on simdjson, fast.</p>"), snap("<p>Built on SIMDJSON, fast.</p>"))
    assert verdict.kind is Kind.CONTENT
    assert verdict.diff == "- Built on simdjson, fast.\n+ Built on SIMDJSON, fast."
