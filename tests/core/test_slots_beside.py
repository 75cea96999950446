"""Text added inside a box's slot (core/strays.py): a "Trending now" box of five headlines drawn
from 300 on every load is learned as a slot of fixed size (by ``-a calibrate`` loads, or by
confirmations alone). A paragraph added right after the box's heading, after its last item, or
as a line among its items is not the box's: it is reported at once (the run's load and its
confirmation both show it), with only its words, and the box stays quiet after it. Text added
right outside the slot's anchors is reported as any edit is. A block that some loads show and
others lack inside the box's region (no fixed size, then) stays quiet."""

from __future__ import annotations

import random
from typing import Any

import pytest

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.comparisons.content_part import ContentPart
from changewatch.core.comparisons.noise import CALIBRATION
from changewatch.core.confirm import Loads, baseline_loads, judge_loads
from changewatch.core.learned import between_loads
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.verdict import Verdict, classify, digest

from ._support import prose_paragraphs

COMPARISONS = load_comparisons()
PARAGRAPHS = prose_paragraphs(1200, 12, seed=3)
HEADLINES = [" ".join(random.Random(n).sample(PARAGRAPHS[0].split(), 6)).capitalize() for n in range(300)]
PROSE = " ".join(prose_paragraphs(200, 60, seed=21)[1].split()[:45]).capitalize() + "."
SENTENCE = " ".join(prose_paragraphs(200, 60, seed=22)[1].split()[:16]).capitalize() + "."
SHORT = "Doors open at seven tonight."  # as short as a headline


def page(n: int, where: str = "", text: str = PROSE, signup: bool = False) -> str:
    """Load *n*: the box's five headlines drawn afresh; *text* a paragraph of its own *where*:
    ``heading`` (right after the box's heading), ``last`` (after its last item), ``among`` (a
    line among its items), ``above`` (before its heading), ``below`` (after the line after it)."""
    items = [f"<li>{h}</li>" for h in random.Random(n).sample(HEADLINES, 5)]
    if where == "among":
        items.insert(2, f"<li>{text}</li>")
    if signup:
        items.insert(1, "<li>Sign up for our newsletter</li>")
    add = f"<p>{text}</p>"
    body = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    return ("<html><body><h1>Town news</h1><main>" + body + "</main><aside>"
            + (add if where == "above" else "") + "<h2>Trending now</h2>" + (add if where == "heading" else "")
            + "<ul>" + "".join(items) + "</ul>" + (add if where == "last" else "")
            + "<p>More stories below</p>" + (add if where == "below" else "") + "</aside></body></html>")


def obs(html: str, **kw: Any) -> Observation:
    return Observation("k", "https://news.example/", html=html, **kw)


def run(stored: Snapshot, n: int, **kw: Any) -> tuple[Snapshot, Verdict]:
    """A run's verdict, a candidate confirmed by a second load; the snapshot committed after it."""
    first = digest(obs(page(n, **kw)), COMPARISONS)
    verdict = classify(stored, first, COMPARISONS)
    if verdict.kind.changes_page:
        second = digest(obs(page(n + 1, **kw)), COMPARISONS)
        verdict = judge_loads(Loads(stored, first, second), COMPARISONS, CompareContext())
    return verdict.keep or stored, verdict


def life(calibration: int, runs: int = 6, **kw: Any) -> Snapshot:
    """A key's baseline (two loads), *calibration* loads, then *runs* runs: none alerts."""
    stored = baseline_loads(obs(page(0, **kw)), obs(page(1, **kw)), COMPARISONS).keep
    assert stored is not None
    options = {CALIBRATION: True}
    for n in range(50, 50 + calibration):
        load = digest(obs(page(n, **kw), options=options), COMPARISONS)
        stored = classify(stored, load, COMPARISONS, context=CompareContext(options=options)).keep or stored
    for n in range(100, 100 + 2 * runs, 2):
        stored, verdict = run(stored, n, **kw)
        assert not verdict.kind.reported, verdict.members
    return stored


def changed(verdict: Verdict) -> list[str]:
    diff = str(verdict.members.get("diff") or "")
    return [line for line in diff.split("\n") if line[:1] in "+-"]


@pytest.mark.parametrize("calibration", [5, 0])
@pytest.mark.parametrize("where", ["heading", "last", "among", "above", "below"])
@pytest.mark.parametrize("text", [PROSE, SENTENCE, SHORT], ids=["paragraph", "sentence", "short"])
def test_text_added_in_or_next_to_the_box_is_reported_at_once_and_alone(calibration: int, where: str,
                                                                         text: str) -> None:
    stored = life(calibration)
    slots = stored.part("content").learned.slots  # type: ignore[union-attr]
    assert [(s.labels, s.most, s.least) for s in slots] == [(("Trending now", "More stories below"), 5, 5)]
    stored, verdict = run(stored, 500, where=where, text=text)
    assert verdict.kind is Kind.CONTENT
    lines = changed(verdict)
    assert len(lines) == 1 and lines[0].startswith("+ ") and text.startswith(lines[0][2:].rstrip("…")), lines
    for n in range(502, 522, 2):  # then the box rotates on, the text stays: quiet
        stored, verdict = run(stored, n, where=where, text=text)
        assert not verdict.kind.reported, (n, verdict.members)


@pytest.mark.parametrize("calibration", [5, 0])
def test_a_paragraph_among_the_items_edited_later_is_reported(calibration: int) -> None:
    stored, _ = run(life(calibration), 500, where="among")
    stored, _ = run(stored, 502, where="among")
    edited = PROSE.replace(PROSE.split()[3], "zebrafish")
    stored, verdict = run(stored, 504, where="among", text=edited)
    assert verdict.kind is Kind.CONTENT
    assert any("zebrafish" in line for line in changed(verdict) if line.startswith("+"))
    assert not any(h in "\n".join(changed(verdict)) for h in HEADLINES)


@pytest.mark.parametrize("calibration", [5, 0])
def test_a_block_some_loads_show_in_the_box_stays_quiet(calibration: int) -> None:
    """A "Sign up" line after the box's items on some loads only: two loads of the same content
    that hold different numbers of lines there say the box is of no fixed size."""
    rng = random.Random(5)
    stored = baseline_loads(obs(page(0)), obs(page(1, signup=True)), COMPARISONS).keep
    assert stored is not None
    options = {CALIBRATION: True}
    for n in range(50, 50 + calibration):
        load = digest(obs(page(n, signup=rng.random() < 0.5), options=options), COMPARISONS)
        stored = classify(stored, load, COMPARISONS, context=CompareContext(options=options)).keep or stored
    alerts = 0
    for n in range(100, 160, 2):
        signup = rng.random() < 0.5
        first = digest(obs(page(n, signup=signup)), COMPARISONS)
        verdict = classify(stored, first, COMPARISONS)
        if verdict.kind.changes_page:
            second = digest(obs(page(n + 1, signup=rng.random() < 0.5)), COMPARISONS)
            verdict = judge_loads(Loads(stored, first, second), COMPARISONS, CompareContext())
        alerts += verdict.kind.reported
        stored = verdict.keep or stored
    assert alerts <= 1  # at most once: both loads show it before it was ever seen to come and go


def text(html: str) -> str:
    part = digest(obs(html), COMPARISONS).part("content")
    assert isinstance(part, ContentPart)
    return part.text


def test_two_loads_that_hold_different_numbers_of_lines_in_the_box_say_it_has_no_fixed_size() -> None:
    learned = life(5).part("content").learned  # type: ignore[union-attr]
    assert learned is not None
    taught = between_loads(learned, text(page(600)), text(page(601, signup=True)))
    assert [(s.most, s.least) for s in taught.slots if not s.provisional] == [(6, 5)]
    # two loads that both show a paragraph in it: as many lines in both, of the box's size still
    taught = between_loads(learned, text(page(600, where="last")), text(page(601, where="last")))
    assert [(s.most, s.least) for s in taught.slots if not s.provisional] == [(5, 5)]
