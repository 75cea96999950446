"""Editing what is learned of a key's text by hand: ``changewatch noise`` (a reported change's
diff learned as slots and volatile lines) and ``changewatch explain KEY --forget-slot N`` (one
slot forgotten, numbered as ``explain`` lists them). Nothing here imports Scrapy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .learned_state import Learned, replaced, signature
from .slots import Slot, label_of, sample_of

__all__ = ["forget_slot", "learn_noise", "numbered", "without"]


def forget_slot(learned: Learned, number: int, text: str | None = None) -> Learned:
    """*learned* without its slot numbered *number* as :func:`numbered` lists them (from 1).
    Raises IndexError for a number it does not list."""
    listed = numbered(learned, text)
    if not 1 <= number <= len(listed):
        raise IndexError(number)
    return _without(learned, listed[number - 1])


def without(learned: Learned | None, item: tuple[str, Any]) -> Learned | None:
    """*learned* without one item :func:`numbered` lists (by its anchors, or its signature)."""
    return None if learned is None else _without(learned, item)


def _without(learned: Learned, item: tuple[str, Any]) -> Learned:
    kind, what = item
    if kind == "slot":
        return replaced(learned, slots=tuple(s for s in learned.slots if s.anchors != what.anchors))
    return replaced(learned, lines=learned.lines - {what})


def numbered(learned: Learned, text: str | None = None) -> list[tuple[str, Any]]:
    """The slots as ``explain`` numbers them: the slots between anchors in the order learned, then
    the volatile lines (slots of one line), those of *text* first, in its order."""
    listed: list[tuple[str, Any]] = [("slot", slot) for slot in learned.slots]
    shown = [signature(line) for line in (text or "").split("\n") if line.strip()]
    ordered = [*dict.fromkeys(s for s in shown if s in learned.lines), *sorted(learned.lines - set(shown))]
    return listed + [("line", sig) for sig in ordered]


def learn_noise(learned: Learned | None, diff: str) -> Learned:
    """*learned* with a reported change's diff learned as noise: the lines it showed (``-``/``+``)
    as volatile, and each run of them as a slot between the lines shown unchanged around it, so
    that other text there is quiet too while a change elsewhere is still reported."""
    learned = learned or Learned()
    rows = diff.split("\n")
    lines = [row[2:] for row in rows if row[:2] in ("- ", "+ ") and row[2:].strip()]
    taught = []
    for start, end in _runs(rows):
        before = _context(rows, start - 1, -1)
        after = _context(rows, end, 1)
        if before is None or after is None:
            continue  # the diff does not show where it is
        held = [row[2:] for row in rows[start:end] if row[:2] == "+ "]
        taught.append(Slot(signature(before), signature(after), most=max(len(held), 1), varied=1,
                           sample=sample_of(held), labels=(label_of(before), label_of(after))))
    return learned.with_lines(signature(line) for line in lines).with_slots(taught)


def _runs(rows: Sequence[str]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for i, row in enumerate(rows):
        if row[:2] in ("- ", "+ "):
            if runs and runs[-1][1] == i:
                runs[-1] = (runs[-1][0], i + 1)
            else:
                runs.append((i, i + 1))
    return runs


def _context(rows: Sequence[str], at: int, step: int) -> str | None:
    """The nearest unchanged line the diff shows from *at* on ("": the text's edge; None: not shown)."""
    while 0 <= at < len(rows):
        row = rows[at]
        if row.startswith("  ") and row[2:].strip():
            return row[2:]
        if not row.startswith("  "):
            return None  # "@@": lines not shown
        at += step
    return None

