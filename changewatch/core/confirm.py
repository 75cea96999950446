"""Confirming a change before it is reported: two loads of a page, judged together.

An observation that differs from its key's baseline (a candidate) is followed by a second load
of the page (the confirmation). Only what differs from the baseline in *both* loads is a change:

- a field whose new value is the same in both loads (a value that flips between the loads is an
  A/B variant, not a change);
- an entity added, removed or changed alike in both loads (removed not where entities come and
  go between the loads);
- a hunk of the stable text that both loads show (:mod:`.confirm_text`).

What differs between the two loads is learned at once (:func:`between_loads`), so a busy page
teaches itself from its first candidate: the judgement is the stored model's, what the two loads
taught is kept for the loads after them. What both loads show is content: it counts toward
nothing learned as varying (a page that changes on every run is reported on every run). The
verdict is the confirmation's: the snapshot kept is the second load's, with the part of each
comparison whose change was not confirmed kept as the stored one (what was not confirmed stays a
difference to the baseline: a real edit that landed between the two loads is reported by the
next run, late but not lost).

A key's first observation is made of two loads as well (:func:`baseline_loads`): the first is
the baseline, silent as ever, and where the second differs from it is learned at once as
provisional slots, so a rotating box is known before the first run that could alert on it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .comparisons import CompareContext, Comparison, Kind, Status, Unobservable
from .comparisons.content_part import ContentPart
from .comparisons.noise import CONFIRMED
from .confirm_slots import pair_slots
from .confirm_text import TextCheck, confirmed_text
from .diff import line_diff
from .documents import read_document
from .learned import Learned, between_loads, changed_lines, hunks, judge
from .learned_state import REWRITE_SHARE
from .observation import Observation
from .snapshot import Snapshot
from .text import charset
from .verdict import Verdict, classify, digest, observe

__all__ = ["Loads", "baseline_loads", "between_loads", "confirmed_text", "judge_loads", "observe_loads"]

#: the comparison whose part is a page's text (its learned variation is taught by two loads)
_CONTENT = "content"


def _field_key(change: Mapping[str, Any]) -> str:
    return json.dumps([change.get("new_normalised", change.get("new")), change.get("new_type")],
                      sort_keys=True, default=str)


def _same(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _fields(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any] | None:
    """The members of the fields' change that both loads show (None: none)."""
    one, two = dict(first.get("changes") or {}), dict(second.get("changes") or {})
    changes = {name: change for name, change in two.items()
               if name in one and _field_key(one[name]) == _field_key(change)}
    if not changes:
        return None
    return {**second, "changes": changes}


def _entities(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any] | None:
    """The entities added, removed or changed alike in both loads (None: none). An entity both
    loads removed where entities come and go between the loads (a folder, deeper than the site's
    root, one load added an entity in that the other did not: rotating sponsored entries) went
    with that churn: not a change."""
    added = [{str(e.get("key")) for e in load.get("added") or () if isinstance(e, Mapping)} for load in (first, second)]
    churning = tuple({folder for key in added[0] ^ added[1] if (folder := _folder(key))})
    members: dict[str, Any] = {}
    for name in ("added", "removed", "changed"):
        seen = {_same(entity) for entity in first.get(name) or ()}
        both = [entity for entity in second.get(name) or () if _same(entity) in seen
                and not (name == "removed" and str(entity.get("key")).startswith(churning or ("\0",)))]
        if both:
            members[name] = both
    return members or None


def _folder(key: str) -> str | None:
    """The folder of an entity's key, if deeper than its site's root (None: none)."""
    folder = key.rsplit("/", 1)[0] + "/"
    path = urlsplit(folder).path if "://" in folder else folder
    return folder if path.strip("/") else None


@dataclass(frozen=True, slots=True)
class Loads:
    """Two loads' snapshots and the stored one they are judged against."""

    old: Snapshot
    first: Snapshot
    second: Snapshot


def _taught(verdict: Verdict, loads: Loads) -> Verdict:
    """*verdict* with what differs between the two loads learned into the text's part it keeps:
    the judgement is the stored model's; what the two loads teach is for the next ones."""
    one, two = loads.first.part(_CONTENT), loads.second.part(_CONTENT)
    keep = verdict.keep if verdict.keep is not None else loads.old
    part, before = keep.part(_CONTENT), loads.old.part(_CONTENT)
    if not (isinstance(one, ContentPart) and isinstance(two, ContentPart) and isinstance(part, ContentPart)):
        return verdict
    learned = part.learned
    if isinstance(before, ContentPart) and before.text != part.text:
        learned = changed_lines(learned, before.text, part.text)  # a flip back is known from the first change
    if one.raw_hash != two.raw_hash and one.text != two.text:
        learned = between_loads(learned, one.text, two.text)
    if learned is part.learned:
        return verdict
    verdict.keep = Snapshot({**keep.parts, _CONTENT: part.with_learned(learned)}, keep.foreign)
    return verdict


def _content(old: ContentPart, first: ContentPart, second: ContentPart, members: Mapping[str, Any],
             learned: Learned | None, context: CompareContext) -> dict[str, Any] | None:
    """The members of the text's change that both loads show (None: none). Judged twice when the
    loads differ: as the stored model reads the change, and with where the two loads differ as
    slots too (:func:`.confirm_slots.pair_slots`); the reading that leaves less of a change
    stands (a slot anchored on a reshuffled list's item may misplace the list's lines in the one;
    what varies between the loads is left in the other; an edit one of them leaves out is in a
    place the loads differ in, learned as a provisional slot: reported by the next run if it stays)."""
    readings = [learned]
    if first.text != second.text:
        readings.append(pair_slots(learned, old.text, first.text, second.text))
    options = context.diff
    best: tuple[int, dict[str, Any]] | None = None
    for model in readings:
        check, before = _checked(old.text, first.text, second.text, model)
        if check is None:
            return None
        if not check.unconfirmed and before == old.text:
            found = dict(members)
            diff = str(found.get("diff") or "")
        else:
            diff = charset.readable(line_diff(check.shown_from, second.text, context=options.context,
                                              max_lines=options.max_lines, max_chars=options.max_chars))
            found = {**members, "diff": diff}
        size = sum(1 for line in diff.split("\n") if line[:1] in "+-" and not line.startswith(("+++", "---")))
        if best is None or size < best[0]:
            best = (size, found)
    return best[1] if best is not None else None


def _checked(old: str, first: str, second: str, learned: Learned | None) -> tuple[TextCheck | None, str]:
    """The check of what both loads show against *old* as *learned* reads the change (None: not a
    change), and the text it is shown from. A place that flips back is held while nothing else is
    confirmed; with a change confirmed, the page is kept as a version: the flip is part of its change."""
    if learned is None:
        check = confirmed_text(old, first, second)
        return (check if check.confirmed else None), old
    learning = judge(old, second, learned, hold=True)
    check = confirmed_text(learning.shown_from, first, second, learning.slotted)
    if not check.confirmed:
        return None, learning.shown_from
    if learning.flipped:
        again = judge(old, second, learned, hold=False)
        return confirmed_text(again.shown_from, first, second, again.slotted), again.shown_from
    return check, learning.shown_from


#: each comparison's members that a confirmation narrows to what both loads show
_MEMBERS = {"fields": ("changes", "error"), "entities": ("added", "removed", "changed"), _CONTENT: ("diff",)}
#: a comparison whose part did not change in the confirmation: its part is kept as the confirmation's
_UNCHANGED = "unchanged"


def _confirmed(comparison: Comparison, parts: tuple[Any, Any, Any],
               context: CompareContext) -> dict[str, Any] | str | None:
    """The members of *comparison*'s change that both loads show; None when the confirmation's
    change is not confirmed; ``"unchanged"`` when the confirmation shows no change of its part.
    *parts*: the stored part, then each load's."""
    old, first, second = parts
    two = comparison.compare(old, second, context)
    if two.status is not Status.CHANGED:
        return _UNCHANGED
    one = comparison.compare(old, first, context)
    if one.status is not Status.CHANGED:
        return None
    if comparison.name == "fields":
        return _fields(one.members, two.members)
    if comparison.name == "entities":
        return _entities(one.members, two.members)
    if comparison.name == _CONTENT and isinstance(old, ContentPart) and isinstance(first, ContentPart) \
            and isinstance(second, ContentPart):
        return _content(old, first, second, two.members, old.learned, context)
    return dict(two.members) if _same(one.members) == _same(two.members) else None


def _problem(old: Snapshot, new: Snapshot, comparisons: Sequence[Comparison]) -> str | None:
    """Why the confirmation cannot be trusted (a block page, a collapsed page), as classify says."""
    for comparison in comparisons:
        part = new.part(comparison.name)
        if part is not None and (problem := comparison.check(old.part(comparison.name), part)):
            return problem
    return None


def judge_loads(loads: Loads, comparisons: Sequence[Comparison], context: CompareContext | None = None) -> Verdict:
    """The verdict of a candidate (*loads.first*) and its confirmation (*loads.second*) against
    the stored snapshot: only the differences present in both loads, in the confirmation's words.
    An error is the confirmation's own (a block page, a collapsed page): it confirms nothing."""
    context = context or CompareContext()
    if problem := _problem(loads.old, loads.second, comparisons):
        return Verdict(Kind.ERROR, error=problem)
    old = loads.old
    parts = dict(loads.second.parts)
    confirmed: dict[str, dict[str, Any]] = {}
    judged = []
    for comparison in comparisons:
        name = comparison.name
        before, one, two = old.part(name), loads.first.part(name), parts.get(name)
        if before is None or one is None or two is None:
            judged.append(comparison)
            continue
        members = _confirmed(comparison, (before, one, two), context)
        if members is None:
            # not confirmed: the stored part stays what the next load is judged against, and is
            # not judged against itself (a provisional slot would read as having stayed put)
            parts[name] = before
            continue
        judged.append(comparison)
        if isinstance(members, dict):
            confirmed[name] = members
    # what both loads show is content: it counts toward nothing learned as varying
    confirming = dataclasses.replace(context, options={**context.options, CONFIRMED: True})
    verdict = classify(old, Snapshot(parts, loads.second.foreign), judged, context=confirming)
    for name in confirmed:
        for member in _MEMBERS.get(name, ()):
            verdict.members.pop(member, None)
    for comparison in sorted(comparisons, key=lambda c: c.rank):  # in the order classify merges them
        verdict.members.update(confirmed.get(comparison.name, {}))
    return _taught(verdict, loads)


def _snapshot(obs: Observation, comparisons: Sequence[Comparison], counters: dict[str, int]) -> Snapshot | str:
    """The snapshot of *obs* (its document read), or why it cannot be made."""
    if obs.error:
        return obs.error
    try:
        return digest(read_document(obs), comparisons, counters)
    except Unobservable as exc:
        return str(exc)


def observe_loads(first: Observation, second: Observation, old: Snapshot, comparisons: Sequence[Comparison], *,
                  context: CompareContext | None = None) -> Verdict:
    """Digest a candidate and its confirmation and judge them together against *old*
    (:func:`judge_loads`); an ``error`` when the confirmation cannot be digested or checked."""
    counters: dict[str, int] = {}
    one = _snapshot(first, comparisons, {})
    two = _snapshot(second, comparisons, counters)
    if isinstance(two, str):
        return Verdict(Kind.ERROR, error=two, counters=counters)
    if isinstance(one, str):  # the candidate itself changed since it was judged: the confirmation alone
        verdict = classify(old, two, comparisons, context=context)
    else:
        verdict = judge_loads(Loads(old, one, two), comparisons, context)
    verdict.counters.update(counters)
    return verdict



def baseline_loads(first: Observation, second: Observation, comparisons: Sequence[Comparison], *,
                   context: CompareContext | None = None) -> Verdict:
    """A key's first observation made of two loads: the baseline is the first's, and where the
    second's text differs from it is learned as provisional slots (:func:`~.learned.between_loads`),
    as a confirmation learns them: a place that holds a third text on the next run varies (a
    rotating box), a slot from then on; one that still holds the second load's text is an edit
    that landed between the two loads, reported then. A second load that cannot be trusted (a
    block page, an empty page) or that rewrites most of the page teaches nothing. The verdict and
    its counters are the first load's, as :func:`~.verdict.observe` makes them."""
    verdict = observe(first, None, comparisons, context=context)  # the baseline, as one load makes it
    if verdict.kind is not Kind.BASELINE or verdict.keep is None:
        return verdict
    two = _snapshot(second, comparisons, {})
    if isinstance(two, str) or _problem(Snapshot({}), two, comparisons) is not None:
        verdict.counters["content/baseline_unteachable"] = 1
        return verdict
    part, other = verdict.keep.part(_CONTENT), two.part(_CONTENT)
    if not (isinstance(part, ContentPart) and isinstance(other, ContentPart)) \
            or (part.body_hash is not None and part.body_hash == other.body_hash) or part.text == other.text:
        return verdict  # the same page twice (its body need not be read: it may be kept unread)
    lines = sum(1 for line in part.text.split("\n") if line.strip())
    found = hunks(part.text.split("\n"), other.text.split("\n"))
    differing = max(sum(1 for hunk in found for line in getattr(hunk, side) if line.strip())
                    for side in ("removed", "added"))
    if differing > REWRITE_SHARE * lines:
        verdict.counters["content/baseline_rewritten"] = 1
        return verdict
    taught = between_loads(part.learned, part.text, other.text)
    verdict.keep = Snapshot({**verdict.keep.parts, _CONTENT: part.with_learned(taught)}, verdict.keep.foreign)
    verdict.counters["content/baseline_slots"] = sum(1 for slot in taught.slots if slot.provisional)
    return verdict
