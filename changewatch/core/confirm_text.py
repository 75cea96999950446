"""Which hunks of a text change both loads of a confirmation show (core/confirm.py).

A hunk of the stable text is confirmed when its added lines the first load shows too, in the
place the second shows them (a removal: that the first load lacks too, not amid lines that vary
between the loads). A line the first load does not show, or shows elsewhere (a reshuffled list),
sits where the page varies between loads (a rotating box, an ad slot): it is not a change. An
edit both loads show in the same hunk as such a box (a paragraph edited or removed next to an
ad) is still one: only the box's lines are taken for the box. Nothing here imports Scrapy.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

__all__ = ["TextCheck", "confirmed_text"]


@dataclass(frozen=True, slots=True)
class TextCheck:
    """The baseline's text against the confirmation's, hunk by hunk, as the first load has them."""

    #: the baseline's text with the hunks not confirmed as the confirmation has them: what the
    #: diff is shown from, so that it shows only confirmed hunks, each line unchanged a line of the page
    shown_from: str
    confirmed: int
    unconfirmed: int


def confirmed_text(before: str, first: str, second: str, slotted: frozenset[int] = frozenset()) -> TextCheck:
    """Which hunks of *before* → *second* the *first* load shows too. *slotted*: the lines of
    *second* a learned slot holds (a line next to them is next to known furniture, as next to a
    line both loads show: a paragraph added inside a box of rotating headlines that the slot's
    size leaves out).

    >>> check = confirmed_text("a\\nbox 1\\nb\\nc", "a\\nbox 2\\nb\\nc!", "a\\nbox 3\\nb\\nc!")
    >>> check.confirmed, check.unconfirmed, check.shown_from
    (1, 1, 'a\\nbox 3\\nb\\nc')
    """
    old, new, once = before.split("\n"), second.split("\n"), first.split("\n")
    in_old, in_first = Counter(old), Counter(once)
    steady = _steady(once, new)
    edges = steady | slotted | {-1, len(new)}
    out: list[str] = []
    confirmed = unconfirmed = 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        removed, added = old[i1:i2], new[j1:j2]
        if tag == "equal":
            out.extend(removed)
            continue
        alike = [in_first[line] > in_old[line] and j in steady and bool({j - 1, j + 1} & edges)
                 for j, line in enumerate(added, j1)]
        if added:  # every added line is one the first load added too, where the second has it
            ok = all(same for same, line in zip(alike, added, strict=True) if line.strip())
        else:  # a removal: the first load lacks it too, and it is not from amid lines that vary between the loads
            ok = all(in_first[line] < in_old[line] for line in removed if line.strip()) \
                and bool({j1 - 1, j1} & edges)
        if ok:
            confirmed += 1
            out.extend(removed)
            continue
        part = _partly(removed, added, alike, in_old, in_first)
        confirmed += part is not None
        unconfirmed += 1
        out.extend(added if part is None else part)
    return TextCheck("\n".join(out), confirmed, unconfirmed)


def _steady(first: Sequence[str], second: Sequence[str]) -> set[int]:
    """The lines of *second* that the first load shows in the same place (not moved, not new):
    a line that both loads show but in another order (a reshuffled list) varies between them."""
    matcher = SequenceMatcher(None, first, second, autojunk=False)
    return {j for tag, _i1, _i2, j1, j2 in matcher.get_opcodes() if tag == "equal" for j in range(j1, j2)}


def _partly(removed: Sequence[str], added: Sequence[str], alike: Sequence[bool], in_old: Counter[str],
            in_first: Counter[str]) -> list[str] | None:
    """What the diff is shown from of a hunk that holds both a varying box (added lines the first
    load does not show) and an edit both loads show next to it (a paragraph edited, added or
    removed by an ad): the hunk's new lines, without those both loads added and with the old
    lines both loads lack beyond what the box held put back. None: no part of it is confirmed."""
    varying = [line for line, same in zip(added, alike, strict=True) if line.strip() and not same]
    both = {line for line, same in zip(added, alike, strict=True) if line.strip() and same}
    gone = [i for i, line in enumerate(removed) if line.strip() and in_first[line] < in_old[line]]
    if not _in_place(varying, removed):
        # beside a box whose lines are new (not a timestamp or an id varying in place), a line both
        # loads show is an edit only where it edits a line both lack: a headline two loads of a
        # rotating box happen to share is the box's; a paragraph added there is learned outside the
        # box's slot by this confirmation and reported by the next run (late, not lost)
        both = {line for line in both if any(_like(removed[i], line) for i in gone)}
    # the old lines the box held: as many as it holds now, those most like its lines (by length)
    size = sum(len(line) for line in varying) / len(varying) if varying else 0.0
    edited = {i for i in gone if any(_like(removed[i], line) for line in both)}
    rest = sorted((i for i in gone if i not in edited), key=lambda i: abs(len(removed[i]) - size))
    shown = edited | set(rest[len(varying):])
    if not both and not shown:
        return None
    kept = [line for line in added if line not in both]
    at = next((i for i, line in enumerate(added) if line in both), None)
    box = min(rest[:len(varying)], default=len(removed) // 2)  # where the box's old lines start
    before = [removed[i] for i in sorted(shown) if i < box]
    after = [removed[i] for i in sorted(shown) if i >= box]
    if at is not None:
        at = sum(1 for line in added[:at] if line not in both)
        return [*kept[:at], *before, *after, *kept[at:]]
    return [*before, *kept, *after]


def _like(old: str, new: str) -> bool:
    """Whether *new* reads as an edit of *old* (most of its characters in order)."""
    return SequenceMatcher(None, old, new).ratio() > 0.6


#: what varies in place on every load: numbers, and long identifiers (hex, base64, tokens)
_VOLATILE = re.compile(r"[0-9a-fA-F]{8,}|[A-Za-z0-9_\-]{20,}|\d+")


def _in_place(varying: Sequence[str], removed: Sequence[str]) -> bool:
    """Whether each line of *varying* is a line of *removed* with only its numbers and
    identifiers changed (a timestamp, a request id), not a line of a rotating box.

    >>> _in_place(["Page generated 10:05 · id 3c9f2a1b7e"], ["Page generated 10:00 · id 1a4d5e6f70"])
    True
    >>> _in_place(["Market square museum (E)"], ["Tram school garden (I)"])
    False
    """
    masked = Counter(_VOLATILE.sub("#", line) for line in removed if line.strip())
    for line in varying:
        if not line.strip():
            continue
        key = _VOLATILE.sub("#", line)
        if masked[key] <= 0:
            return False
        masked[key] -= 1
    return True
