"""Learned noise: what of a key's stable text varies from load to load, learned per key.

The stable text is lines. Two lines are the same *signature* when they read the same with their
numbers collapsed (``1,204 readers`` and ``1,210 readers`` are ``# readers``), so a counter is
one line. A *region* is where a run of changed lines sits: the signatures of the nearest stable
lines before and after it (its anchors), which survive generated class names, ids with counters
and blocks that move, none of which are text. What is learned:

- ``lines``: signatures known to vary (a rotating box's items, an ad's text, a counter);
- ``regions``: anchors between which the text is replaced on nearly every load;
- ``candidates``: signatures and anchors seen changing, with the index of the observation, until
  they changed in :data:`VOLATILE_AFTER` of the last :data:`WINDOW` changed observations
  (normal runs: text that changed once is not volatile);
- ``calibration``: per signature, what the calibration loads (:mod:`.calibration`) (seconds apart) saw of it: a line
  that came and went twice, showed three texts (a counter) or moved (other lines on both sides
  from load to load) is volatile, while a line that changed once and stayed so is a real change,
  reported by the next run;
- ``variants``: fingerprints of the last :data:`MAX_VARIANTS` texts without their volatile lines:
  an A/B page flipping back to one of them is not reported again.

A hunk of the line diff is ignored when every line it removes is a volatile signature and every
line it adds is one too, or its region is volatile. A removed stable line is never ignored, so
an edit or a removal in stable text always shows. Nothing here imports Scrapy.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from hashlib import blake2b
from typing import Any

__all__ = ["MAX_CANDIDATES", "MAX_LINES", "MAX_VARIANTS", "Hunk", "Learned", "Learning", "Sighting", "fingerprint",
           "hunks", "judge", "learn_noise", "noisiness", "signature", "text_hash", "with_variants"]

MAX_LINES = 2000
MAX_REGIONS = 200
MAX_CANDIDATES = 2000
MAX_VARIANTS = 8
VOLATILE_AFTER = 3
WINDOW = 4
#: a page is always noisy when this share of its lines (of at least NOISY_MIN_LINES) is volatile
NOISY_SHARE = 0.9
NOISY_MIN_LINES = 3
_SAMPLE_CHARS = 80

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


#: what a calibration load saw of one signature: (present in the last load, times it appeared or
#: went, its texts, the signatures before it, the signatures after it); the last three ≤ 3 each
Sighting = tuple[int, int, tuple[str, ...], tuple[str, ...], tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Learned:
    """What is learned of one key's variation (kept in its content part; JSON-able)."""

    lines: frozenset[str] = frozenset()
    #: anchors ("before:after" signatures) → a short sample of the text seen there
    regions: Mapping[str, str] = field(default_factory=dict)
    #: signature or "@anchors" → indices of the changed observations it changed in (≤ VOLATILE_AFTER)
    candidates: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    #: signature → what calibration loads saw of it (:data:`Sighting`), when it differs from the baseline
    calibration: Mapping[str, Sighting] = field(default_factory=dict)
    variants: tuple[str, ...] = ()
    #: changed observations compared so far (the candidates' clock)
    changes: int = 0
    calibrated: int = 0
    #: 0: no; 1: every line varies, not reported yet; 2: reported
    noisy: int = 0

    @property
    def empty(self) -> bool:
        return not (self.lines or self.regions or self.candidates or self.calibration or self.variants
                    or self.calibrated or self.noisy)

    def encode(self) -> dict[str, Any]:
        return {"lines": sorted(self.lines), "regions": dict(self.regions),
                "candidates": {k: list(v) for k, v in self.candidates.items()},
                "calibration": {k: [p, f, list(t), list(b), list(a)]
                                for k, (p, f, t, b, a) in self.calibration.items()},
                "variants": list(self.variants), "changes": self.changes, "calibrated": self.calibrated,
                "noisy": self.noisy}

    @classmethod
    def decode(cls, data: Any) -> Learned | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(frozenset(map(str, data.get("lines") or ())), {str(k): str(v) for k, v in
                                                                       (data.get("regions") or {}).items()},
                       {str(k): tuple(int(i) for i in v) for k, v in (data.get("candidates") or {}).items()},
                       {str(k): (int(v[0]), int(v[1]), tuple(map(str, v[2])), tuple(map(str, v[3])),
                                 tuple(map(str, v[4]))) for k, v in (data.get("calibration") or {}).items()},
                       tuple(map(str, data.get("variants") or ())), int(data.get("changes") or 0),
                       int(data.get("calibrated") or 0), int(data.get("noisy") or 0))
        except (TypeError, ValueError, IndexError, AttributeError):
            return None

    def with_lines(self, lines: Iterable[str], regions: Mapping[str, str] | None = None) -> Learned:
        """These signatures (and regions) learned as volatile too, within the caps."""
        merged = set(self.lines)
        for sig in lines:
            if len(merged) >= MAX_LINES:
                break
            merged.add(sig)
        kept = dict(self.regions)
        for anchor, sample in (regions or {}).items():
            if anchor in kept or len(kept) < MAX_REGIONS:
                kept[anchor] = sample
        return _replace(self, lines=frozenset(merged), regions=kept)


def _replace(learned: Learned, **changes: Any) -> Learned:
    return dataclasses.replace(learned, **changes)


@dataclass(frozen=True, slots=True)
class Hunk:
    """Lines of the old text replaced by lines of the new one, and where (anchors)."""

    start: int  # in the old lines
    end: int
    removed: tuple[str, ...]
    added: tuple[str, ...]
    anchors: str

    def signatures(self) -> set[str]:
        return {signature(line) for line in self.removed + self.added if line.strip()}

    def covered(self, learned: Learned) -> bool:
        lines = learned.lines
        region = self.anchors in learned.regions
        # Stable text that goes is never ignored: a removed line must be volatile, or, in a volatile
        # region, one seen changing there lately (a rotating box's last headline).
        if not all(sig in lines or (region and sig in learned.candidates)
                   for sig in (signature(line) for line in self.removed if line.strip())):
            return False
        return region or all(signature(line) in lines for line in self.added if line.strip())

    def sample(self) -> str:
        return " / ".join(line.strip() for line in self.added or self.removed if line.strip())[:_SAMPLE_CHARS]


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


def fingerprint(lines: Sequence[str], learned: Learned) -> str:
    """The text without its volatile lines, hashed: what an A/B variant is remembered by."""
    return text_hash("\n".join(line for line in lines if signature(line) not in learned.lines), 8)


@dataclass(frozen=True, slots=True)
class Learning:
    """The verdict of the learned model on one changed text."""

    #: the hunks that remain a change (none: the text moved within its learned variation)
    remaining: tuple[Hunk, ...]
    ignored: tuple[Hunk, ...]
    learned: Learned
    #: a text recently seen (an A/B variant flipping back)
    known_variant: bool = False
    #: the old text with the ignored hunks' new lines in their place: what the diff is shown
    #: from, so every line it shows as unchanged is a line of the new text
    shown_from: str = ""
    #: every line of the page varies: reported once as ``noisy:``
    noisy: str | None = None

    @property
    def ignored_regions(self) -> dict[str, Any]:
        return {"count": len(self.ignored), "sample": " | ".join(h.sample() for h in self.ignored[:3])}


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


def judge(old_text: str, new_text: str, learned: Learned | None) -> Learning:
    """What the learned model makes of a change *old_text* → *new_text* in a normal run, and what
    it learns from it (the learned state to keep). A covered hunk is ignored whole; in any other,
    its volatile lines are ignored and the rest of it is a change."""
    learned = learned or Learned()
    old, new = old_text.split("\n"), new_text.split("\n")
    found = hunks(old, new, learned.lines)
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
    prints = (fingerprint(old, learned), fingerprint(new, learned))
    known = bool(remaining) and prints[1] in learned.variants
    after = _counted(learned, remaining) if remaining else learned
    after = _replace(after, variants=with_variants(after, *prints))
    after, noisy = noisiness(after, new)
    return Learning(tuple(remaining), tuple(ignored), after, known,
                    _shown_from(old, found, shown) if ignored else old_text, noisy)


def _counted(learned: Learned, remaining: Sequence[Hunk]) -> Learned:
    """*learned* after a changed observation with these hunks: their signatures and regions count
    one change more; those that changed in VOLATILE_AFTER of the last WINDOW are volatile."""
    now = learned.changes + 1
    candidates = {k: v for k, v in learned.candidates.items() if v and v[-1] > now - WINDOW}
    volatile_lines: set[str] = set()
    volatile_regions: dict[str, str] = {}
    for hunk in remaining:
        for name in (*hunk.signatures(), "@" + hunk.anchors):
            seen = (*(i for i in candidates.get(name, ()) if i > now - WINDOW and i != now), now)
            if len(seen) >= VOLATILE_AFTER:
                candidates.pop(name, None)
                if name.startswith("@"):
                    volatile_regions[name[1:]] = hunk.sample()
                else:
                    volatile_lines.add(name)
            else:
                candidates[name] = seen[-VOLATILE_AFTER:]
    if len(candidates) > MAX_CANDIDATES:
        candidates = dict(sorted(candidates.items(), key=lambda kv: kv[1][-1])[-MAX_CANDIDATES:])
    return _replace(learned, candidates=candidates, changes=now).with_lines(volatile_lines, volatile_regions)


def noisiness(learned: Learned, new: Sequence[str]) -> tuple[Learned, str | None]:
    """*learned* marked noisy, and why, when nearly every line of *new* varies (once)."""
    if learned.noisy:
        return learned, None
    lines = [line for line in new if line.strip()]
    volatile = sum(signature(line) in learned.lines for line in lines)
    if len(lines) >= NOISY_MIN_LINES and volatile >= NOISY_SHARE * len(lines):
        why = f"noisy: {volatile} of {len(lines)} lines of the page vary from load to load"
        return _replace(learned, noisy=1), why
    return learned, None


def learn_noise(learned: Learned | None, diff: str) -> Learned:
    """*learned* with the lines of a reported change's diff (``-``/``+`` lines) learned as volatile:
    the text they showed is noise from now on; another text in their place still is a change."""
    learned = learned or Learned()
    lines = [line[2:] for line in diff.split("\n") if line[:2] in ("- ", "+ ") and line[2:].strip()]
    return learned.with_lines(signature(line) for line in lines)
