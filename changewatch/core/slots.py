"""Slots: where a key's stable text varies, as the stable lines around it (its anchors).

A slot is the run of lines between two anchor lines of the text: the line before it (``before``,
its signature, and which occurrence of that signature it is) and the first line after it with
the ``after`` signature (``^`` and ``$``: the text's start and end). The anchors are text lines,
so a block is found by its heading ("Trending now") and the line after it however its markup's
class names are generated. Whatever a slot holds is ignored while its anchors are where they
were, unless it holds more than twice the most lines it was seen to hold.

A *provisional* slot was learned from one confirmation (two loads of the same content): it keeps
the lines the first load showed there and the hash of what the second showed. Seen again with
new text it is a slot; seen holding the second load's text still ("stayed put"), it is a change.
Nothing here imports Scrapy.
"""

from __future__ import annotations

import dataclasses
import difflib
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from hashlib import blake2b
from typing import Any

from .steady import JOIN_BEFORE, Inner, inner_of, joined_inner, sighted

__all__ = ["MAX_SLOTS", "Located", "Slot", "anchor_at", "anchored", "content_hash", "joined", "locate_all", "loose",
           "positions", "relabelled", "slot_between"]

MAX_SLOTS = 200
#: what a slot keeps of the lines the first load of a confirmation showed in it
MAX_KEPT_LINES = 40
_LABEL_CHARS = 60
_SAMPLE_CHARS = 80


def content_hash(lines: Sequence[str]) -> str:
    """A short hash of a slot's lines (blank lines and spacing aside)."""
    text = "\n".join(" ".join(line.split()) for line in lines if line.strip())
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


def sample_of(lines: Iterable[str]) -> str:
    return " / ".join(line.strip() for line in lines if line.strip())[:_SAMPLE_CHARS]


def label_of(line: str) -> str:
    return " ".join(line.split())[:_LABEL_CHARS]


@dataclass(frozen=True, slots=True)
class Slot:
    """One place where the text varies (JSON-able through :meth:`encode`)."""

    before: str  # the signature of the line before it, or "^"
    after: str  # the signature of the line after it, or "$"
    nth: int = 0  # which occurrence of *before* in the text
    most: int = 0  # the most lines it was seen to hold (0: not known)
    varied: int = 0  # how often it was seen varying
    sample: str = ""
    labels: tuple[str, str] = ("", "")  # the anchors' text, as shown
    least: int = 0  # the fewest lines it was seen to hold
    #: provisional: the hash of the confirmation load's lines there ("": not provisional)
    stayed: str = ""
    #: provisional: the lines the first load showed there
    was: tuple[str, ...] = ()
    #: lines inside it that stood, the same and in place, on the loads it varied in (core/steady.py)
    inner: tuple[Inner, ...] = ()
    #: the loads it varied in with its anchors in place (from a split: those its anchor stood in before)
    steady: int = 0

    @property
    def anchors(self) -> tuple[str, str, int]:
        return self.before, self.after, self.nth

    @property
    def provisional(self) -> bool:
        return bool(self.stayed)

    def encode(self) -> list[Any]:
        data: list[Any] = [self.before, self.after, self.nth, self.most, self.varied, self.sample, list(self.labels),
                           self.least]
        if self.stayed or self.inner or self.steady:
            data += [self.stayed, list(self.was), [list(e) for e in self.inner], self.steady]
        return data

    @classmethod
    def decode(cls, data: Any) -> Slot:
        before, after, nth, most, varied, sample, labels = data[:7]
        least = int(data[7]) if len(data) > 7 else 0
        stayed, was = (str(data[8]), tuple(map(str, data[9]))) if len(data) > 9 else ("", ())
        inner, steady = (tuple((str(e[0]), *map(int, e[1:6])) for e in data[10]), int(data[11])) \
            if len(data) > 11 else ((), 0)
        first, second = [*map(str, labels), "", ""][:2]
        return cls(str(before), str(after), int(nth), int(most), int(varied), str(sample), (first, second),
                   least, stayed, was, inner, steady)  # type: ignore[arg-type]

    def seen(self, lines: Sequence[str], changed: bool, was: Sequence[str] | None = None) -> Slot:
        """This slot after holding *lines* in an observation (*changed*: other than *was*)."""
        held = sum(1 for line in lines if line.strip())
        inner = sighted(self.inner, was, lines) if changed and was is not None else self.inner
        return dataclasses.replace(self, most=max(self.most, held), least=min(self.least, held), inner=inner,
                                   varied=self.varied + int(changed), steady=self.steady + int(changed),
                                   sample=sample_of(lines) or self.sample if changed else self.sample)

    @property
    def fixed(self) -> bool:
        """Seen holding as many lines every time (a box of five headlines, an ad's one line)."""
        return 0 < self.least == self.most

    def grown(self, lines: Sequence[str]) -> bool:
        """Whether *lines* are more than twice the most it was seen to hold."""
        return bool(self.most) and sum(1 for line in lines if line.strip()) > 2 * self.most

    def extra(self, lines: Sequence[str]) -> int:
        """How many lines more than its size *lines* are, for a slot of fixed size (else 0)."""
        return max(sum(1 for line in lines if line.strip()) - self.most, 0) if self.fixed else 0


def positions(sigs: Sequence[str]) -> dict[str, list[int]]:
    """Where each signature stands in a text (in order)."""
    at: dict[str, list[int]] = {}
    for i, sig in enumerate(sigs):
        at.setdefault(sig, []).append(i)
    return at


@dataclass(frozen=True, slots=True)
class Located:
    """A slot found in a text: its lines are ``lines[start:end]``."""

    index: int  # in the learned slots
    start: int
    end: int


def _locate(slot: Slot, at: Mapping[str, list[int]], size: int) -> tuple[int, int] | None:
    if slot.before == "^":
        start = 0
    else:
        found = at.get(slot.before, ())
        if slot.nth >= len(found):
            return None
        start = found[slot.nth] + 1
    if slot.after == "$":
        return start, size
    for end in at.get(slot.after, ()):
        if end >= start:
            return start, end
    return None


def locate_all(slots: Sequence[Slot], sigs: Sequence[str], at: Mapping[str, list[int]] | None = None) -> list[Located]:
    """The slots found in a text (by its lines' signatures), in the text's order, none overlapping
    another (the widest wins: a slot learned inside another is the other's)."""
    at = positions(sigs) if at is None else at
    spans = [(index, span) for index, slot in enumerate(slots) if (span := _locate(slot, at, len(sigs))) is not None]
    found: list[Located] = []
    for index, (start, end) in sorted(spans, key=lambda x: x[1][0] - x[1][1]):
        if not any((loc.start < end and start < loc.end) or (loc.start <= start and end <= loc.end) for loc in found):
            found.append(Located(index, start, end))
    return sorted(found, key=lambda x: x.start)


def anchor_at(lines: Sequence[str], sigs: Sequence[str], at: int, step: int, skip: Iterable[int] | set[int],
              volatile: frozenset[str]) -> tuple[str, int, str]:
    """The nearest line from *at* on (by *step*) that is neither blank, volatile nor in *skip*: its
    signature, its position (-1/len: the text's edge) and its text."""
    skip = skip if isinstance(skip, set) else set(skip)
    while 0 <= at < len(lines):
        if at not in skip and lines[at].strip() and sigs[at] not in volatile:
            return sigs[at], at, label_of(lines[at])
        at += step
    return ("^", -1, "") if step < 0 else ("$", len(lines), "")


def slot_between(lines: Sequence[str], sigs: Sequence[str], start: int, end: int, skip: set[int],
                 volatile: frozenset[str], changed: set[int] | None = None, **known: Any) -> Slot:
    """A slot holding ``lines[start:end]`` (or more: its anchors are the nearest stable lines).
    With *changed* (the positions the diff it is learned from changed), the lines within it the
    diff kept are kept as its inner lines (:mod:`.steady`)."""
    before, b, first = anchor_at(lines, sigs, start - 1, -1, skip, volatile)
    after, a, second = anchor_at(lines, sigs, end, 1, skip, volatile)
    nth = 0 if before == "^" else sum(1 for sig in sigs[:b] if sig == before)
    held = lines[b + 1:a]
    if changed is not None:
        known["inner"] = inner_of(held, (i - b - 1 for i in range(b + 1, a) if i not in changed and i not in skip
                                         and sigs[i] not in volatile))
    size = sum(1 for line in held if line.strip())
    most = known.pop("most", size)
    return Slot(before, after, nth, most, known.pop("varied", 1), known.pop("sample", sample_of(held)),
                (first, second), known.pop("least", most), **known)


def anchored(slot: Slot, lines: Sequence[str], sigs: Sequence[str], start: int, end: int) -> Slot:
    """*slot* anchored anew on the lines around ``lines[start:end]`` (its anchors were edited)."""
    before = sigs[start - 1] if start > 0 else "^"
    after = sigs[end] if end < len(sigs) else "$"
    nth = 0 if before == "^" else sum(1 for sig in sigs[:start - 1] if sig == before)
    return dataclasses.replace(relabelled(slot, lines, start, end), before=before, after=after, nth=nth)


def relabelled(slot: Slot, lines: Sequence[str], start: int, end: int) -> Slot:
    """*slot*, standing at ``lines[start:end]``, with its anchors' text as *lines* have it (an
    anchor keeps its signature whatever its numbers: "19 March" may read "26 March" now)."""
    labels = (label_of(lines[start - 1]) if start > 0 else "", label_of(lines[end]) if end < len(lines) else "")
    return slot if labels == slot.labels else dataclasses.replace(slot, labels=labels)


def _similar(a: str, b: str) -> bool:
    """The same line, or one edited (most of its characters kept, in order)."""
    if a == b:
        return True
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return matcher.real_quick_ratio() >= 0.7 and matcher.quick_ratio() >= 0.7 and matcher.ratio() >= 0.7


def _matching(old: Sequence[str], window: Sequence[str]) -> int:
    k = 0
    while k < len(old) and k < len(window) and _similar(old[k], window[k]):
        k += 1
    return k


def _outer(lines: Sequence[str], at: int, step: int, skip: set[int]) -> int:
    at += step
    while 0 <= at < len(lines) and (at in skip or not lines[at].strip()):
        at += step
    return at


def loose(slot: Slot, old: Sequence[str], osig: Sequence[str], start: int, end: int,
          new: Sequence[str], nsig: Sequence[str], skip: set[int]) -> tuple[int, int, int, int] | None:
    """Where *slot*, found at ``old[start:end]``, stands in *new* when its anchors do not (one was
    edited or removed): between the next lines out, less the lines its anchors became (as many as
    they were, those alike, or as many as the slot's size leaves). The next lines out are not
    lines of other slots (*skip*: their positions in *old*). Its lines in *new*, and the lines
    between the next lines out there (None: not found)."""
    b2, a2 = _outer(old, start - 1, -1, skip), _outer(old, end, 1, skip)
    if b2 >= 0:
        nth = sum(1 for sig in osig[:b2] if sig == osig[b2])
        found = [i for i, sig in enumerate(nsig) if sig == osig[b2]]
        if nth >= len(found):
            return None
        p2 = found[nth]
    else:
        p2 = -1
    q2 = next((i for i in range(p2 + 1, len(nsig)) if nsig[i] == osig[a2]), None) if a2 < len(old) else len(new)
    if q2 is None:
        return None
    window, pre, post = new[p2 + 1:q2], old[b2 + 1:start], old[end:a2]
    wsig = nsig[p2 + 1:q2]
    # an anchor still there is where the slot starts or ends; only the other is guessed
    k_pre = wsig.index(slot.before) + 1 if slot.before in wsig else None
    k_post = len(wsig) - wsig.index(slot.after, k_pre or 0) if slot.after in wsig[k_pre or 0:] else None
    exact = k_pre is not None, k_post is not None
    k_pre = _matching(pre, window) if k_pre is None else k_pre
    k_post = _matching(post[::-1], window[::-1]) if k_post is None else k_post
    over = len(window) - k_pre - k_post - slot.most if slot.most else 0
    while over > 0 and ((k_pre < len(pre) and not exact[0]) or (k_post < len(post) and not exact[1])):
        if k_pre < len(pre) and not exact[0]:
            k_pre += 1
        else:
            k_post += 1
        over -= 1
    if k_pre + k_post > len(window):
        return None
    return p2 + 1 + k_pre, q2 - k_post, p2 + 1, q2


def _fits_both(first: Slot, second: Slot, held: int, was: int) -> bool:
    """Whether two slots and the line between them may hold *held* lines (they held *was*): as
    many, for two of fixed size; else no fewer than their fewest and the line."""
    if first.fixed and second.fixed:
        return held == was
    return first.least + second.least + 1 <= held <= 2 * (first.most + second.most + 1)


def _count(lines: Sequence[str]) -> int:
    return sum(1 for line in lines if line.strip())


def joined(slots: Sequence[Slot], old: Sequence[str], osig: Sequence[str], new: Sequence[str],
           nsig: Sequence[str]) -> tuple[Slot, ...]:
    """*slots*, where two stand one line apart (the one's after anchor is the other's before
    anchor) and that line moved within them in *new* (the one holds as many lines fewer as the
    other holds more), joined into one: the line between them varies too (an item of a
    reshuffled list that stayed in place while they were learned); so does one replaced by a line
    unlike it, as many lines in all (for slots whose size varies: no fewer than their fewest and
    that line). A line between two slots that is edited (a line like it is there) or removed
    (fewer lines) is a change (:func:`loose`); one that stays put keeps them apart."""
    in_old = locate_all(slots, osig)
    in_new = {loc.index: loc for loc in locate_all(slots, nsig)}
    at_new = positions(nsig)
    out: list[Slot | None] = list(slots)
    for a, b in itertools.pairwise(in_old):
        first, second = out[a.index], out[b.index]
        if b.start != a.end + 1 or first is None or second is None or first.after != second.before \
                or min(first.steady, second.steady) >= JOIN_BEFORE:  # the line stood: their anchor
            continue
        both = Slot(first.before, second.after, first.nth, first.most + second.most + 1,
                    max(first.varied, second.varied), first.sample, (first.labels[0], second.labels[1]),
                    first.least + second.least + 1, inner=joined_inner(first, second))
        na, nb = in_new.get(a.index), in_new.get(b.index)
        if na is not None and nb is not None and nb.start == na.end + 1:
            moved = _count(new[na.start:na.end]) - _count(old[a.start:a.end])
            if not moved or _count(new[nb.start:nb.end]) - _count(old[b.start:b.end]) != -moved:
                continue
        else:  # the line between them is gone: replaced by a line unlike it, as many lines in all?
            span = _locate(both, at_new, len(nsig))
            if span is None or not _fits_both(first, second, _count(new[span[0]:span[1]]),
                                              _count(old[a.start:b.end])) or any(
                    _similar(old[a.end], line) for line in new[span[0]:span[1]]):
                continue
        out[a.index], out[b.index] = both, None
    return tuple(slot for slot in out if slot is not None)
