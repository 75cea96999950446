"""The decision at the heart of changewatch: digest an observation with every comparison, check
it can be trusted, compare it with the last good snapshot, and name the kind of what happened."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .comparisons import CompareContext, Comparison, Kind, Status, Unobservable
from .comparisons.noise import CALIBRATION, NOISY
from .documents import read_document
from .evidence import keeps_evidence
from .observation import Observation
from .siteset import REBASELINE
from .snapshot import Snapshot

__all__ = ["Verdict", "classify", "digest", "observe"]


@dataclass(slots=True)
class Verdict:
    """What one observation is: its kind, the change record's members that say what changed
    (every member that applies, whichever kind names the record), the error of an ``error``,
    the snapshot the store keeps (None: keep the stored one) and events to count."""

    kind: Kind
    members: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    keep: Snapshot | None = None
    counters: dict[str, int] = field(default_factory=dict)

    @property
    def changes(self) -> dict[str, Any]:
        return dict(self.members.get("changes") or {})

    @property
    def added(self) -> list[dict[str, Any]]:
        return list(self.members.get("added") or [])

    @property
    def removed(self) -> list[dict[str, Any]]:
        return list(self.members.get("removed") or [])

    @property
    def changed(self) -> list[dict[str, Any]]:
        return list(self.members.get("changed") or [])

    @property
    def distance(self) -> int | None:
        value = self.members.get("distance")
        return None if value is None else int(value)

    @property
    def diff(self) -> str | None:
        value = self.members.get("diff")
        return None if value is None else str(value)


def digest(obs: Observation, comparisons: Sequence[Comparison], counters: dict[str, int] | None = None) -> Snapshot:
    """The snapshot of *obs*: a part from each comparison that tracks something in it. Raises
    :class:`Unobservable` when one of them cannot read what it tracks."""
    parts: dict[str, Any] = {}
    for comparison in comparisons:
        try:
            part = comparison.digest(obs)
        except Unobservable:
            if counters is not None:
                counters[f"{comparison.name}/unobservable"] = 1
            raise
        if part is None:
            continue
        parts[comparison.name] = part
        if counters is not None:
            counters[f"{comparison.name}/digested"] = counters.get(f"{comparison.name}/digested", 0) + 1
    return Snapshot(parts)


def _count(new: Snapshot, comparisons: Sequence[Comparison], counters: dict[str, int]) -> None:
    """Each comparison's counters of its new part, once it was checked and compared (a part
    that reads its page lazily knows more then). An event named ``component/event`` is counted
    as it is; a bare ``event`` under the comparison's name."""
    for comparison in comparisons:
        part = new.part(comparison.name)
        if part is None:
            continue
        for event, count in comparison.counters(part).items():
            name = event if "/" in event else f"{comparison.name}/{event}"
            counters[name] = counters.get(name, 0) + count


def classify(old: Snapshot | None, new: Snapshot, comparisons: Sequence[Comparison], *,
             context: CompareContext | None = None, error: str | None = None) -> Verdict:
    """Compare a new snapshot with the last good one (*old*, None: there is none yet).

    Parts that only one side has are not compared (a watch that starts tracking a field starts
    silently); nor is a part, or a field, read another way than the stored one (an edited
    watch: each comparison's ``check`` and ``compare`` restart it silently). The kind is that of
    the lowest-ranked comparison that found a change (field > entities > content), else
    ``noise`` if one found only noise, else ``none``.
    """
    error = error or _first_problem(old, new, comparisons)
    if error:
        return Verdict(Kind.ERROR, error=error)
    if old is None:
        return Verdict(Kind.BASELINE, keep=new)
    context = context or CompareContext()
    members: dict[str, Any] = {}
    counters: dict[str, int] = {}
    changed: list[Comparison] = []
    noise = False
    kept: dict[str, Any] = dict(new.parts)
    as_version: dict[str, Any] = {}
    for comparison in sorted(comparisons, key=lambda c: c.rank):
        before, after = old.part(comparison.name), new.part(comparison.name)
        if before is None or after is None:
            continue
        difference = comparison.compare(before, after, context)
        if difference.keep is not None:
            kept[comparison.name] = difference.keep
        if difference.keep_as_version is not None:
            as_version[comparison.name] = difference.keep_as_version
        for event, count in difference.counters.items():
            name = event if "/" in event else f"{comparison.name}/{event}"
            counters[name] = counters.get(name, 0) + count
        if difference.status is Status.CHANGED:
            changed.append(comparison)
        noise |= difference.status is Status.NOISE
        members.update(difference.members)  # a sub-threshold distance too: the record shows what applies
    noisy = members.pop(NOISY, None)
    if context.option(CALIBRATION):
        # a calibration load moves nothing but what is learned: every other part stays the stored one
        keep = Snapshot({**old.parts, **{k: v for k, v in kept.items() if k == "content"}}, old.foreign)
        return Verdict(Kind.NONE, {}, keep=None if keep == old else keep, counters=counters)
    kind = changed[0].kind if changed else Kind.NOISE if noise else Kind.NONE
    if as_version and keeps_evidence(kind, counters):
        # kept with its evidence: every part is this page's, which the next change is judged
        # against and shown as "before"
        kept.update(as_version)
    keep = Snapshot(kept, old.foreign)
    if noisy and not changed:  # every line of the page varies: said once, its text compared no more
        return Verdict(Kind.ERROR, {}, error=str(noisy), keep=keep, counters=counters)
    if kind is Kind.NONE and keep == old:
        return Verdict(kind, members, counters=counters)  # nothing to rewrite
    return Verdict(kind, members, keep=keep, counters=counters)


def _first_problem(old: Snapshot | None, new: Snapshot, comparisons: Sequence[Comparison]) -> str | None:
    for comparison in comparisons:
        part = new.part(comparison.name)
        if part is not None and (problem := comparison.check(old.part(comparison.name) if old else None, part)):
            return problem
    return None


def observe(obs: Observation, old: Snapshot | None, comparisons: Sequence[Comparison], *,
            context: CompareContext | None = None) -> Verdict:
    """Digest *obs* and classify it against *old*: the whole decision for one observation.
    A 304 (``not_modified``) is ``none`` without a look; an error the spider set, or one a
    comparison finds, is an ``error`` that keeps the old snapshot."""
    if obs.not_modified:
        return Verdict(Kind.NONE)
    if obs.error:
        return Verdict(Kind.ERROR, error=obs.error)
    if obs.options.get(REBASELINE):  # a page just added to its site's set: compared with nothing stored
        old = None
    try:
        document = read_document(obs)  # JSON, plain text, PDF: read here, in the worker
    except Unobservable as exc:
        return Verdict(Kind.ERROR, error=str(exc), counters={"documents/unreadable": 1})
    counters: dict[str, int] = {"documents/read": 1} if document is not obs else {}
    obs = document
    try:
        new = digest(obs, comparisons, counters)
    except Unobservable as exc:
        return Verdict(Kind.ERROR, error=str(exc), counters=counters)
    verdict = classify(old, new, comparisons, context=context)
    _count(new, comparisons, counters)
    verdict.counters.update(counters)
    return verdict

