"""Calibration: what a key's loads fetched seconds apart teach of its variation (:mod:`.learned`).

Each signature's sightings are kept while they differ from the baseline's: a line that came and
went twice, showed three texts (a counter) or moved (other lines on both sides from load to load)
is volatile; a line that changed once and stayed so is a real change, reported by the next run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from .learned import (
    MAX_CANDIDATES,
    Learned,
    Sighting,
    fingerprint,
    hunks,
    noisiness,
    signature,
    text_hash,
    with_variants,
)

__all__ = ["calibrate"]


def _sightings(lines: Sequence[str]) -> dict[str, tuple[set[str], set[str], set[str]]]:
    """Per signature of *lines*: its texts, and the signatures of the lines before and after it."""
    kept = [line for line in lines if line.strip()]
    sigs = [signature(line) for line in kept]
    seen: dict[str, tuple[set[str], set[str], set[str]]] = {}
    for i, sig in enumerate(sigs):
        texts, before, after = seen.setdefault(sig, (set(), set(), set()))
        texts.add(text_hash(kept[i], 4))
        before.add(sigs[i - 1] if i else "^")
        after.add(sigs[i + 1] if i + 1 < len(sigs) else "$")
    return seen


def _merged(old: tuple[str, ...], new: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*old, *sorted(new))))[:3]


def _varies(sighting: Sighting) -> bool:
    """Seen come and go twice, in three texts, or between other lines on both sides (a block
    that moves, a shuffled list): it varies. Once: a change, not a variation."""
    _, flips, texts, before, after = sighting
    return flips >= 2 or len(texts) >= 3 or (len(before) >= 2 and len(after) >= 2)


def calibrate(baseline_text: str, load_text: str, learned: Learned | None) -> Learned:
    """*learned* after one calibration load (fetched seconds after the baseline) of the same key.
    Each signature's sightings are kept (only those that differ from the baseline's): a line that
    came and went twice, showed three texts, or moved is volatile; a line that changed once and
    stayed so is a real change and is not learned (the baseline stays: the next run reports it)."""
    learned = learned or Learned()
    old, new = baseline_text.split("\n"), load_text.split("\n")
    base, here = _sightings(old), _sightings(new)
    calibration = dict(learned.calibration)
    volatile: set[str] = set()
    for sig in {*base, *here, *calibration}:
        known = base.get(sig)
        start: Sighting = ((1, 0, tuple(sorted(known[0])), tuple(sorted(known[1])), tuple(sorted(known[2])))
                           if known is not None else (0, 0, (), (), ()))
        present, flips, texts, before, after = calibration.get(sig, start)
        now = here.get(sig)
        sighting: Sighting = (int(now is not None), flips + (int(now is not None) != present),
                              *((texts, before, after) if now is None else
                                (_merged(texts, now[0]), _merged(before, now[1]), _merged(after, now[2]))))
        if sighting != start:
            calibration[sig] = sighting
        if _varies(sighting):
            volatile.add(sig)
    if len(calibration) > MAX_CANDIDATES:
        calibration = dict(list(calibration.items())[-MAX_CANDIDATES:])
    after_load = dataclasses.replace(learned, calibration=calibration, calibrated=learned.calibrated + 1)
    after_load = after_load.with_lines(volatile)
    regions = {h.anchors: h.sample() for h in hunks(old, new, after_load.lines)
               if h.signatures() and h.signatures() <= after_load.lines}
    after_load = after_load.with_lines((), regions)
    after_load = dataclasses.replace(after_load, variants=with_variants(after_load, fingerprint(old, after_load)))
    after_load, _ = noisiness(after_load, new)
    return after_load
