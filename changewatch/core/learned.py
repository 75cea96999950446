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
removes and adds is a volatile signature, so an edit in stable text always shows. The old text
as the slots put it, and its hunks against the new one, are :mod:`.learned_text`'s; places that
flip back, :mod:`.learned_flips`'s. Nothing here imports Scrapy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .learned_edit import forget_slot, learn_noise, numbered, without
from .learned_flips import Changed, Slotted, held_back, noted, streak
from .learned_state import (
    MAX_CANDIDATES,
    MAX_LINES,
    MAX_VARIANTS,
    NOISY_MIN_LINES,
    NOISY_SHARE,
    REWRITE_SHARE,
    VOLATILE_AFTER,
    WINDOW,
    Learned,
    Sighting,
    replaced,
    signature,
    signatures,
    text_hash,
)
from .learned_text import Hunk, SlottedText, aligned, groups, hunks, slotted
from .slots import MAX_KEPT_LINES, MAX_SLOTS, Slot, content_hash, locate_all, positions, slot_between
from .strays import sized

__all__ = ["MAX_CANDIDATES", "MAX_LINES", "MAX_SLOTS", "MAX_VARIANTS", "Hunk", "Learned", "Learning", "Sighting",
           "Slot", "between_loads", "changed_lines", "fingerprint", "forget_slot", "hunks", "judge", "learn_noise",
           "noisiness", "numbered", "signature", "signatures", "text_hash", "with_variants", "without"]


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
    #: the provisional slots holding what flipped back (:mod:`.learned_flips`; none: it did not),
    #: and whether its key's flipping streak ``began`` or is ``over``
    held: tuple[Slot, ...] = ()
    flipping: str | None = None
    #: the positions in the new text that a slot holds
    slotted: frozenset[int] = frozenset()

    @property
    def flipped(self) -> bool:
        return bool(self.held)

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


def judge(old_text: str, new_text: str, learned: Learned | None, *, counted: bool = True,
          hold: bool | None = None) -> Learning:
    """What the learned model makes of a change *old_text* → *new_text* in a normal run, and what
    it learns from it (the learned state to keep). What a slot holds is ignored; a hunk outside
    the slots whose lines are all volatile is ignored whole; in any other, its volatile lines are
    ignored and the rest of it is a change. A change not *counted* (one that two loads of the page
    confirmed: content, however often the page changes between runs) counts toward nothing
    learned as varying.

    A place that flips back (:mod:`.learned_flips`) is held as a provisional slot only in an
    observation that is otherwise no change (*hold* None): its noise verdict keeps the stored
    text, so the next run judges the place from the kept baseline. An observation that is a
    change is kept as a version, the flip with it: the flip is part of its change, and nothing is
    held past a version. *hold* True holds it whatever else changed (a confirmation weighing what
    both loads show), False never."""
    learned = learned or Learned()
    old, new = old_text.split("\n"), new_text.split("\n")
    osig, nsig = (signatures(old), signatures(new)) if learned.slots else ([], [])
    base, found = aligned(old, osig, new, nsig, learned)
    split = [None if hunk.covered(learned) else _split(hunk, learned) for hunk in found]
    after = replaced(learned, slots=tuple(s for s in base.slots if s is not None))
    held, taught, flips = _flipped_back(base, found, split, new, nsig, learned)
    prints = (fingerprint(base.lines, after, base.covered),
              fingerprint(new, after, base.held))
    others = any(parts is not None and i not in held for i, parts in enumerate(split))
    # a return that stayed put is an edit reverted: reported, though its text is a recent variant
    known = others and prints[1] in learned.variants and not base.stayed
    if hold is False or (hold is None and others and not known):
        held, taught = set(), []
    after = replaced(after, flips=flips).with_slots(taught)
    ignored: list[Hunk] = []
    remaining: list[Hunk] = []
    shown: list[tuple[str, ...]] = []
    for i, (hunk, parts) in enumerate(zip(found, split, strict=True)):
        if parts is None or i in held:
            ignored.append(hunk)
            shown.append(hunk.added)  # as if it had happened: its lines are the new text's
            continue
        quiet, rest = parts
        if quiet is not None:
            ignored.append(quiet)
        remaining.append(rest)
        shown.append(_applied(hunk, rest) if quiet is not None else hunk.removed)
    if remaining:
        after = _counted(after, remaining if counted else (), base)
    after = replaced(after, variants=with_variants(after, *prints))
    after, noisy = noisiness(after, new, nsig or None)
    after, flipping = streak(after, bool(held), learned.changes + 1)
    ignored = base.ignored + ignored
    slotted = base.ignored or len(base.lines) != len(old) or base.lines != old
    shown_from = _shown_from(base.lines, found, shown) if ignored or slotted else old_text
    return Learning(tuple(remaining), tuple(ignored), after, known, shown_from, noisy, tuple(taught), flipping,
                    frozenset(base.held))


def _flipped_back(base: SlottedText, found: Sequence[Hunk], split: Sequence[tuple[Hunk | None, Hunk] | None],
                  new: Sequence[str], nsig: Sequence[str],
                  learned: Learned) -> tuple[set[int], list[Slot], dict[str, int]]:
    """The hunks (indexes in *found*) of each run of changed lines that flips back to what the key
    showed before (:mod:`.learned_flips`), the provisional slots that would hold them, and the
    key's flip notes with every changed line noted."""
    changes = [Changed(i, found[i].start, found[i].end, parts[1].removed, parts[1].added)
               for i, parts in enumerate(split) if parts is not None]
    if not changes:
        return set(), [], dict(learned.flips)
    sigs = base.sigs if len(base.sigs) == len(base.lines) else signatures(base.lines)
    text = Slotted(base.lines, sigs, base.covered, base.stayed)
    held, taught = held_back(text, changes, learned.flips, learned.lines, new, nsig or signatures(new))
    flips = noted(learned.flips, [line for c in changes for line in c.removed],
                  [line for c in changes for line in c.added])
    return held, taught, flips


def changed_lines(learned: Learned | None, old_text: str, new_text: str) -> Learned:
    """*learned* with the lines a change *old_text* → *new_text* removed and added noted, so that
    a place flipping back is known (:mod:`.learned_flips`) from a key's first reported change."""
    learned = learned or Learned()
    found = hunks(old_text.split("\n"), new_text.split("\n"))
    return replaced(learned, flips=noted(learned.flips, [line for h in found for line in h.removed],
                                         [line for h in found for line in h.added]))


def _counted(learned: Learned, remaining: Sequence[Hunk], base: SlottedText) -> Learned:
    """*learned* after a changed observation with these hunks: their signatures and places count
    one change more; those that changed in VOLATILE_AFTER of the last WINDOW are volatile. A change
    that rewrites most of the page (more than REWRITE_SHARE of its lines) counts nothing."""
    now = learned.changes + 1
    lines = sum(1 for line in base.lines if line.strip())
    rewritten = max(sum(1 for hunk in remaining for line in getattr(hunk, side) if line.strip())
                    for side in ("removed", "added"))
    if remaining and rewritten > REWRITE_SHARE * lines:
        remaining = ()
    candidates = {k: v for k, v in learned.candidates.items() if v and v[-1] > now - WINDOW}
    volatile_lines: set[str] = set()
    new_slots: list[Slot] = []
    places = {}
    sigs = base.sigs if len(base.sigs) == len(base.lines) else signatures(base.lines)
    changed = {i for hunk in remaining for i in range(hunk.start, hunk.end)}
    for start, end in groups(remaining):
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
    base = slotted(first, fsig, second, ssig, learned.slots)
    learned = replaced(learned, slots=tuple(sized(s, (first, fsig), (second, ssig)) for s in base.slots
                                            if s is not None))
    found = hunks(base.lines, second, learned.lines)
    where = positions(ssig)
    taught = []
    changed = {i for hunk in found for i in range(hunk.start, hunk.end)}
    for start, end in groups(found):
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
