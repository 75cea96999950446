"""Calibration: what a key's loads fetched seconds apart teach of its variation (:mod:`.learned`).

Two things are kept while they differ from the baseline's (which stays the same through a key's
calibration loads):

- each signature's sightings: a line that came and went twice or showed two new texts (a counter)
  is volatile wherever it stands;
- each *span*, a run of the baseline's lines that differed in some load (runs that touch are
  one: a reshuffled list), with the hashes of what the loads showed there: a span that held
  two texts other than the baseline's, or went back to the baseline's, is a slot, anchored on
  the nearest lines around it that never differed.

A line or a span that changed once and stayed so is a real change: it is not learned (the
baseline stays: the next run reports it).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Sequence

from .learned import fingerprint, noisiness, with_variants
from .learned_state import MAX_CANDIDATES, Learned, Sighting, Span, signatures, text_hash
from .slots import MAX_SLOTS, Slot, content_hash, locate_all, sample_of, slot_between

__all__ = ["calibrate"]

#: the hashes a span keeps of what it held
_PRINTS = 4


def _sightings(lines: Sequence[str], sigs: Sequence[str]) -> dict[str, tuple[set[str], set[str], set[str]]]:
    """Per signature of *lines*: its texts, and the signatures of the lines before and after it."""
    kept = [(line, sig) for line, sig in zip(lines, sigs, strict=True) if line.strip()]
    seen: dict[str, tuple[set[str], set[str], set[str]]] = {}
    for i, (line, sig) in enumerate(kept):
        texts, before, after = seen.setdefault(sig, (set(), set(), set()))
        texts.add(text_hash(line, 4))
        before.add(kept[i - 1][1] if i else "^")
        after.add(kept[i + 1][1] if i + 1 < len(kept) else "$")
    return seen


def _merged(old: tuple[str, ...], new: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*old, *sorted(new))))[:3]


def _varies(sighting: Sighting) -> bool:
    """Seen come and go twice, or in two texts the baseline does not have: it varies. Once: a change, not a variation.
    (A block that moves, a shuffled list, is a slot: :func:`_slots_learned`.)"""
    _, flips, texts, _, _ = sighting
    return flips >= 2 or len(texts) >= 2


def _lines_learned(learned: Learned, old: Sequence[str], osig: Sequence[str], new: Sequence[str],
                   nsig: Sequence[str]) -> Learned:
    base, here = _sightings(old, osig), _sightings(new, nsig)
    calibration = dict(learned.calibration)
    volatile: set[str] = set()
    for sig in {*base, *here, *calibration}:
        known = base.get(sig)
        start: Sighting = ((1, 0, (), tuple(sorted(known[1])), tuple(sorted(known[2])))
                           if known is not None else (0, 0, (), (), ()))
        present, flips, texts, before, after = calibration.get(sig, start)
        now = here.get(sig)
        sighting: Sighting = (int(now is not None), flips + (int(now is not None) != present),
                              *((texts, before, after) if now is None else
                                (_merged(texts, now[0] - (known[0] if known else set())), _merged(before, now[1]),
                                 _merged(after, now[2]))))
        if sighting != start:
            calibration[sig] = sighting
        if _varies(sighting):
            volatile.add(sig)
    if len(calibration) > MAX_CANDIDATES:
        calibration = dict(list(calibration.items())[-MAX_CANDIDATES:])
    return dataclasses.replace(learned, calibration=calibration).with_lines(volatile)


def _spans(known: Sequence[Span], changed: Sequence[tuple[int, int]]) -> list[Span]:
    """*known* spans and the runs *changed* in this load, those that overlap or touch merged (what
    they held merged too): a reshuffled list is one span once each of its lines moved in a load."""
    runs = sorted([*known, *((s, e, (), "", 0, 0, -1) for s, e in changed)], key=lambda x: x[0])
    out: list[Span] = []
    for span in runs:
        if out and span[0] <= out[-1][1]:
            s, e, prints, last, flips, most, _ = out[-1]
            out[-1] = (s, max(e, span[1]), tuple(dict.fromkeys((*prints, *span[2])))[:_PRINTS], last or span[3],
                       max(flips, span[4]), max(most, span[5]), -1)  # its size: from here on
        else:
            out.append(span)
    return out


def _seen(span: Span, old: Sequence[str], new: Sequence[str], where: dict[int, int]) -> Span:
    """*span* after this load, which held ``new[...]`` between the lines around it."""
    start, end, prints, last, flips, most, least = span
    base = content_hash(old[start:end])
    first = _mapped(where, start - 1, -1, -1) + 1
    stop = _mapped(where, end, 1, len(new)) if end < len(old) else len(new)
    held = new[first:max(first, stop)]
    now = content_hash(held)
    prints = tuple(dict.fromkeys((base, *prints, now)))[:_PRINTS]
    size = sum(1 for line in held if line.strip())
    if least < 0:  # new (or merged): what the baseline held there counts as seen
        least = sum(1 for line in old[start:end] if line.strip())
        most = max(most, least)
    return start, end, prints, now, flips + int(now != (last or base)), max(most, size), min(least, size)


def _mapped(where: dict[int, int], at: int, step: int, edge: int) -> int:
    """Where the nearest line of the baseline from *at* on (by *step*) the load also has stands in it."""
    while at >= 0 and at not in where:
        at += step
        if step > 0 and at > max(where, default=-1):
            return edge
    return where.get(at, edge)


def _is_slot(prints: tuple[str, ...], flips: int) -> bool:
    """Held two texts other than the baseline's, or went back to it: it varies."""
    return len(prints) >= 3 or flips >= 2


def _slots_learned(learned: Learned, old: Sequence[str], osig: Sequence[str], new: Sequence[str]) -> Learned:
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    where: dict[int, int] = {}
    changed: list[tuple[int, int]] = []
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag == "equal":
            where.update((i1 + k, j1 + k) for k in range(i2 - i1))
        else:
            changed.append((i1, i2))
    held = [(loc.start, loc.end) for loc in locate_all(learned.slots, osig)]
    changed = [(s, e) for s, e in changed if not any(a <= s and e <= b for a, b in held)]
    basis = text_hash("\n".join(old))
    known = learned.spans if learned.basis == basis else ()
    spans = [_seen(span, old, new, where) for span in _spans(known, changed)]
    taught = []
    for start, end, prints, _, flips, most, least in spans:
        if _is_slot(prints, flips):
            taught.append(slot_between(old, osig, start, end, set(), learned.lines, most=most, least=least,
                                       varied=max(flips, len(prints) - 1), sample=sample_of(old[start:end])))
    # a slot this calibration learned again, wider or anchored elsewhere, replaces the one it had
    ours = {slot.anchors for slot in taught}
    kept = [slot for slot in learned.slots if slot.anchors in ours
            or not any(_overlaps(slot, old, osig, s, e) for s, e, *_ in spans if s < e)]
    return dataclasses.replace(learned, slots=tuple(kept[:MAX_SLOTS]), spans=tuple(spans[:MAX_SLOTS]),
                               basis=basis).with_slots(taught)


def _overlaps(slot: Slot, old: Sequence[str], osig: Sequence[str], start: int, end: int) -> bool:
    found = locate_all([slot], osig)
    return bool(found) and found[0].start < end and start < found[0].end


def calibrate(baseline_text: str, load_text: str, learned: Learned | None) -> Learned:
    """*learned* after one calibration load (fetched seconds after the baseline) of the same key:
    the lines and the slots that varied, by the module's rules."""
    learned = learned or Learned()
    old, new = baseline_text.split("\n"), load_text.split("\n")
    osig, nsig = signatures(old), signatures(new)
    learned = _lines_learned(learned, old, osig, new, nsig)
    learned = _slots_learned(dataclasses.replace(learned, calibrated=learned.calibrated + 1), old, osig, new)
    held = [i for loc in locate_all(learned.slots, osig) for i in range(loc.start, loc.end)]
    learned = dataclasses.replace(learned, variants=with_variants(learned, fingerprint(old, learned, held)))
    learned, _ = noisiness(learned, new, nsig)
    return learned
