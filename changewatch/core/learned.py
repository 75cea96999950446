"""Learned noise: where a key's stable text varies from load to load, learned per key.

The stable text is lines. One model, *slots* (core/slots.py): a slot is the run of lines between
two stable lines (its anchors: the nearest lines before and after it that do not vary), and
whatever it holds is ignored while its anchors are where they were and it holds no more than
twice the most lines it was seen to hold. Anchors are text, so a block is found by its heading
however its markup's class names are generated. A slot of one line that may stand anywhere is
a volatile *line*: lines read the same with their numbers collapsed (``1,204 readers`` and
``1,210 readers``) are one *signature*, and a volatile signature is ignored wherever it stands
(a counter, a line that moves). What is learned:

- ``slots``: where the text varies, by their anchors, the most lines held and how often they varied;
- ``lines``: signatures known to vary wherever they stand;
- ``candidates``: signatures and anchors seen changing in normal runs, with the index of the
  observation, until they changed in :data:`VOLATILE_AFTER` of the last :data:`WINDOW` changed
  observations (text that changed once is not volatile);
- ``calibration`` and ``spans``: what the calibration loads (:mod:`.calibration`) saw of each
  signature and of each run of the baseline's lines that differed;
- ``variants``: fingerprints of the last :data:`MAX_VARIANTS` texts without what varies: an A/B
  page flipping back to one of them is not reported again.

A slot whose anchors are gone or moved, or that grew beyond twice its size, is a change: it is
reported once, then relearned. A hunk outside the slots is ignored only when every line it
removes and adds is a volatile signature, so an edit in stable text always shows. Nothing here
imports Scrapy.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .learned_edit import forget_slot, learn_noise, numbered, without
from .learned_state import (
    MAX_CANDIDATES,
    MAX_LINES,
    MAX_VARIANTS,
    MERGE_GAP,
    NOISY_MIN_LINES,
    NOISY_SHARE,
    VOLATILE_AFTER,
    WINDOW,
    Learned,
    Sighting,
    replaced,
    signature,
    signatures,
    text_hash,
)
from .slots import (
    MAX_KEPT_LINES,
    MAX_SLOTS,
    Located,
    Slot,
    anchored,
    content_hash,
    joined,
    locate_all,
    loose,
    positions,
    sample_of,
    slot_between,
)
from .steady import split_steady

__all__ = ["MAX_CANDIDATES", "MAX_LINES", "MAX_SLOTS", "MAX_VARIANTS", "Hunk", "Learned", "Learning", "Sighting",
           "Slot", "between_loads", "fingerprint", "forget_slot", "hunks", "judge", "learn_noise", "noisiness",
           "numbered", "signature", "signatures", "text_hash", "with_variants", "without"]


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


def fingerprint(lines: Sequence[str], learned: Learned, skip: Iterable[int] = ()) -> str:
    """The text without what varies (its volatile lines, the lines at *skip*), hashed: what an A/B
    variant is remembered by."""
    skipped = set(skip)
    return text_hash("\n".join(line for i, line in enumerate(lines)
                               if i not in skipped and signature(line) not in learned.lines), 8)


@dataclass(frozen=True, slots=True)
class Learning:
    """The verdict of the learned model on one changed text."""

    #: the hunks that remain a change (none: the text moved within its learned variation)
    remaining: tuple[Hunk, ...]
    ignored: tuple[Hunk, ...]
    learned: Learned
    #: a text recently seen (an A/B variant flipping back)
    known_variant: bool = False
    #: the old text with what was ignored as the new text has it: what the diff is shown from,
    #: so every line it shows as unchanged is a line of the new text
    shown_from: str = ""
    #: nearly every line of the page varies: reported once as ``noisy:``
    noisy: str | None = None

    @property
    def ignored_regions(self) -> dict[str, Any]:
        slots = [{"before": h.labels[0], "after": h.labels[1], "sample": h.sample()}
                 for h in self.ignored if h.labels is not None]
        return {"count": len(self.ignored), "sample": " | ".join(h.sample() for h in self.ignored[:3]),
                "slots": slots}


def with_variants(learned: Learned, *prints: str) -> tuple[str, ...]:
    """*learned*'s recent variants with *prints* the latest, within the cap."""
    kept = [v for v in learned.variants if v not in prints]
    return (*kept, *dict.fromkeys(prints))[-MAX_VARIANTS:]


def _shown_from(old: Sequence[str], found: Sequence[Hunk], replaced: Sequence[tuple[str, ...]]) -> str:
    """*old* with each hunk's lines replaced by *replaced* (hunks are in order)."""
    out: list[str] = []
    at = 0
    for hunk, lines in zip(found, replaced, strict=True):
        out.extend(old[at:hunk.start])
        out.extend(lines)
        at = hunk.end
    out.extend(old[at:])
    return "\n".join(out)


def _split(hunk: Hunk, learned: Learned) -> tuple[Hunk | None, Hunk]:
    """A hunk's volatile lines (ignored; None: it has none) and the rest of it (a change)."""
    def volatile(line: str) -> bool:
        return not line.strip() or signature(line) in learned.lines

    quiet = Hunk(hunk.start, hunk.end, tuple(x for x in hunk.removed if volatile(x)),
                 tuple(x for x in hunk.added if volatile(x)), hunk.anchors)
    rest = Hunk(hunk.start, hunk.end, tuple(x for x in hunk.removed if not volatile(x)),
                tuple(x for x in hunk.added if not volatile(x)), hunk.anchors)
    return (quiet if quiet.signatures() else None), rest


def _applied(hunk: Hunk, rest: Hunk) -> tuple[str, ...]:
    """What the diff is shown from of a hunk partly ignored: its new lines (so its ignored
    lines are shown as the page has them now), with the changed old lines (*rest*'s) put back
    where the first changed new line stands."""
    lines = list(hunk.added)
    at = next((i for i, line in enumerate(lines) if line in rest.added), len(lines))
    kept = [line for line in lines if line not in rest.added]
    at = min(at, len(kept))
    return (*kept[:at], *rest.removed, *kept[at:])


@dataclass(slots=True)
class _Slotted:
    """The old text with each slot found in both texts holding what the new text holds there."""

    lines: list[str]
    sigs: list[str]
    covered: set[int]  # positions in *lines* a slot holds
    ignored: list[Hunk]
    slots: list[Slot | None]  # the learned slots after this observation (None: dropped)
    held: set[int] = field(default_factory=set)  # positions in the new text a slot holds
    owners: dict[int, int] = field(default_factory=dict)  # covered positions: the slot's index


def _slotted(old: Sequence[str], osig: Sequence[str], new: Sequence[str], nsig: Sequence[str],
             slots: Sequence[Slot], plain: frozenset[int] = frozenset()) -> _Slotted:
    """The old text with what each slot holds in the new text in its place; the slots at *plain*
    (indexes) keep their old lines and stay as they were."""
    if len(slots) > 1:
        slots = joined(slots, old, osig, new, nsig)
    kept: list[Slot | None] = list(slots)
    in_old, in_new = locate_all(slots, osig), locate_all(slots, nsig)
    where = {loc.index: loc for loc in in_new}
    out = _Slotted([], [], set(), [], kept)
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
                _put(out, slot.was if slot.was and content_hash(was) == slot.stayed else was, False)
                continue
            slot = dataclasses.replace(slot, stayed="", was=())  # new again: it varies
        mark = len(out.lines)
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


def _held(out: _Slotted, slot: Slot, was: Sequence[str], now: Sequence[str], new: Sequence[str],
          nsig: Sequence[str], mine: Located) -> Slot:
    """Put what *slot* holds now in the text the diff is made from; the slot after it."""
    if slot.grown(now):  # beyond twice its size: a change, then its new size
        _put(out, was, False)
        return slot.seen(now, True)
    if (gone := slot.extra(was)) and not slot.extra(now):
        # a slot of fixed size that held more in the old text: the old lines least like what it
        # holds now are text removed next to it (a paragraph after an ad), not what the slot held
        at_end = _like(now, was[:len(was) - gone]) >= _like(now, was[gone:])
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
    if extra:  # a slot of fixed size holding a few more: the lines least like its own are new text
        at_end = _like(was, now[:len(now) - extra]) >= _like(was, now[extra:])
        own = now[:len(now) - extra] if at_end else now[extra:]
        start = _put(out, own, True)
        out.held.update(range(mine.start, mine.end - extra) if at_end else range(mine.start + extra, mine.end))
        out.ignored.append(Hunk(start, len(out.lines), tuple(was), tuple(own), "", slot.labels))
        if at_end:
            return anchored(slot, new, nsig, mine.start, mine.end - extra).seen(own, True)
        return anchored(slot, new, nsig, mine.start + extra, mine.end).seen(own, True)
    changed = list(was) != list(now)
    start = _put(out, now, True)
    out.held.update(range(mine.start, mine.end))
    if changed:
        out.ignored.append(Hunk(start, len(out.lines), tuple(was), tuple(now), "", slot.labels))
    return slot.seen(now, changed, was)


def _like(lines: Sequence[str], other: Sequence[str]) -> float:
    """How alike two runs of lines look (by their lengths): higher is more alike."""
    def mean(run: Sequence[str]) -> float:
        kept = [len(line) for line in run if line.strip()]
        return sum(kept) / len(kept) if kept else 0.0
    return -abs(mean(lines) - mean(other))


def _put(out: _Slotted, lines: Sequence[str], covered: bool) -> int:
    start = len(out.lines)
    out.lines.extend(lines)
    out.sigs.extend(signatures(lines))
    if covered:
        out.covered.update(range(start, len(out.lines)))
    return start


def _aligned(old: Sequence[str], osig: Sequence[str], new: Sequence[str], nsig: Sequence[str],
             learned: Learned) -> tuple[_Slotted, list[Hunk]]:
    """The old text slotted (:func:`_slotted`) and its hunks against the new text. A slot whose
    new lines the diff would show as removed (they stand elsewhere in the new text: an anchor
    whose signature another line shares, slots out of order) keeps its old lines: a diff removes
    only lines of the old text."""
    plain: frozenset[int] = frozenset()
    while True:
        base = _slotted(old, osig, new, nsig, learned.slots, plain)
        found = hunks(base.lines, new, learned.lines)
        wrong = {base.owners[i] for hunk in found for i in range(hunk.start, hunk.end)
                 if i in base.owners and signature(base.lines[i]) not in learned.lines} - plain
        if not wrong:
            return base, found
        plain |= wrong


def judge(old_text: str, new_text: str, learned: Learned | None) -> Learning:
    """What the learned model makes of a change *old_text* → *new_text* in a normal run, and what
    it learns from it (the learned state to keep). What a slot holds is ignored; a hunk outside
    the slots whose lines are all volatile is ignored whole; in any other, its volatile lines are
    ignored and the rest of it is a change."""
    learned = learned or Learned()
    old, new = old_text.split("\n"), new_text.split("\n")
    osig, nsig = (signatures(old), signatures(new)) if learned.slots else ([], [])
    base, found = _aligned(old, osig, new, nsig, learned)
    ignored: list[Hunk] = []
    remaining: list[Hunk] = []
    shown: list[tuple[str, ...]] = []
    for hunk in found:
        if hunk.covered(learned):
            ignored.append(hunk)
            shown.append(hunk.added)  # as if it had happened: its lines are the new text's
            continue
        quiet, rest = _split(hunk, learned)
        if quiet is not None:
            ignored.append(quiet)
        remaining.append(rest)
        shown.append(_applied(hunk, rest) if quiet is not None else hunk.removed)
    after = replaced(learned, slots=tuple(s for s in base.slots if s is not None))
    prints = (fingerprint(base.lines, after, base.covered),
              fingerprint(new, after, base.held))
    known = bool(remaining) and prints[1] in learned.variants
    if remaining:
        after = _counted(after, remaining, base)
    after = replaced(after, variants=with_variants(after, *prints))
    after, noisy = noisiness(after, new, nsig or None)
    ignored = base.ignored + ignored
    slotted = base.ignored or len(base.lines) != len(old) or base.lines != old
    shown_from = _shown_from(base.lines, found, shown) if ignored or slotted else old_text
    return Learning(tuple(remaining), tuple(ignored), after, known, shown_from, noisy)


def _groups(found: Sequence[Hunk]) -> list[tuple[int, int]]:
    """The runs of the old text *found* changes, those :data:`MERGE_GAP` lines apart as one."""
    runs: list[tuple[int, int]] = []
    for hunk in found:
        if runs and hunk.start - runs[-1][1] <= MERGE_GAP:
            runs[-1] = (runs[-1][0], hunk.end)
        else:
            runs.append((hunk.start, hunk.end))
    return runs


def _counted(learned: Learned, remaining: Sequence[Hunk], base: _Slotted) -> Learned:
    """*learned* after a changed observation with these hunks: their signatures and places count
    one change more; those that changed in VOLATILE_AFTER of the last WINDOW are volatile."""
    now = learned.changes + 1
    candidates = {k: v for k, v in learned.candidates.items() if v and v[-1] > now - WINDOW}
    volatile_lines: set[str] = set()
    new_slots: list[Slot] = []
    places = {}
    sigs = base.sigs if len(base.sigs) == len(base.lines) else signatures(base.lines)
    changed = {i for hunk in remaining for i in range(hunk.start, hunk.end)}
    for start, end in _groups(remaining):
        slot = slot_between(base.lines, sigs, start, end, base.covered, learned.lines, changed)
        places["@" + ":".join(map(str, slot.anchors))] = slot
    names = [*{sig for hunk in remaining for sig in hunk.signatures()}, *places]
    for name in names:
        seen = (*(i for i in candidates.get(name, ()) if i > now - WINDOW and i != now), now)
        if len(seen) >= VOLATILE_AFTER:
            candidates.pop(name, None)
            if name in places:
                new_slots.append(dataclasses.replace(places[name], varied=len(seen)))
            else:
                volatile_lines.add(name)
        else:
            candidates[name] = seen[-VOLATILE_AFTER:]
    if len(candidates) > MAX_CANDIDATES:
        candidates = dict(sorted(candidates.items(), key=lambda kv: kv[1][-1])[-MAX_CANDIDATES:])
    return replaced(learned, candidates=candidates, changes=now).with_lines(volatile_lines).with_slots(new_slots)


def noisiness(learned: Learned, new: Sequence[str], sigs: Sequence[str] | None = None) -> tuple[Learned, str | None]:
    """*learned* marked noisy, and why, when nearly every line of *new* varies (once)."""
    if learned.noisy:
        return learned, None
    sigs = signatures(new) if sigs is None else sigs
    held = {i for loc in locate_all(learned.slots, sigs) if not learned.slots[loc.index].provisional
            for i in range(loc.start, loc.end)}
    lines = [i for i, line in enumerate(new) if line.strip()]
    varying = sum(1 for i in lines if i in held or sigs[i] in learned.lines)
    if len(lines) >= NOISY_MIN_LINES and varying >= NOISY_SHARE * len(lines):
        why = f"noisy: {varying} of {len(lines)} lines of the page vary from load to load"
        return replaced(learned, noisy=1), why
    return learned, None


def between_loads(learned: Learned | None, first_text: str, second_text: str) -> Learned:
    """*learned* with what differs between two loads of the same content (a confirmation) learned
    as provisional slots: each keeps the lines the first load showed there and the hash of what
    the second showed. Judged again later, one whose text is new again varies (it is a slot from
    then on); one still holding the second load's text is a change, reported then."""
    learned = learned or Learned()
    first, second = first_text.split("\n"), second_text.split("\n")
    fsig, ssig = signatures(first), signatures(second)
    base = _slotted(first, fsig, second, ssig, learned.slots)
    learned = replaced(learned, slots=tuple(s for s in base.slots if s is not None))
    found = hunks(base.lines, second, learned.lines)
    where = positions(ssig)
    taught = []
    changed = {i for hunk in found for i in range(hunk.start, hunk.end)}
    for start, end in _groups(found):
        slot = slot_between(base.lines, base.sigs, start, end, base.covered, learned.lines, changed)
        if any(s.anchors == slot.anchors and not s.provisional for s in learned.slots):
            continue
        there, here = locate_all([slot], ssig, where), locate_all([slot], base.sigs)
        if not there or not here:
            continue
        now, was = second[there[0].start:there[0].end], base.lines[here[0].start:here[0].end]
        sizes = sum(1 for line in now if line.strip()), sum(1 for line in was if line.strip())
        # its size is what either load held there (a block the one load has and the other lacks)
        taught.append(dataclasses.replace(slot, stayed=content_hash(now), was=tuple(was[:MAX_KEPT_LINES]),
                                          most=max(sizes), least=min(sizes)))
    return learned.with_slots(taught)
