"""A place that flips back (core/learned_flips.py): two-state furniture is quiet from its second
flip on, and an edit that is reverted is still reported (late by one run, never lost)."""

from __future__ import annotations

from changewatch.core.comparisons import load_comparisons
from changewatch.core.confirm import Loads, judge_loads
from changewatch.core.learned import Learned, changed_lines, judge
from changewatch.core.learned_flips import returns
from changewatch.core.learned_state import MAX_FLIPS

from .test_learned import STABLE, text

A, B = "Subscribe today: your first month is free", "Join 40,000 readers who get our morning brief"


def _reported(old: str, new: str, learned: Learned | None) -> tuple[bool, Learned]:
    learning = judge(old, new, learned)
    return bool(learning.remaining), learning.learned


def test_an_ab_teaser_is_reported_once_then_quiet_however_it_flips() -> None:
    stored, learned = text(A), Learned(calibrated=1)
    reported, learned = _reported(stored, text(B), learned)
    assert reported  # its first flip: nothing tells it from an edit
    stored = text(B)
    seen = []
    for variant in (A, B, A, A, B, B, A):
        reported, learned = _reported(stored, text(variant), learned)
        seen.append(reported)
    assert seen == [False] * 7, seen  # held on the flip back; B again: it varies, a slot from then on


def test_a_block_present_on_some_loads_is_quiet_once_it_came_back() -> None:
    with_block, without = text("Sign up for our newsletter"), text()
    reported, learned = _reported(with_block, without, Learned(calibrated=1))
    assert reported
    for page in (with_block, without, with_block, without):
        reported, learned = _reported(without, page, learned)
        assert not reported


def test_an_edit_reverted_is_reported_by_the_next_run() -> None:
    stored, learned = text("Price: 89 EUR"), Learned(calibrated=1)
    reported, learned = _reported(stored, text("Price: 79 EUR"), learned)
    assert reported
    stored = text("Price: 79 EUR")
    back = judge(stored, text("Price: 89 EUR"), learned)
    assert not back.remaining and back.learned.provisional  # held: it may be an A/B variant
    # not: the next run still shows 89 (it stayed put): the revert is reported then, from 79
    later = judge(stored, text("Price: 89 EUR"), back.learned)
    assert [(h.removed, h.added) for h in later.remaining] == [(("Price: 79 EUR",), ("Price: 89 EUR",))]
    assert not later.known_variant  # a text seen before, yet a change: not noise as a recent variant
    assert "Price: 79 EUR" in later.shown_from and not later.learned.provisional


def test_a_third_value_is_a_change_at_once() -> None:
    reported, learned = _reported(text("Price: 89 EUR"), text("Price: 79 EUR"), Learned(calibrated=1))
    reported, learned = _reported(text("Price: 79 EUR"), text("Price: 69 EUR"), learned)
    assert reported  # a value never shown before is no flip back
    assert not returns(["Price: 79 EUR"], ["Price: 59 EUR"], learned.flips)


def test_a_confirmed_first_change_notes_its_lines_so_the_flip_back_is_known() -> None:
    learned = changed_lines(None, text(A), text(B))
    assert returns([B], [A], learned.flips) and not returns([A], [B], learned.flips)


def test_the_lines_noted_are_bounded_and_survive_the_store() -> None:
    learned: Learned | None = None
    for i in range(MAX_FLIPS):
        learned = changed_lines(learned, text(f"line {i}"), text(f"line {i + 1}"))
    assert learned is not None and len(learned.flips) <= MAX_FLIPS
    assert Learned.decode(learned.encode()) == learned


def test_a_confirmed_flip_back_is_quiet_in_the_two_loads_judgement() -> None:
    from changewatch.core.comparisons import load_comparisons
    from changewatch.core.observation import Observation
    from changewatch.core.verdict import digest

    comparisons = load_comparisons()

    def snap(line: str, learned: Learned | None = None):  # type: ignore[no-untyped-def]
        html = "<p>" + "</p><p>".join(text(line).split("\n")) + "</p>"
        snapshot = digest(Observation("k", "https://flip.test/", html=html), comparisons)
        if learned is not None:
            part = snapshot.part("content")
            snapshot = type(snapshot)({**snapshot.parts, "content": part.with_learned(learned)}, snapshot.foreign)
        return snapshot

    first = judge_loads(Loads(snap(A), snap(B), snap(B)), comparisons)
    assert first.kind.reported  # both loads show the teaser's other text: reported once
    learned = first.keep.part("content").learned  # type: ignore[union-attr]
    back = judge_loads(Loads(snap(B, learned), snap(A), snap(A)), comparisons)
    assert not back.kind.reported, back.members


def test_a_key_that_keeps_flipping_begins_a_streak_once_and_ends_it_when_it_stops() -> None:
    # an A/B test whose servers answer the one text for two runs, then the other: each return is
    # held, then reported when it stays; the third return within eight changes begins the streak
    from changewatch.core.comparisons import Kind
    from changewatch.core.verdict import classify

    comparisons = load_comparisons()
    stored = _snapshot(comparisons, A)
    events = []
    for n, line in enumerate([A, B, B, A, A, B, B, A, A, B, B, *[B] * 9]):
        page = _snapshot(comparisons, line)
        verdict = classify(stored, page, comparisons)
        if verdict.kind.changes_page:  # confirmed by a second load alike
            verdict = judge_loads(Loads(stored, page, page), comparisons)
        events += [(n, name) for name in verdict.counters if name.startswith("content/flipping_")]
        if verdict.keep is not None and verdict.kind is not Kind.ERROR:
            stored = verdict.keep
    began = [n for n, name in events if name.endswith("began")]
    over = [n for n, name in events if name.endswith("over")]
    assert len(began) == 1 and len(over) == 1 and began[0] < over[0], events


def _snapshot(comparisons, line: str):  # type: ignore[no-untyped-def]
    from changewatch.core.observation import Observation
    from changewatch.core.verdict import digest

    html = "<p>" + "</p><p>".join(text(line).split("\n")) + "</p>"
    return digest(Observation("k", "https://flip.test/", html=html), comparisons)


def test_a_flip_back_in_a_run_that_changed_elsewhere_is_reported_with_that_change() -> None:
    # the run is kept as a version, the flip with it: nothing is held past a version, and the
    # next run judges the place from that version's text
    stored, learned = text(A, "Price: 89 EUR"), Learned(calibrated=1)
    reported, learned = _reported(stored, text(B, "Price: 89 EUR"), learned)
    assert reported
    stored, new = text(B, "Price: 89 EUR"), text(A, "Price: 79 EUR")
    both = judge(stored, new, learned)
    assert [(h.removed, h.added) for h in both.remaining] == [((B, "Price: 89 EUR"), (A, "Price: 79 EUR"))]
    assert not both.held and not both.learned.provisional
    later = judge(new, new, both.learned)  # the version's text again: nothing to report
    assert not later.remaining


def test_a_flip_back_while_a_field_changed_is_not_held_past_the_version_the_field_keeps() -> None:
    from changewatch.core.comparisons import CompareContext, Kind
    from changewatch.core.observation import Observation
    from changewatch.core.verdict import observe

    comparisons = load_comparisons()

    def page(line: str, price: str) -> Observation:
        html = "<p>" + "</p><p>".join(text(line).split("\n")) + f"</p><span>{price}</span>"
        return Observation("k", "https://flip.test/", html=html, fields={"price": price})

    stored = observe(page(A, "10"), None, comparisons).keep
    assert stored is not None and stored.part("content") is not None
    part = stored.part("content")
    stored = type(stored)({**stored.parts, "content": part.with_learned(Learned(calibrated=1))}, stored.foreign)
    for line, price, kind in ((B, "10", Kind.CONTENT), (A, "12", Kind.FIELD)):
        verdict = observe(page(line, price), stored, comparisons, context=CompareContext())
        assert verdict.kind is kind and verdict.keep is not None, verdict
        stored = verdict.keep
    # the field's version keeps the page with A, and no provisional slot whose "before" is B
    assert "Subscribe" in (stored.text or "") and not stored.part("content").learned.provisional  # type: ignore[union-attr]
    again = observe(page(A, "12"), stored, comparisons, context=CompareContext())
    assert again.kind is Kind.NONE, again


def test_a_flip_back_confirmed_with_an_edit_is_in_the_edit_s_diff() -> None:
    # the edit is reported, and the page kept as a version: the teaser's flip back is part of its
    # change, shown in its diff, not held past it
    comparisons = load_comparisons()
    stable = [*STABLE, "Opening hours", "Find us on the map"]

    def snap(line: str, last: str = stable[-1]):  # type: ignore[no-untyped-def]
        lines = text(line, stable=[*stable[:-1], last]).split("\n")
        return _digest(comparisons, "<p>" + "</p><p>".join(lines) + "</p>")

    stored = judge_loads(Loads(snap(A), snap(B), snap(B)), comparisons).keep  # B: reported, confirmed
    assert stored is not None
    edited = snap(A, "Find us by the harbour")
    both = judge_loads(Loads(stored, edited, edited), comparisons)
    diff = str(both.members.get("diff"))
    assert both.kind.reported and f"- {B}" in diff and "+ Subscribe" in diff, diff
    assert "+ Find us by the harbour" in diff, diff
    assert both.keep is not None and not both.keep.part("content").learned.provisional  # type: ignore[union-attr]
    quiet = judge_loads(Loads(stored, snap(A), snap(A)), comparisons)
    assert not quiet.kind.reported  # the flip back alone: held


def _digest(comparisons, html: str):  # type: ignore[no-untyped-def]
    from changewatch.core.observation import Observation
    from changewatch.core.verdict import digest

    return digest(Observation("k", "https://flip.test/", html=html), comparisons)
