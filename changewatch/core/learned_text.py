"""The old text as a key's learned slots put it, and its hunks against the new text
(core/learned.py judges them).

Each slot found in both texts holds in the old text what the new text holds there, so a slot
shows nowhere in the line diff made from it; a slot whose anchors are gone or moved, or that grew
beyond twice its size, keeps its old lines (a change). A provisional slot (core/slots.py) that
still holds what it stayed as is a change, shown from the lines it was learned from. Nothing
here imports Scrapy.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field

from .learned_state import MERGE_GAP, Learned, signature, signatures
from .slots import Located, Slot, anchored, content_hash, joined, locate_all, loose, relabelled, sample_of
from .steady import split_steady
from .strays import strays

__all__ = ["Hunk", "SlottedText", "aligned", "groups", "hunks", "slotted"]


@dataclass(frozen=True, slots=True)
class Hunk:
    """Lines of the old text replaced by lines of the new one, and where (anchors)."""

    start: int  # in the old lines
    end: int
    removed: tuple[str, ...]
    added: tuple[str, ...]
    anchors: str
    #: the anchors' text, for a hunk a slot held
    labels: tuple[str, str] | None = None

    def signatures(self) -> set[str]:
        return {signature(line) for line in self.removed + self.added if line.strip()}

    def covered(self, learned: Learned) -> bool:
        """Every line it removes and adds is a volatile signature (stable text that goes, or text
        never seen varying, is a change)."""
        return self.signatures() <= learned.lines

    def sample(self) -> str:
        return sample_of(self.added or self.removed)


def _anchor(lines: Sequence[str], at: int, step: int, volatile: frozenset[str]) -> str:
    while 0 <= at < len(lines):
        if lines[at].strip() and signature(lines[at]) not in volatile:
            return signature(lines[at])
        at += step
    return "^" if step < 0 else "$"


def hunks(old: Sequence[str], new: Sequence[str], volatile: frozenset[str] = frozenset()) -> list[Hunk]:
    """The hunks of the line diff *old* → *new*, each anchored on the nearest lines around it
    that are not *volatile*."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    found = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        anchors = f"{_anchor(old, i1 - 1, -1, volatile)}:{_anchor(old, i2, 1, volatile)}"
        found.append(Hunk(i1, i2, tuple(old[i1:i2]), tuple(new[j1:j2]), anchors))
    return found


@dataclass(slots=True)
class SlottedText:
    """The old text with each slot found in both texts holding what the new text holds there."""

    lines: list[str]
    sigs: list[str]
    covered: set[int]  # positions in *lines* a slot holds
    ignored: list[Hunk]
    slots: list[Slot | None]  # the learned slots after this observation (None: dropped)
    held: set[int] = field(default_factory=set)  # positions in the new text a slot holds
    owners: dict[int, int] = field(default_factory=dict)  # covered positions: the slot's index
    #: positions in *lines* of provisional slots that stayed put (a change, reported now: never held again)
    stayed: set[int] = field(default_factory=set)


def slotted(old: Sequence[str], osig: Sequence[str], new: Sequence[str], nsig: Sequence[str],
             slots: Sequence[Slot], plain: frozenset[int] = frozenset()) -> SlottedText:
    """The old text with what each slot holds in the new text in its place; the slots at *plain*
    (indexes) keep their old lines and stay as they were."""
    if len(slots) > 1:
        slots = joined(slots, old, osig, new, nsig)
    kept: list[Slot | None] = list(slots)
    in_old, in_new = locate_all(slots, osig), locate_all(slots, nsig)
    where = {loc.index: loc for loc in in_new}
    out = SlottedText([], [], set(), [], kept)
    held = {i for loc in in_old for i in range(loc.start, loc.end)}
    at = until = 0  # *until*: where the last slot's lines end in the new text
    shared = ""  # the last slot's after anchor (as learned)
    for loc in in_old:
        slot, mine = slots[loc.index], where.get(loc.index)
        out.lines.extend(old[at:loc.start])
        out.sigs.extend(osig[at:loc.start])
        at = loc.end
        was = old[loc.start:loc.end]
        if loc.index in plain:
            _put(out, was, False)
            continue
        if mine is None and (there := loose(slot, old, osig, loc.start, loc.end, new, nsig, held)) is not None \
                and not _taken(there[0], there[1], loc.index, in_new):
            # an anchor edited or removed: the edit is a change, the slot is anchored anew (after
            # the last slot's, when that is the anchor they share: the edited line is neither's)
            start = until + 1 if slot.before == shared and there[0] <= until < there[1] else there[0]
            slot = anchored(slot, new, nsig, start, there[1])
            mine = Located(loc.index, start, there[1])
        if mine is not None and mine.start < until:  # lines another slot holds, or slots out of order
            mine = None
        if mine is None:  # anchors gone or moved: a change, relearned later
            kept[loc.index] = None
            _put(out, was, False)
            continue
        now, until, shared = new[mine.start:mine.end], mine.end, slots[loc.index].after
        if slot.provisional:
            if content_hash(now) == slot.stayed:  # stayed put: a change, shown from the first load's
                kept[loc.index] = None
                start = _put(out, slot.was if slot.was and content_hash(was) == slot.stayed else was, False)
                out.stayed.update(range(start - 1, len(out.lines) + 1))  # with its anchors: a hunk may take them
                continue
            slot = dataclasses.replace(slot, stayed="", was=())  # new again: it varies
        mark = len(out.lines)
        slot = relabelled(slot, new, mine.start, mine.end)  # its anchors as the new text reads them
        kept[loc.index] = _held(out, slot, was, now, new, nsig, mine)
        out.owners.update((i, loc.index) for i in range(mark, len(out.lines)) if i in out.covered)
    out.lines.extend(old[at:])
    out.sigs.extend(osig[at:])
    found = {loc.index for loc in in_old} | set(where)
    for i in range(len(slots)):
        if i not in found:
            kept[i] = None  # neither text has it: the page was redesigned
    out.slots = split_steady(kept, new, nsig)
    return out


def _taken(start: int, end: int, index: int, in_new: Sequence[Located]) -> bool:
    """Whether lines ``start:end`` of the new text overlap those another slot found there holds
    (each line of the new text is held by one slot at most, or it would be shown twice)."""
    return any(loc.index != index and loc.start < end and start < loc.end for loc in in_new)


def _held(out: SlottedText, slot: Slot, was: Sequence[str], now: Sequence[str], new: Sequence[str],
          nsig: Sequence[str], mine: Located) -> Slot:
    """Put what *slot* holds now in the text the diff is made from; the slot after it."""
    if slot.grown(now):  # beyond twice its size: a change, then its new size
        _put(out, was, False)
        return slot.seen(now, True)
    if (gone := slot.extra(was)) and not slot.extra(now) and (at_end := _removed_end(was, now, gone)) is not None:
        # a slot of fixed size that held more in the old text: the old lines least like what it
        # holds now are text removed next to it (a paragraph after an ad), not what the slot held
        own, removed = (was[:len(was) - gone], was[len(was) - gone:]) if at_end else (was[gone:], was[:gone])
        if not at_end:
            _put(out, removed, False)
        start = _put(out, now, True)
        out.held.update(range(mine.start, mine.end))
        out.ignored.append(Hunk(start, len(out.lines), tuple(own), tuple(now), "", slot.labels))
        if at_end:
            _put(out, removed, False)
        return slot.seen(now, list(own) != list(now))
    extra = slot.extra(now)
    if extra:  # a slot of fixed size holding more lines: those least like its own are text beside it
        return _beside(out, slot, was, now, new, nsig, mine, extra)
    changed = list(was) != list(now)
    start = _put(out, now, True)
    out.held.update(range(mine.start, mine.end))
    if changed:
        out.ignored.append(Hunk(start, len(out.lines), tuple(was), tuple(now), "", slot.labels))
    return slot.seen(now, changed, was)


def _beside(out: SlottedText, slot: Slot, was: Sequence[str], now: Sequence[str], new: Sequence[str],
            nsig: Sequence[str], mine: Located, extra: int) -> Slot:
    """Put what a slot of fixed size holds now, *extra* lines more than its size, in the text the
    diff is made from: the lines that are not its own (:func:`.strays.strays`) are text beside it,
    shown as the change they are (added, or kept where the old text held them too: no change);
    the slot after it, anchored anew when they stand at one of its ends."""
    gone = slot.extra(was)
    # the old lines beside it first (those the new text holds too, then those least like its new lines)
    lost = set(strays(was, gone, [line for line in now if line not in was] or now, set(now))) if gone else set()
    mine_own = [line for i, line in enumerate(was) if i not in lost]
    foreign = set(strays(now, extra, mine_own, set(was) if gone else ()))
    _put(out, [line for i, line in enumerate(was) if i in lost and line not in now], False)  # removed beside it
    start, own = len(out.lines), []
    for i, line in enumerate(now):
        if i not in foreign:
            _put(out, [line], True)
            out.held.add(mine.start + i)
            own.append(line)
        elif line in was:  # a line both texts hold, next to lines that rotate: not the slot's
            _put(out, [line], False)
    out.ignored.append(Hunk(start, len(out.lines), tuple(was), tuple(own), "", slot.labels))
    full = [i for i, line in enumerate(now) if line.strip()]
    if any(now[i] in was for i in foreign):
        pass  # text that stood beside it: the slot stays where it was found (a pair of loads showing a paragraph)
    elif set(full[:extra]) == foreign:
        slot = anchored(slot, new, nsig, mine.start + full[extra - 1] + 1, mine.end)
    elif set(full[len(full) - extra:]) == foreign:
        slot = anchored(slot, new, nsig, mine.start, mine.start + full[len(full) - extra])
    return slot.seen(own, own != mine_own)


def _removed_end(was: Sequence[str], now: Sequence[str], gone: int) -> bool | None:
    """Which end of *was* (a fixed slot's old lines, *gone* more than its size) holds text removed
    next to the slot: True the end, False the start, None neither. Removed text is not in the new
    text: an end whose lines the slot holds now (a block the loads seen so far all showed alike,
    absent now) is the slot's own, not a paragraph removed beside it."""
    shown = set(now)
    ends = [end for end, lines in ((True, was[len(was) - gone:]), (False, was[:gone]))
            if not any(line in shown for line in lines if line.strip())]
    if len(ends) < 2:
        return ends[0] if ends else None
    return _like(now, was[:len(was) - gone]) >= _like(now, was[gone:])


def _like(lines: Sequence[str], other: Sequence[str]) -> float:
    """How alike two runs of lines look (by their lengths): higher is more alike."""
    def mean(run: Sequence[str]) -> float:
        kept = [len(line) for line in run if line.strip()]
        return sum(kept) / len(kept) if kept else 0.0
    return -abs(mean(lines) - mean(other))


def _put(out: SlottedText, lines: Sequence[str], covered: bool) -> int:
    start = len(out.lines)
    out.lines.extend(lines)
    out.sigs.extend(signatures(lines))
    if covered:
        out.covered.update(range(start, len(out.lines)))
    return start


def aligned(old: Sequence[str], osig: Sequence[str], new: Sequence[str], nsig: Sequence[str],
             learned: Learned) -> tuple[SlottedText, list[Hunk]]:
    """The old text slotted (:func:`_slotted`) and its hunks against the new text. A slot whose
    new lines the diff would show as removed (they stand elsewhere in the new text: an anchor
    whose signature another line shares, slots out of order) keeps its old lines: a diff removes
    only lines of the old text."""
    plain: frozenset[int] = frozenset()
    while True:
        base = slotted(old, osig, new, nsig, learned.slots, plain)
        found = hunks(base.lines, new, learned.lines)
        wrong = {base.owners[i] for hunk in found for i in range(hunk.start, hunk.end)
                 if i in base.owners and signature(base.lines[i]) not in learned.lines} - plain
        if not wrong:
            return base, found
        plain |= wrong


def groups(found: Sequence[Hunk]) -> list[tuple[int, int]]:
    """The runs of the old text *found* changes, those :data:`MERGE_GAP` lines apart as one."""
    runs: list[tuple[int, int]] = []
    for hunk in found:
        if runs and hunk.start - runs[-1][1] <= MERGE_GAP:
            runs[-1] = (runs[-1][0], hunk.end)
        else:
            runs.append((hunk.start, hunk.end))
    return runs
