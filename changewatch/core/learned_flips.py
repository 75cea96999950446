"""A place of a key's text that flips back: its lines return to what the key has shown before.

Two-state furniture (an A/B teaser with two variants, a newsletter block present on some loads)
varies between runs, yet both loads of one run often show it alike, so a confirmation lets its
first flip through. What tells it apart is history: every changed observation notes each line it
removed and added (by the line's hash, numbers kept: "Price: 89" and "Price: 79" are two lines).
A run of changed lines whose added lines were all removed before and whose removed lines were all
added before flips *back* (A→B→A).

A flip back is held, not reported: the place is learned as a provisional slot (core/slots.py)
holding what the flip showed. Judged again, a slot holding something else (B again, a third
text) varies: it is a slot from then on, and the flips after are quiet. One still holding what
the flip back showed stayed put: that was an edit reverted (a price back to 89, a deadline moved
back), and it is reported then, from the text before the revert (late by one run, not lost).
Nothing here imports Scrapy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .learned_state import FLIPPING_AFTER, FLIPPING_WINDOW, MAX_FLIPS, MERGE_GAP, Learned, replaced
from .slots import MAX_KEPT_LINES, Slot, content_hash, locate_all, slot_between

__all__ = ["ADDED", "REMOVED", "Changed", "Slotted", "held_back", "held_slot", "noted", "quiet", "returns", "streak"]

REMOVED, ADDED = 1, 2


def _key(line: str) -> str:
    return content_hash((line,))


def returns(removed: Sequence[str], added: Sequence[str], flips: Mapping[str, int]) -> bool:
    """Whether lines *removed* and *added* by a change bring back what the key showed before:
    each added line was removed by an earlier change, each removed line added by one.

    >>> flips = noted({}, ["Subscribe now"], ["Join our readers"])
    >>> returns(["Join our readers"], ["Subscribe now"], flips), returns(["Join our readers"], ["Buy now"], flips)
    (True, False)
    >>> returns([], ["Sign up"], noted({}, ["Sign up"], [])), returns(["Price: 79"], ["Price: 69"], flips)
    (True, False)
    """
    removed = [line for line in removed if line.strip()]
    added = [line for line in added if line.strip()]
    return bool(removed or added) and all(flips.get(_key(line), 0) & REMOVED for line in added) \
        and all(flips.get(_key(line), 0) & ADDED for line in removed)


def noted(flips: Mapping[str, int], removed: Sequence[str], added: Sequence[str]) -> dict[str, int]:
    """*flips* with a change's lines noted (the latest kept, within :data:`MAX_FLIPS`)."""
    out = dict(flips)
    for lines, bit in ((removed, REMOVED), (added, ADDED)):
        for line in lines:
            if line.strip():
                key = _key(line)
                out[key] = out.pop(key, 0) | bit
    while len(out) > MAX_FLIPS:
        out.pop(next(iter(out)))
    return out


def held_slot(lines: Sequence[str], sigs: Sequence[str], start: int, end: int, covered: set[int],
              volatile: frozenset[str], new: Sequence[str], nsig: Sequence[str]) -> Slot | None:
    """The provisional slot holding ``lines[start:end]``, changed into what *new* holds there: it
    keeps the old lines and the hash of the new ones (None: its anchors are not in both texts)."""
    slot = slot_between(lines, sigs, start, end, covered, volatile)
    there, here = locate_all([slot], nsig), locate_all([slot], sigs)
    if not there or not here:
        return None
    now, was = new[there[0].start:there[0].end], lines[here[0].start:here[0].end]
    if content_hash(now) == content_hash(was):
        return None
    sizes = sum(1 for line in now if line.strip()), sum(1 for line in was if line.strip())
    return dataclasses.replace(slot, stayed=content_hash(now), was=tuple(was[:MAX_KEPT_LINES]),
                               most=max(sizes), least=min(sizes))


@dataclass(frozen=True, slots=True)
class Changed:
    """A hunk of a change that is not ignored: its index, where it stands in the old text (slotted),
    and the lines it removes and adds."""

    index: int
    start: int
    end: int
    removed: tuple[str, ...]
    added: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Slotted:
    """The old text as the slots put it: its lines, their signatures, the positions slots hold,
    and those of provisional slots that stayed put (reported now: never held again)."""

    lines: Sequence[str]
    sigs: Sequence[str]
    covered: set[int]
    stayed: set[int]


def held_back(text: Slotted, changes: Sequence[Changed], flips: Mapping[str, int], volatile: frozenset[str],
              new: Sequence[str], nsig: Sequence[str]) -> tuple[set[int], list[Slot]]:
    """The hunks (their indexes) of each run of *changes* (hunks :data:`MERGE_GAP` lines apart are
    one) that flips back, and the provisional slots that hold them."""
    runs: list[list[Changed]] = []
    for change in changes:
        if runs and change.start - runs[-1][-1].end <= MERGE_GAP:
            runs[-1].append(change)
        else:
            runs.append([change])
    held: set[int] = set()
    taught: list[Slot] = []
    for run in runs:
        where = {i for c in run for i in range(c.start, max(c.end, c.start + 1))}
        if where & text.stayed or not returns([line for c in run for line in c.removed],
                                              [line for c in run for line in c.added], flips):
            continue
        slot = held_slot(text.lines, text.sigs, run[0].start, run[-1].end, text.covered, volatile, new, nsig)
        if slot is not None:
            held.update(c.index for c in run)
            taught.append(slot)
    return held, taught


def streak(learned: Learned, flipped: bool, now: int) -> tuple[Learned, str | None]:
    """*learned* after changed observation *now* (the candidates' clock) that flipped back
    (*flipped*) or not, and whether its key's flipping streak began (``"began"``) or is over
    (``"over"``) with it. A key keeps flipping from the observation that makes
    :data:`FLIPPING_AFTER` flip backs within its last :data:`FLIPPING_WINDOW` changed observations
    (an A/B test, servers out of step: its text returns to earlier ones again and again), until
    :data:`FLIPPING_WINDOW` observations in a row (changed or not: :func:`quiet`) flipped back no more.

    >>> learned, said = Learned(), []
    >>> for n, back in enumerate([True, False, True, True] + [False] * 8):
    ...     learned, event = streak(learned, back, n)
    ...     said.append(event)
    >>> [(n, e) for n, e in enumerate(said) if e]
    [(3, 'began'), (11, 'over')]
    """
    recent = tuple(i for i in learned.flipped if i > now - FLIPPING_WINDOW)
    if flipped:
        recent = (*recent, now)[-FLIPPING_AFTER:]
    if not learned.flipping:
        if len(recent) >= FLIPPING_AFTER:
            return replaced(learned, flipped=recent, flipping=1), "began"
        return replaced(learned, flipped=recent), None
    if flipped:
        return replaced(learned, flipped=recent, flipping=1), None
    return quiet(replaced(learned, flipped=recent))


def quiet(learned: Learned) -> tuple[Learned, str | None]:
    """*learned* after an observation of a key that keeps flipping that did not flip back, and
    ``"over"`` when it is the :data:`FLIPPING_WINDOW`-th such in a row."""
    if not learned.flipping:
        return learned, None
    if learned.flipping >= FLIPPING_WINDOW:
        return replaced(learned, flipped=(), flipping=0), "over"
    return replaced(learned, flipping=learned.flipping + 1), None
