"""Slots on busy real pages (tests/core/_busy.py): after five calibration loads, at most 2% of
noise-only observations alert, and at least 99% of real edits are reported, each diff showing
only the change."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.comparisons.noise import CALIBRATION
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.text.decoding import decode_page
from changewatch.core.verdict import Verdict, observe

from ._busy import BusyPage, edits
from ._support import CORPUS_PAGES, CORPUS_SKIP_REASON, corpus_files

PAGES = 12
NOISE_RUNS = 25  # per page: 300 noise-only observations in all


def _observe(html: str, old: Snapshot | None, calibration: bool = False) -> Verdict:
    options = {CALIBRATION: True} if calibration else {}
    obs = Observation("k", "https://example.com/page", html=html, options=dict(options))
    return observe(obs, old, load_comparisons(), context=CompareContext(options=options))


def _pages() -> list[BusyPage]:
    found = []
    for path in corpus_files("article"):
        page = BusyPage.of(decode_page(Path(path).read_bytes()))
        if page is not None:
            found.append(page)
    return found[:PAGES]


def _calibrated(page: BusyPage) -> Snapshot:
    snapshot = _observe(page.load(0), None).keep
    assert snapshot is not None
    for n in range(1, 6):
        verdict = _observe(page.load(n), snapshot, calibration=True)
        assert verdict.kind is Kind.NONE, verdict
        snapshot = verdict.keep or snapshot
    return snapshot


def _shows_only(diff: str, removed: str, added: str) -> bool:
    """Whether *diff* shows the edit and nothing else: one line holding *removed* gone (none if
    empty), one holding *added* come (none if empty)."""
    minus = [row[2:] for row in diff.split("\n") if row.startswith("- ")]
    plus = [row[2:] for row in diff.split("\n") if row.startswith("+ ")]
    return (len(minus) == int(bool(removed)) and all(removed in row for row in minus)
            and len(plus) == int(bool(added)) and all(added in row for row in plus))


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS_PAGES.is_dir(), reason=CORPUS_SKIP_REASON)
def test_busy_pages_are_quiet_after_calibration_and_real_edits_still_show() -> None:
    pages = _pages()
    assert len(pages) >= 8, "too few corpus articles with four long paragraphs"
    observations = alerts = 0
    reported, total, failures = 0, 0, []
    rng = random.Random(5)
    for p, page in enumerate(pages):
        snapshot = _calibrated(page)
        for n in range(6, 6 + NOISE_RUNS):
            verdict = _observe(page.load(n), snapshot)
            observations += 1
            if verdict.kind is Kind.CONTENT:
                alerts += 1
                failures.append(("noise", p, n, (verdict.diff or "")[:300]))
            snapshot = verdict.keep or snapshot
        assert snapshot.text is not None
        for edit in edits(page, snapshot.text, rng):
            verdict = _observe(page.load(100, edit.html), snapshot)
            total += 1
            diff = verdict.diff or ""
            if verdict.kind is Kind.CONTENT and _shows_only(diff, edit.removed, edit.added):
                reported += 1
            else:
                failures.append((edit.kind, p, verdict.kind, diff[:400]))
    assert observations >= 250 and total >= 40
    assert alerts <= 0.02 * observations, failures
    assert reported >= 0.99 * total, failures
