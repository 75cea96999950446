"""line_diff: changed lines with -/+ and context, capped in lines and characters."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changewatch.core import line_diff

MORE = re.compile(r"^… \((\d+) more diff lines\)$")


def test_identical_text_gives_empty_diff() -> None:
    assert line_diff("a\nb\nc", "a\nb\nc") == ""
    assert line_diff("", "") == ""


def test_changed_line_with_one_line_of_context() -> None:
    old = "\n".join(f"line {i}" for i in range(10))
    new = old.replace("line 5", "line five")
    assert line_diff(old, new).split("\n") == ["  line 4", "- line 5", "+ line five", "  line 6"]


def test_context_parameter() -> None:
    old = "\n".join(f"line {i}" for i in range(10))
    new = old.replace("line 5", "line five")
    assert line_diff(old, new, context=0).split("\n") == ["- line 5", "+ line five"]
    assert line_diff(old, new, context=2).split("\n") == [
        "  line 3", "  line 4", "- line 5", "+ line five", "  line 6", "  line 7"]


def test_separate_hunks_are_separated_by_a_marker() -> None:
    old = "\n".join(f"line {i}" for i in range(30))
    new = old.replace("line 2\n", "line two\n").replace("line 25", "line twenty-five")
    out = line_diff(old, new).split("\n")
    assert out == ["  line 1", "- line 2", "+ line two", "  line 3",
                   "@@",
                   "  line 24", "- line 25", "+ line twenty-five", "  line 26"]


def test_added_and_removed_lines() -> None:
    assert line_diff("a\nb", "a\nb\nc").split("\n") == ["  b", "+ c"]
    assert line_diff("a\nb\nc", "a\nc").split("\n") == ["  a", "- b", "  c"]
    assert line_diff("", "new page").split("\n") == ["+ new page"]
    assert line_diff("old page", "").split("\n") == ["- old page"]


def test_unchanged_lines_far_from_a_change_are_left_out() -> None:
    old = "\n".join(f"line {i}" for i in range(100))
    new = old.replace("line 50", "line fifty")
    out = line_diff(old, new)
    assert "line 10" not in out and "line 90" not in out


def test_line_cap_shares_the_lines_between_removed_and_added() -> None:
    old = "\n".join(f"old {i}" for i in range(200))
    new = "\n".join(f"new {i}" for i in range(200))
    out = line_diff(old, new, max_lines=60).split("\n")
    # 400 diff lines in all (200 removed, 200 added): 59 shown, each side's first ones, the rest counted.
    assert len(out) == 60
    assert out[:30] == [f"- old {i}" for i in range(30)]
    assert out[30:59] == [f"+ new {i}" for i in range(29)]
    assert out[-1] == "… (341 more diff lines)"


def test_default_caps_apply() -> None:
    old = "\n".join(f"old {i}" for i in range(1000))
    new = "\n".join(f"new {i}" for i in range(1000))
    out = line_diff(old, new)
    assert len(out) <= 4000
    assert len(out.split("\n")) <= 60
    assert MORE.match(out.split("\n")[-1])


def test_char_cap_shares_the_characters_between_removed_and_added() -> None:
    old = "\n".join(f"{i:03d} " + "x" * 96 for i in range(50))
    new = "\n".join(f"{i:03d} " + "y" * 96 for i in range(50))
    text = line_diff(old, new, max_chars=1000, max_lines=1000)
    assert len(text) <= 1000
    out = text.split("\n")
    body, marker = out[:-1], out[-1]
    # each shown line is 102 characters plus its newline, the marker 23: 9 lines fit
    assert [line[:6] for line in body] == ["- 000 ", "- 001 ", "- 002 ", "- 003 ", "- 004 ",
                                           "+ 000 ", "+ 001 ", "+ 002 ", "+ 003 "]
    assert marker == f"… ({100 - len(body)} more diff lines)"


BLOCK_OLD = ["Terms of service"] + [f"Clause {i}: " + "the provider may change these terms at any time; " * 5
                                    for i in range(40)] + ["Contact us"]
BLOCK_NEW = BLOCK_OLD[:1] + [f"Clause {i}: " + "the provider will not change these terms without notice; " * 5
                             for i in range(40)] + BLOCK_OLD[-1:]


def test_an_edited_40_line_block_of_long_lines_shows_its_new_text() -> None:
    text = line_diff("\n".join(BLOCK_OLD), "\n".join(BLOCK_NEW))
    assert len(text) <= 4000
    out = text.split("\n")
    assert len(out) <= 60
    removed = [line for line in out if line.startswith("- ")]
    added = [line for line in out if line.startswith("+ ")]
    assert removed == [f"- {line}" for line in BLOCK_OLD[1:1 + len(removed)]]
    assert added == [f"+ {line}" for line in BLOCK_NEW[1:1 + len(added)]]  # the page's own words, in order
    assert len(added) >= 5 and len(removed) - len(added) in (0, 1)
    assert out[0] == "  Terms of service" and out[-1] == "  Contact us"
    assert out[-2] == f"… ({80 - len(removed) - len(added)} more diff lines)"  # right after the cut passage


def test_the_same_block_with_lines_past_the_line_limit() -> None:
    old, new = ([line * 3 for line in block] for block in (BLOCK_OLD, BLOCK_NEW))
    out = line_diff("\n".join(old), "\n".join(new), max_line_chars=300).split("\n")
    assert len("\n".join(out)) <= 4000
    added = [line for line in out if line.startswith("+ ")]
    assert len(added) >= 5 and all(len(line) <= 302 and line.endswith("…") for line in added)
    assert "will not change" in added[0]


def test_every_hunk_shown_shares_the_lines() -> None:
    old = BLOCK_OLD + [f"filler {i}" for i in range(20)] + ["Price: 10 EUR", "end"]
    new = BLOCK_NEW + [f"filler {i}" for i in range(20)] + ["Price: 12 EUR", "end"]
    out = line_diff("\n".join(old), "\n".join(new)).split("\n")
    assert "@@" in out
    assert out[out.index("@@"):] == ["@@", "  filler 19", "- Price: 10 EUR", "+ Price: 12 EUR", "  end"]
    assert sum(line.startswith("+ Clause") for line in out) >= 5


def test_too_many_hunks_show_the_first_ones_whole_and_count_the_rest() -> None:
    old = [f"line {i}" for i in range(300)]
    new = [f"LINE {i}" if i % 10 == 0 else line for i, line in enumerate(old)]
    out = line_diff("\n".join(old), "\n".join(new), max_lines=30).split("\n")
    # hunk 0 is 3 lines, every other one 4 and its "@@": 6 hunks whole, the 24 others counted
    assert out[:7] == ["- line 0", "+ LINE 0", "  line 1", "@@", "  line 9", "- line 10", "+ LINE 10"]
    assert [MORE.match(line) is not None for line in out].count(True) == 1
    # 148 lines in all (3, then 29 times 5), 28 shown; a 7th hunk even cut would not fit (3 lines and a marker)
    assert len(out) == 29 and out[-2:] == ["  line 51", "… (120 more diff lines)"]


def test_caps_too_small_for_any_line_give_the_marker_alone() -> None:
    assert line_diff("a\nb", "A\nB", max_lines=0) == "… (4 more diff lines)"
    assert line_diff("a" * 50, "b" * 50, max_chars=30) == "… (2 more diff lines)"
    # room for one line: the new text's
    assert line_diff("a" * 50, "b" * 50, max_chars=80) == "+ " + "b" * 50 + "\n… (1 more diff lines)"


def test_long_lines_are_truncated() -> None:
    long_old = "a" * 1000
    long_new = "b" * 1000
    out = line_diff(long_old, long_new, max_line_chars=300).split("\n")
    assert out == ["- " + "a" * 299 + "…", "+ " + "b" * 299 + "…"]
    out = line_diff("short\n" + long_old, "short\n" + long_new, max_line_chars=50).split("\n")
    assert all(len(line) <= 52 for line in out)


def test_lines_at_the_limit_are_not_truncated() -> None:
    out = line_diff("a" * 300, "b" * 300, max_line_chars=300).split("\n")
    assert out == ["- " + "a" * 300, "+ " + "b" * 300]


@pytest.mark.parametrize("max_lines", [2, 5, 60])
def test_no_marker_when_everything_fits(max_lines: int) -> None:
    out = line_diff("a", "b", max_lines=max_lines)
    assert "more diff lines" not in out


UNCAPPED = {"max_lines": 10**9, "max_chars": 10**12}


def _hunks(text: str) -> list[list[str]]:
    return [hunk.split("\n") for hunk in text.split("\n@@\n")] if text else []


def _is_subsequence(part: list[str], whole: list[str]) -> bool:
    rest = iter(whole)
    return all(line in rest for line in part)


words = st.sampled_from(["alpha", "beta", "gamma", "delta", "Beta.", "", "x" * 400])


@settings(max_examples=150, deadline=None)
@given(st.lists(words, max_size=50), st.lists(st.tuples(st.integers(0, 50), st.lists(words, max_size=6)), max_size=8),
       st.integers(0, 2), st.integers(0, 40), st.integers(20, 3000))
def test_a_capped_diff_fits_shows_true_lines_in_order_and_the_new_text_of_every_hunk(
        old: list[str], edits: list[tuple[int, list[str]]], context: int, max_lines: int, max_chars: int) -> None:
    new = list(old)
    for at, lines in edits:  # replace a few lines here and there by others: several hunks
        new[at:at + len(lines) // 2] = lines
    old_text, new_text = "\n".join(old), "\n".join(new)
    whole = line_diff(old_text, new_text, context=context, max_line_chars=100, **UNCAPPED)
    text = line_diff(old_text, new_text, context=context, max_lines=max_lines, max_chars=max_chars,
                     max_line_chars=100)
    full = [line for hunk in _hunks(whole) for line in ["@@", *hunk]][1:]
    # the uncapped diff's lines are true lines of old and new, in order (clipped ones end with …)
    for sign, source in (("- ", old_text), ("+ ", new_text)):
        shown = [line[2:] for line in full if line.startswith(sign)]
        assert _is_subsequence([line for line in shown if not line.endswith("…")], source.splitlines())
    if not whole:
        assert text == "" and old_text.splitlines() == new_text.splitlines()
        return
    out = text.split("\n")
    counted = [int(m.group(1)) for m in map(MORE.match, out) if m]
    assert len(out) - len(counted) + sum(counted) == len(full)  # every line shown or counted
    if out == [f"… ({len(full)} more diff lines)"]:  # caps too small for any line
        assert max_lines < 2 or max_chars < 102 + 1 + 27  # a first added line and a marker
        return
    assert len(out) <= max_lines and len(text) <= max_chars
    if not counted:
        assert text == whole
    for shown, hunk in zip(_hunks(text), _hunks(whole), strict=False):
        lines = [line for line in shown if not MORE.match(line)]
        assert lines and _is_subsequence(lines, hunk)
        if any(line.startswith("+ ") for line in hunk):
            assert any(line.startswith("+ ") for line in lines)
        assert all(line[:2] in ("- ", "+ ", "  ") and len(line) <= 102 for line in lines)
        assert not any(MORE.match(a) and MORE.match(b) for a, b in itertools.pairwise(shown))


def test_a_change_deep_in_a_long_line_is_shown() -> None:
    # A paragraph is one line: an edit past the cut must still be visible in the diff.
    prefix = " ".join(f"word{i}" for i in range(200))
    old, new = prefix + " the old ending", prefix + " the new ending"
    out = line_diff(old, new, max_line_chars=300).split("\n")
    assert len(out) == 2
    minus, plus = out
    assert minus.startswith("- …") and "old ending" in minus
    assert plus.startswith("+ …") and "new ending" in plus
    assert len(minus) <= 302 and len(plus) <= 302


def test_a_change_in_the_middle_of_a_long_line_is_shown_with_both_ends_cut() -> None:
    left = " ".join(f"left{i}" for i in range(200))
    right = " ".join(f"right{i}" for i in range(200))
    out = line_diff(f"{left} alpha {right}", f"{left} omega {right}", max_line_chars=200).split("\n")
    assert [line[:3] for line in out] == ["- …", "+ …"]
    assert "alpha" in out[0] and "omega" in out[1]
    assert out[0].endswith("…") and out[1].endswith("…")
    assert all(len(line) <= 202 for line in out)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="ab ", min_size=0, max_size=1500), st.text(alphabet="ab ", max_size=50),
       st.text(alphabet="cd ", min_size=1, max_size=50), st.integers(20, 400))
def test_a_changed_line_always_shows_a_difference(common: str, tail_a: str, tail_b: str, limit: int) -> None:
    old, new = (common + tail_a).strip() or "x", (common + tail_b).strip() or "y"
    if old == new:
        return
    out = line_diff(old, new, max_line_chars=limit).split("\n")
    minus = [line for line in out if line.startswith("- ")]
    plus = [line for line in out if line.startswith("+ ")]
    assert len(minus) == len(plus) == 1
    assert minus[0][2:] != plus[0][2:]
    assert len(minus[0]) <= limit + 2 and len(plus[0]) <= limit + 2
