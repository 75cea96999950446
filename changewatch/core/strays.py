"""Lines in a slot of fixed size that are not its own (core/learned_text.py).

A slot seen holding as many lines every time (a box of five headlines drawn from hundreds, an
ad's one line) that holds more now holds text beside its own: a paragraph added right after the
box's heading, after its last item, or among its items. Which of its lines that text is: first
a line the other text of the comparison holds too where that text is oversized as well (it
stood while the slot's lines rotated: two loads of a confirmation both showing the paragraph),
then the lines whose length is farthest from the length of the slot's own lines (a paragraph of
prose among headlines). Two loads of the same content whose counts there differ (a block some
loads show) say the slot is of no fixed size (:func:`sized`): what it holds up to twice its most
is its own from then on. Nothing here imports Scrapy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .slots import Slot

__all__ = ["sized", "strays"]


def _typical(lines: Sequence[str]) -> int:
    """The median length of *lines* (0: none)."""
    lengths = sorted(len(line.strip()) for line in lines if line.strip())
    return lengths[len(lengths) // 2] if lengths else 0


def strays(lines: Sequence[str], count: int, kind: Sequence[str], stood: Collection[str] = ()) -> list[int]:
    """The positions in *lines* (what a slot of fixed size holds, *count* lines more than its
    size) of the *count* lines that are not the slot's: those *stood* holds too first, then those
    least like *kind* (lines the slot held) by length, at the ends of *lines* before the middle.

    >>> strays(["Ferry delayed", "A long paragraph of article prose added to the page", "Tram opens"], 1,
    ...        ["Museum backs festival", "Library reviews budget"])
    [1]
    >>> strays(["Notice: doors open at seven", "Ferry delayed again", "Tram line opens"], 1,
    ...        ["Museum backs festival"], {"Notice: doors open at seven", "Museum backs festival"})
    [0]
    """
    full = [i for i, line in enumerate(lines) if line.strip()]
    if count <= 0 or not full:
        return []
    typical = _typical(kind or lines)
    edges = {full[0], full[-1]}

    def rank(i: int) -> tuple[bool, int, bool]:
        return lines[i] not in stood, -abs(len(lines[i].strip()) - typical), i not in edges

    return sorted(sorted(full, key=rank)[:count])


def sized(slot: Slot, *texts: tuple[Sequence[str], Sequence[str]]) -> Slot:
    """*slot*, where *texts* (lines, their signatures: loads of the same content) hold different
    numbers of lines in it, holding as many as each of them: it is of no fixed size."""
    from .slots import locate_all

    held = {sum(1 for line in lines[loc.start:loc.end] if line.strip())
            for lines, sigs in texts for loc in locate_all([slot], sigs)}
    if len(held) < 2:
        return slot
    return dataclasses.replace(slot, most=max(slot.most, *held), least=min(slot.least or min(held), *held))
