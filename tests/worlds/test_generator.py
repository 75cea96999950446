"""The test web itself (tests/worlds/busy.py, edits.py): deterministic, as busy as it claims, quiet
where it claims, and every edit lands in the page's own text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from .busy import CORPUS, load, noise_lines, own_lines, visible, world
from .edits import OPERATORS, edit
from .harness import only_own_lines
from .vocab import headline_pool

T0 = datetime(2026, 12, 5, 14, 0, tzinfo=UTC)
PAGES = world(4)
needs_corpus = pytest.mark.skipif(not PAGES, reason=f"real-page corpus not found at {CORPUS}")


@needs_corpus
def test_loads_are_deterministic_and_differ_from_load_to_load() -> None:
    page = PAGES[0]
    assert load(page, 3, T0) == load(page, 3, T0)
    assert load(page, 3, T0) != load(page, 4, T0)


@needs_corpus
def test_trending_headlines_are_almost_all_new_on_each_load() -> None:
    page, pool = PAGES[0], set(headline_pool(PAGES[0].seed))
    seen: set[str] = set()
    repeated = total = 0
    for n in range(20):
        shown = noise_lines(page, n, T0 + timedelta(hours=n)) & pool
        assert len(shown) == 5
        repeated += len(shown & seen)
        total += len(shown)
        seen |= shown
    assert repeated / total < 0.1, repeated


@needs_corpus
def test_quiet_pages_show_no_furniture_and_clock_pages_only_a_clock() -> None:
    quiet, clock = PAGES[1].as_kind("quiet"), PAGES[1].as_kind("clock")
    for n in range(3):
        assert noise_lines(quiet, n, T0 + timedelta(minutes=n)) == set()
        assert load(quiet, n, T0) != load(quiet, n + 1, T0)  # invisible churn: nonce, pixel, classes
        assert all("Updated" in line for line in noise_lines(clock, n, T0))


@needs_corpus
def test_the_clock_tracks_the_fetch_time_in_the_pages_offset() -> None:
    page = PAGES[0]
    at = T0 + timedelta(minutes=77)
    local = at + timedelta(minutes=page.offset)
    assert f"· {local:%H:%M}".encode() in load(page, 1, at)


@needs_corpus
@pytest.mark.parametrize("what", list(OPERATORS))
def test_every_edit_changes_the_pages_own_text(what: str) -> None:
    applied = 0
    for page in PAGES:
        change = edit(page, what)
        if change is None:
            continue
        applied += 1
        before, after = visible(load(page, 0, T0).decode()), visible(load(change.page, 0, T0).decode())
        assert before != after
        for text in change.removed:
            assert text in before or text in page.notice
        for text in change.added:
            assert text in after
    assert applied >= len(PAGES) // 2, what


@needs_corpus
def test_a_diff_is_clean_only_when_each_changed_line_is_the_pages_own_or_a_clipped_part_of_one() -> None:
    page = PAGES[0]
    change = edit(page, "word")
    assert change is not None
    (old,), (new,) = change.removed, change.added
    paragraph = next(line for line in own_lines(change.page) if new in line)
    before = paragraph.replace(new, old)
    assert only_own_lines(f"- {before}\n+ {paragraph}", change, page)[0]
    assert only_own_lines(f"- …{before[5:45]}…\n+ …{paragraph[5:45]}…", change, page)[0]  # clipped
    # a furniture line is not clean, even where its words happen to be a part of a paragraph
    word = next(w for w in paragraph.split() if len(w) >= 4)
    assert not only_own_lines(f"- {before}\n+ {paragraph}\n- {word}", change, page)[0]
    assert not only_own_lines(f"- {before}\n+ {paragraph}\n+ Sign up for our newsletter", change, page)[0]
