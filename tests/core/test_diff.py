"""line_diff: changed lines with -/+ and context, capped in lines and characters."""

from __future__ import annotations

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


def test_line_cap_with_more_marker() -> None:
    old = "\n".join(f"old {i}" for i in range(200))
    new = "\n".join(f"new {i}" for i in range(200))
    out = line_diff(old, new, max_lines=60).split("\n")
    # 400 diff lines in all (200 removed, 200 added): 60 shown, the rest counted.
    assert len(out) == 61
    assert out[:3] == ["- old 0", "- old 1", "- old 2"]
    assert MORE.match(out[-1]) and out[-1] == "… (340 more diff lines)"


def test_default_caps_apply() -> None:
    old = "\n".join(f"old {i}" for i in range(1000))
    new = "\n".join(f"new {i}" for i in range(1000))
    out = line_diff(old, new)
    assert len(out) <= 4000 + 40
    assert len(out.split("\n")) <= 61
    assert MORE.match(out.split("\n")[-1])


def test_char_cap_with_more_marker() -> None:
    old = "\n".join(f"{i:03d} " + "x" * 96 for i in range(50))
    new = "\n".join(f"{i:03d} " + "y" * 96 for i in range(50))
    out = line_diff(old, new, max_chars=1000, max_lines=1000).split("\n")
    body, marker = out[:-1], out[-1]
    assert sum(len(line) + 1 for line in body) <= 1000
    assert len(body) == 1000 // 103  # each shown line is 102 characters plus its newline
    shown = int(MORE.match(marker).group(1))  # type: ignore[union-attr]
    assert shown == 100 - len(body)


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


lines = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "x" * 400, ""]), max_size=40)


@settings(max_examples=80, deadline=None)
@given(lines, lines, st.integers(1, 30), st.integers(50, 2000))
def test_caps_always_hold(old: list[str], new: list[str], max_lines: int, max_chars: int) -> None:
    out = line_diff("\n".join(old), "\n".join(new), max_lines=max_lines, max_chars=max_chars, max_line_chars=100)
    if not out:
        assert "\n".join(old).splitlines() == "\n".join(new).splitlines()
        return
    shown = out.split("\n")
    if MORE.match(shown[-1]):
        shown = shown[:-1]
    assert len(shown) <= max_lines
    assert sum(len(line) + 1 for line in shown) <= max_chars
    for line in shown:
        assert line == "@@" or line[:2] in ("- ", "+ ", "  ")
        assert len(line) <= 102
    removed = [line[2:] for line in shown if line.startswith("- ")]
    added = [line[2:] for line in shown if line.startswith("+ ")]
    assert all(r in old or r.endswith("…") for r in removed)
    assert all(a in new or a.endswith("…") for a in added)


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
