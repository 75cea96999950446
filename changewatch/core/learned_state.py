"""What is learned of one key's variation, as it is kept (core/learned.py says what it is and
how it is used): its slots, its volatile line signatures, what calibration and normal runs saw,
its recent variants. JSON-able; bounded. Nothing here imports Scrapy."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from hashlib import blake2b
from typing import Any

from .slots import MAX_SLOTS, Slot

__all__ = ["FLIPPING_AFTER", "FLIPPING_WINDOW", "MAX_CANDIDATES", "MAX_FLIPS", "MAX_LINES",
           "MAX_VARIANTS", "MERGE_GAP", "NOISY_MIN_LINES", "NOISY_SHARE", "REWRITE_SHARE",
           "VOLATILE_AFTER", "WINDOW", "Learned", "Sighting", "Span", "replaced", "signature", "signatures",
           "text_hash"]

MAX_LINES = 2000
MAX_CANDIDATES = 2000
MAX_VARIANTS = 8
MAX_FLIPS = 400
#: a key keeps flipping when FLIPPING_AFTER of its last FLIPPING_WINDOW changed observations flipped back
FLIPPING_AFTER = 3
FLIPPING_WINDOW = 8
VOLATILE_AFTER = 3
WINDOW = 4
#: hunks this few equal lines apart are learned as one slot in normal runs (a reshuffled list
#: whose one item stayed in place)
MERGE_GAP = 1
#: a page is always noisy when this share of its lines (of at least NOISY_MIN_LINES) varies
NOISY_SHARE = 0.9
NOISY_MIN_LINES = 3
#: a change between runs that rewrites more than this share of the page's lines is a new edition of
#: the page (a daily page), never counted as where it varies: only two loads of the same content
#: (calibration, confirmation) show that nearly every line varies
REWRITE_SHARE = 0.5

_NUMBER = re.compile(r"\d+(?:[.,\u00a0\u202f]\d+)*")


def text_hash(text: str, size: int = 6) -> str:
    """A short hash of *text* (*size* bytes, in hex)."""
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=size).hexdigest()


def signature(line: str) -> str:
    """A line as learned: case, spacing and numbers collapsed, hashed.

    >>> signature("1,204 readers") == signature("12 Readers") != signature("12 writers")
    True
    """
    return text_hash(_NUMBER.sub("#", " ".join(line.split()).casefold()))


def signatures(lines: Sequence[str]) -> list[str]:
    return [signature(line) if line.strip() else "" for line in lines]


#: what a calibration load saw of one signature: (present in the last load, times it appeared or
#: went, its texts the baseline does not have, the signatures before it, the signatures after
#: it); the last three ≤ 3 each
Sighting = tuple[int, int, tuple[str, ...], tuple[str, ...], tuple[str, ...]]
#: a run of the baseline's lines that differed in calibration loads: (start, end, the hashes of
#: what it held (the baseline's first; ≤ 4), the last of them, times it changed, the most and the
#: fewest lines it held (-1: not seen yet)
Span = tuple[int, int, tuple[str, ...], str, int, int, int]


@dataclass(frozen=True, slots=True)
class Learned:
    """What is learned of one key's variation (kept in its content part; JSON-able)."""

    lines: frozenset[str] = frozenset()
    slots: tuple[Slot, ...] = ()
    #: signature or "@before:after:nth" → indices of the changed observations it changed in (≤ VOLATILE_AFTER)
    candidates: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    #: signature → what calibration loads saw of it (:data:`Sighting`), when it differs from the baseline
    calibration: Mapping[str, Sighting] = field(default_factory=dict)
    #: runs of the calibration baseline's lines that differed (:data:`Span`), and that baseline's hash
    spans: tuple[Span, ...] = ()
    basis: str = ""
    variants: tuple[str, ...] = ()
    #: changed observations compared so far (the candidates' clock)
    changes: int = 0
    calibrated: int = 0
    #: 0: no; 1: every line varies, not reported yet; 2: reported
    noisy: int = 0
    #: a line's hash (spacing aside, numbers kept) → how changed observations saw it: 1 removed,
    #: 2 added, 3 both (≤ MAX_FLIPS, the latest kept): a place whose lines come back flips
    flips: Mapping[str, int] = field(default_factory=dict)
    #: the changed observations (their index, the candidates' clock) that flipped back (≤ FLIPPING_AFTER)
    flipped: tuple[int, ...] = ()
    #: 0: not flipping; n: it keeps flipping (its ``health: flipping:`` condition is open), and
    #: n - 1 observations in a row did not flip back
    flipping: int = 0

    @property
    def empty(self) -> bool:
        return not (self.lines or self.slots or self.candidates or self.calibration or self.variants
                    or self.calibrated or self.noisy or self.flips)

    @property
    def provisional(self) -> bool:
        return any(slot.provisional for slot in self.slots)

    def encode(self) -> dict[str, Any]:
        data = {"lines": sorted(self.lines), "slots": [slot.encode() for slot in self.slots],
                "candidates": {k: list(v) for k, v in self.candidates.items()},
                "calibration": {k: [p, f, list(t), list(b), list(a)]
                                for k, (p, f, t, b, a) in self.calibration.items()},
                "variants": list(self.variants), "changes": self.changes, "calibrated": self.calibrated,
                "noisy": self.noisy}
        if self.flips:
            data["flips"] = dict(self.flips)
        if self.flipped or self.flipping:
            data["flipped"], data["flipping"] = list(self.flipped), self.flipping
        if self.spans:
            data["spans"] = [[s, e, list(p), last, f, m, n] for s, e, p, last, f, m, n in self.spans]
            data["basis"] = self.basis
        return data

    @classmethod
    def decode(cls, data: Any) -> Learned | None:
        if not isinstance(data, dict):
            return None
        try:
            slots = [Slot.decode(s) for s in data.get("slots") or ()]
            # what an older version learned as regions ("before:after" anchors → sample) are slots
            slots += [Slot(k.partition(":")[0], k.partition(":")[2], sample=str(v))
                      for k, v in (data.get("regions") or {}).items()]
            return cls(frozenset(map(str, data.get("lines") or ())), tuple(slots[:MAX_SLOTS]),
                       {str(k): tuple(int(i) for i in v) for k, v in (data.get("candidates") or {}).items()},
                       {str(k): (int(v[0]), int(v[1]), tuple(map(str, v[2])), tuple(map(str, v[3])),
                                 tuple(map(str, v[4]))) for k, v in (data.get("calibration") or {}).items()},
                       tuple((int(s), int(e), tuple(map(str, p)), str(last), int(f), int(m), int(n))
                             for s, e, p, last, f, m, n in data.get("spans") or ()),
                       str(data.get("basis") or ""), tuple(map(str, data.get("variants") or ())),
                       int(data.get("changes") or 0), int(data.get("calibrated") or 0), int(data.get("noisy") or 0),
                       {str(k): int(v) for k, v in (data.get("flips") or {}).items()},
                       tuple(int(i) for i in data.get("flipped") or ()), int(data.get("flipping") or 0))
        except (TypeError, ValueError, IndexError, AttributeError):
            return None

    def with_lines(self, lines: Iterable[str]) -> Learned:
        """These signatures learned as volatile too, within the cap."""
        merged = set(self.lines)
        for sig in lines:
            if len(merged) >= MAX_LINES:
                break
            merged.add(sig)
        return replaced(self, lines=frozenset(merged))

    def with_slots(self, slots: Iterable[Slot]) -> Learned:
        """These slots learned too (one of the same anchors replaces the one known), within the cap."""
        kept = {slot.anchors: slot for slot in self.slots}
        for slot in slots:
            if slot.anchors in kept or len(kept) < MAX_SLOTS:
                kept[slot.anchors] = slot
        return replaced(self, slots=tuple(kept.values()))


def replaced(learned: Learned, **changes: Any) -> Learned:
    return dataclasses.replace(learned, **changes)


