"""Capped line diff of normalised text.

A diff longer than its caps is shared out rather than cut from the top: the hunks are taken in
order while each fits with its unchanged lines and a line of each of its removed and added runs
(the first hunk that does not fit so is shown by its first removed and first added lines, or its
first added line alone, when those fit; the hunks after it are counted), then the lines left are
dealt out one at a time to every run of the hunks shown, so an edit of a long block shows its
first removed lines *and* its first added ones. A ``… (N more diff lines)`` line stands where
lines are left out: after a passage (removed lines and the added ones after them) shown in part,
before a line shown after lines left out, and at the end; N counts the lines left out since the
marker before it, so the lines shown and the markers add up to the whole diff."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["DiffOptions", "line_diff"]


@dataclass(frozen=True, slots=True)
class DiffOptions:
    """How much of a content change's diff a record shows (CHANGEWATCH_DIFF_CONTEXT, _MAX_LINES)."""

    context: int = 1
    max_lines: int = 60
    max_chars: int = 4000


def _common_prefix(a: str, b: str) -> int:
    n, i = min(len(a), len(b)), 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _clip_starts(lines: list[str], max_line_chars: int) -> dict[int, int]:
    """Where to start showing each long changed line: a replaced line is shown from a little
    before its first difference with its counterpart, or a change past the cut would not show."""
    starts: dict[int, int] = {}
    if max_line_chars < 8:
        return starts
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and lines[j].startswith("-"):
            j += 1
        k = j
        while k < len(lines) and lines[k].startswith("+"):
            k += 1
        for a, b in zip(range(i, j), range(j, k), strict=False):
            first = _common_prefix(lines[a][1:], lines[b][1:])
            if max(len(lines[a]), len(lines[b])) > max_line_chars + 1 and first > max_line_chars // 2:
                starts[a] = starts[b] = first - max_line_chars // 4
        i = max(k, i + 1)
    return starts


def _clip(body: str, start: int, limit: int) -> str:
    if len(body) <= limit:
        return body
    if start <= 0:
        return body[: limit - 1] + "…"
    end = start + limit - 2
    return "…" + body[start:end] + ("…" if end < len(body) else "")


def _more(count: int) -> str:
    return f"… ({count} more diff lines)"


def _mark(out: list[str], count: int) -> None:
    """Count *count* lines left out at the end of *out* (in the marker there is one already)."""
    if out and out[-1].startswith("… ("):
        count += int(out.pop()[3:].split(" ", 1)[0])
    out.append(_more(count))


@dataclass(slots=True)
class _Run:
    """Consecutive diff lines of one sign (`` ``, ``-`` or ``+``) in a hunk, the first *shown* of
    them kept."""

    sign: str
    lines: list[str] = field(default_factory=list)
    shown: int = 0


@dataclass(slots=True)
class _Hunk:
    """A hunk's runs, and the lines of its runs past the most a capped diff could show (*tail*)."""

    runs: list[_Run] = field(default_factory=list)
    tail: int = 0

    @property
    def size(self) -> int:
        return sum(len(run.lines) for run in self.runs) + self.tail

    def starts_passage(self, i: int) -> bool:
        """Whether run *i* is the first of a passage (removed lines, then the added ones)."""
        return self.runs[i].sign != " " and (i == 0 or self.ends_passage(i - 1))

    def ends_passage(self, i: int) -> bool:
        after = self.runs[i + 1].sign if i + 1 < len(self.runs) else " "
        return self.runs[i].sign != " " and (after == " " or (self.runs[i].sign, after) == ("+", "-"))


def _hunks(old: str, new: str, context: int, max_line_chars: int, most_runs: int) -> list[_Hunk]:
    """The hunks of *old* → *new* (long lines clipped), each with at most *most_runs* runs."""
    lines = [line for line in difflib.unified_diff(old.splitlines(), new.splitlines(), n=context, lineterm="")
             if not line.startswith(("---", "+++"))]
    starts = _clip_starts(lines, max_line_chars)
    hunks: list[_Hunk] = []
    for index, line in enumerate(lines):
        if line.startswith("@@"):
            hunks.append(_Hunk())
            continue
        hunk, sign = hunks[-1], line[0] if line[0] in "+-" else " "
        if hunk.tail or (hunk.runs and hunk.runs[-1].sign != sign and len(hunk.runs) == most_runs):
            hunk.tail += 1
            continue
        if not hunk.runs or hunk.runs[-1].sign != sign:
            hunk.runs.append(_Run(sign))
        hunk.runs[-1].lines.append(f"{sign} {_clip(line[1:], starts.get(index, 0), max_line_chars)}")
    return hunks


def _render(hunks: list[_Hunk], left_out: int) -> list[str]:
    """The shown lines of *hunks* with ``@@`` between them and a marker where lines are left out:
    at the end of a passage shown in part, before the next line shown after lines left out, and at
    the end, where *left_out* lines (of the hunks not shown) are counted too."""
    out: list[str] = []
    hidden = 0
    for n, hunk in enumerate(hunks):
        if n:
            out.append("@@")
        passage_shown = False
        for i, run in enumerate(hunk.runs):
            if run.shown and hidden and (run.sign == " " or hunk.starts_passage(i)):
                _mark(out, hidden)
                hidden = 0
            out += run.lines[:run.shown]
            hidden += len(run.lines) - run.shown
            passage_shown = passage_shown or bool(run.shown)
            if hunk.ends_passage(i):
                if hidden and passage_shown:
                    _mark(out, hidden)
                    hidden = 0
                passage_shown = False
        hidden += hunk.tail
        if hidden and n + 1 < len(hunks):
            _mark(out, hidden)
            hidden = 0
    if hidden + left_out:
        _mark(out, hidden + left_out)
    return out


def _least(hunk: _Hunk, tier: int) -> None:
    """Show the least of *hunk* a *tier* allows: 0, its unchanged lines and the first line of each
    of its removed and added runs; 1, its first removed line and its first added one; 2, its first
    added line alone (its first removed one when it adds none)."""
    for run in hunk.runs:
        run.shown = len(run.lines) if tier == 0 and run.sign == " " else int(tier == 0)
    if tier:
        signs = "-+" if tier == 1 else "+" if any(run.sign == "+" for run in hunk.runs) else "-"
        for sign in signs:
            first = next((run for run in hunk.runs if run.sign == sign), None)
            if first is not None:
                first.shown = 1


def _capped(hunks: list[_Hunk], fits: Callable[[list[str]], bool]) -> list[str]:
    """The lines of *hunks* shared out so that they fit: see the module's docstring."""
    sizes = [hunk.size + (1 if n else 0) for n, hunk in enumerate(hunks)]
    shown: list[_Hunk] = []
    for n, hunk in enumerate(hunks):
        for tier in (0, 1) if shown else (0, 1, 2):
            _least(hunk, tier)
            if (tier or not hunk.tail) and fits(_render([*shown, hunk], sum(sizes[n + 1:]))):
                break
        else:
            break
        shown.append(hunk)
        if tier:  # shown in part: the hunks after it are counted
            break
    left_out = sum(sizes[len(shown):])
    if not shown:
        return [_more(left_out)]
    _deal_out(shown, left_out, fits)
    return _render(shown, left_out)


def _deal_out(shown: list[_Hunk], left_out: int, fits: Callable[[list[str]], bool]) -> None:
    """Give each run of the *shown* hunks one more line in turn (an unchanged run all its lines at
    once) while the diff still fits; a run whose next line does not fit stops there."""
    runs = [run for hunk in shown for run in hunk.runs if run.shown < len(run.lines)]
    while runs:
        for run in list(runs):
            was = run.shown
            run.shown = len(run.lines) if run.sign == " " else was + 1
            if not fits(_render(shown, left_out)):
                run.shown = was
                runs.remove(run)
            elif run.shown == len(run.lines):
                runs.remove(run)


def line_diff(old: str, new: str, *, context: int = 1, max_lines: int = 60, max_chars: int = 4000,
              max_line_chars: int = 300) -> str:
    """Changed lines of *old* → *new* (``-``/``+``), with *context* unchanged lines around them
    (`` `` prefix) and ``@@`` between hunks; at most *max_lines* lines and *max_chars* characters
    in all, markers included, shared out hunk by hunk as the module's docstring says (caps too
    small for any line of the diff give its marker alone).

    >>> print(line_diff("a\\nb\\nc", "a\\nB\\nc"))
      a
    - b
    + B
      c
    >>> print(line_diff("a\\nb\\nc\\nd", "A\\nB\\nC\\nD", max_lines=3))
    - a
    + A
    … (6 more diff lines)
    """
    # a shown line takes at least 3 characters: a run past that many is never shown
    hunks = _hunks(old, new, context, max_line_chars, min(max_lines, max_chars // 3) + 2)

    def fits(lines: list[str]) -> bool:
        return len(lines) <= max_lines and sum(len(line) + 1 for line in lines) - 1 <= max_chars

    for hunk in hunks:
        for run in hunk.runs:
            run.shown = len(run.lines)
    whole = _render(hunks, 0)
    return "\n".join(whole if fits(whole) else _capped(hunks, fits))
