"""Steady lines inside a slot: a line a slot was learned around (a box's heading between the
clock line above it and its headlines, a label between two varying runs) that then stands, the
same and in place, on every load the slot is seen varying in, is not what varies.

A slot learned from one diff whose changed runs were a line apart (core/learned.py merges them:
a reshuffled list whose one item stayed in place) keeps the lines between them (:func:`inner_of`,
their text's hash, bounded). Each load the slot varies in (:func:`sighted`), a kept line that is
missing, doubled or moved (not matched in the diff of what the slot held, nor as many lines from
its start or its end as before) is forgotten; one that stood so :data:`STEADY_AFTER` times is
steady, and the slot is split around it (:func:`split_steady`): the line is the anchor of the two
slots, so an edit to it is a change (shown alone); once both varied in :data:`JOIN_BEFORE` loads
with it in place, they are not joined across it again (core/slots.py ``joined``). An item of a
reshuffled list that stays in place by chance is forgotten the first load it moves. Nothing here
imports Scrapy.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .slots import Slot

__all__ = ["JOIN_BEFORE", "MAX_INNER", "STEADY_AFTER", "Inner", "inner_of", "joined_inner", "line_hash", "sighted",
           "split_steady"]

#: the lines a slot keeps of those it was learned around
MAX_INNER = 4
#: the loads a kept line stood in, the same and in place, before it is steady (the one it was learned in counts)
STEADY_AFTER = 6
#: the loads two slots varied in with the line between them in place, before that line going is a
#: change rather than a line that varies too (a block some loads show that four in a row showed)
JOIN_BEFORE = 2 * STEADY_AFTER
#: a kept line: its text's hash, the loads it stood in, the fewest and most lines before it in
#: the slot, the fewest and most after it
Inner = tuple[str, int, int, int, int, int]


def line_hash(line: str) -> str:
    from .slots import content_hash

    return content_hash([line])


def _full(lines: Sequence[str]) -> list[str]:
    return [line for line in lines if line.strip()]


def inner_of(held: Sequence[str], steady: Iterable[int]) -> tuple[Inner, ...]:
    """The lines of *held* (what a slot holds) at *steady* (positions in it: lines the diff it
    was learned from kept), as :data:`Inner` entries (at most :data:`MAX_INNER`)."""
    full = [i for i, line in enumerate(held) if line.strip()]
    out: list[Inner] = []
    for at in sorted(steady):
        if at not in full or len(out) >= MAX_INNER:
            continue
        k = full.index(at)
        out.append((line_hash(held[at]), 1, k, k, len(full) - k - 1, len(full) - k - 1))
    return tuple(out)


def _where(lines: Sequence[str], digest: str) -> int | None:
    found = [i for i, line in enumerate(lines) if line_hash(line) == digest]
    return found[0] if len(found) == 1 else None


def sighted(inner: tuple[Inner, ...], was: Sequence[str], now: Sequence[str]) -> tuple[Inner, ...]:
    """*inner* after a load whose slot held *now* (it held *was*): the lines that stood in place
    count one load more, the others are forgotten."""
    if not inner:
        return inner
    old, new = _full(was), _full(now)
    matched = {a + k for a, _, n in difflib.SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks()
               for k in range(n)}
    out: list[Inner] = []
    for digest, count, al, am, bl, bm in inner:
        i, j = _where(old, digest), _where(new, digest)
        if i is None or j is None or i not in matched or (i != j and len(old) - i != len(new) - j):
            continue
        after = len(new) - j - 1
        out.append((digest, count + 1, min(al, j), max(am, j), min(bl, after), max(bm, after)))
    return tuple(out)


def joined_inner(first: Slot, second: Slot) -> tuple[Inner, ...]:
    """The kept lines of two slots joined across the line between them, counted in the joined slot."""
    return (*((d, c, a, b, x + second.least + 1, y + second.most + 1) for d, c, a, b, x, y in first.inner),
            *((d, c, a + first.least + 1, b + first.most + 1, x, y) for d, c, a, b, x, y in second.inner)
            )[:MAX_INNER]


def split_steady(slots: Sequence[Slot | None], new: Sequence[str], nsig: Sequence[str]) -> list[Slot | None]:
    """*slots*, each with a steady kept line split around it into the slot before it and the
    slot after it (a side that held no line is no slot: the line is next to its anchor); *new*
    is the text they were seen in (with its lines' signatures *nsig*)."""
    from .slots import label_of, locate_all

    out: list[Slot | None] = []
    for slot in slots:
        steady = next((e for e in slot.inner if e[1] >= STEADY_AFTER), None) if slot is not None else None
        found = locate_all([slot], nsig) if slot is not None and steady is not None else []
        at = _where(new[found[0].start:found[0].end], steady[0]) if found and steady is not None else None
        if slot is None or steady is None or at is None:
            out.append(slot)
            continue
        at += found[0].start
        sig, label, nth = nsig[at], label_of(new[at]), sum(1 for s in nsig[:at] if s == nsig[at])
        rest = [e for e in slot.inner if e[0] != steady[0]]
        _, count, al, am, bl, bm = steady
        # the other kept lines go with the side they stood on, counted from its edges
        head = tuple((d, c, a, b, max(x - bm - 1, 0), max(y - bl - 1, 0))
                     for d, c, a, b, x, y in rest if a < al)
        tail = tuple((d, c, max(a - am - 1, 0), max(b - al - 1, 0), x, y)
                     for d, c, a, b, x, y in rest if a >= al)
        if am:
            out.append(dataclasses.replace(slot, after=sig, most=am, least=al, labels=(slot.labels[0], label),
                                           inner=head, steady=count))
        if bm:
            out.append(dataclasses.replace(slot, before=sig, nth=nth, most=bm, least=bl,
                                           labels=(label, slot.labels[1]), inner=tail, steady=count))
    return out
