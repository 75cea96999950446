"""The content comparison's verdict as what is learned of the page's variation makes it
(core/learned.py): a calibration load only teaches, a change all in volatile regions is noise, a
recent variant seen again is noise, and a page whose every line varies is reported once.

A key with nothing learned costs nothing here: its verdict passes through untouched. So does
every verdict of a text that did not change (NONE).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ..calibration import calibrate
from ..diff import line_diff
from ..learned import Learned, Slot, judge
from ..learned_flips import quiet
from ..learned_state import replaced
from ..text import charset
from .base import CompareContext, Difference, Status

if TYPE_CHECKING:
    from .content_part import ContentPart

__all__ = ["CALIBRATION", "CONFIRMED", "FLIPPING", "FORGET", "NOISY", "learned_difference"]

#: the observation's option that marks a calibration load (set by the pipeline, never by a user)
CALIBRATION = "calibration"
#: the option that marks the judgement of a candidate with its confirmation (set by core/confirm.py,
#: never by a user): what both loads show is content, so the change counts toward nothing learned
#: as varying (only what differs between the two loads is learned, :func:`~..learned.between_loads`)
CONFIRMED = "confirmed"
#: the observation's option that drops what is learned for its key first (``-a forget=KEY``)
FORGET = "forget"
#: the member of a noise verdict that asks for a one-time ``noisy:`` error record
NOISY = "noisy"
#: the counters ``flipping_began`` and ``flipping_over``: a key's flipping streak (core/learned_flips.py)
FLIPPING = "flipping"


def learned_difference(old: ContentPart, new: ContentPart, difference: Difference,
                       context: CompareContext) -> Difference:
    """*difference* (the plain content comparison's) as what is learned for the key makes it.

    Noise keeps the stored text (with what was learned): the text a change is judged against is
    always that of a version whose evidence is kept, the one its record's "before" shows. The
    new page's text is kept only if the observation becomes such a version (``keep_as_version``)."""
    learned = None if context.option(FORGET) else old.learned
    kept = difference.keep if difference.keep is not None else new
    if context.option(CALIBRATION):
        return _calibration(old, new, difference, learned)
    if learned is None:
        return difference if kept.learned is None else _with_learned(difference, new, None)
    if learned.noisy:
        return _noisy(old, new, difference, learned)
    if difference.status is not Status.CHANGED:
        if learned.provisional and difference.status is Status.NONE:
            return _settled(old, new, difference, learned, context)
        learned, event = quiet(learned)
        if event:
            difference = dataclasses.replace(difference, counters={**difference.counters, f"{FLIPPING}_{event}": 1})
        return _with_learned(difference, new, learned)
    learning = judge(old.text, new.text, learned, counted=not context.option(CONFIRMED))
    counters = dict(difference.counters)
    if learning.flipped:
        counters["learned_flipped"] = 1
    if learning.flipping:
        counters[f"{FLIPPING}_{learning.flipping}"] = 1  # the pipeline opens or closes a health condition
    if learning.noisy:
        counters["noisy"] = 1
        told = dataclasses.replace(learning.learned, noisy=2)
        return _kept_old(old, new, told, Difference(Status.NOISE, {NOISY: learning.noisy}, counters=counters))
    if not learning.remaining or learning.known_variant:
        counters["learned_variant" if learning.remaining else "learned_ignored"] = 1
        return _kept_old(old, new, learning.learned, Difference(Status.NOISE, counters=counters), learning.held)
    members: dict[str, Any] = dict(difference.members)
    if learning.ignored:
        counters["learned_partly"] = 1
        members["ignored_regions"] = learning.ignored_regions
        options = context.diff
        # from the old text with the ignored hunks as they are now: every line shown unchanged is
        # the new page's
        members["diff"] = charset.readable(line_diff(learning.shown_from, new.text, context=options.context,
                                                     max_lines=options.max_lines, max_chars=options.max_chars))
    return Difference(Status.CHANGED, members, new.with_learned(learning.learned), counters)


def _with_learned(difference: Difference, new: ContentPart, learned: Learned | None) -> Difference:
    """*difference* with *learned* in the part it keeps (and in the one it keeps as a version)."""
    kept = difference.keep if difference.keep is not None else new
    version = difference.keep_as_version
    return dataclasses.replace(difference, keep=kept.with_learned(learned),
                               keep_as_version=None if version is None else version.with_learned(learned))


def _kept_old(old: ContentPart, new: ContentPart, learned: Learned, difference: Difference,
              held: tuple[Slot, ...] = ()) -> Difference:
    """*difference*, a change found to be noise, keeping the stored text (as the new one is
    read), or the new one if the observation is kept as a version (another comparison's change).
    A version holds nothing back: what flipped back (the provisional slots *held*) is in the
    version's text then, and judged from it, like a recent variant seen again."""
    version = replaced(learned, slots=tuple(s for s in learned.slots if s not in held)) if held else learned
    return dataclasses.replace(difference, keep=old.with_spec(new.spec, new.reading).with_learned(learned),
                               keep_as_version=new.with_learned(version))


def _calibration(old: ContentPart, new: ContentPart, difference: Difference, learned: Learned | None) -> Difference:
    """A calibration load teaches and changes nothing else: the baseline stays the stored text
    (a real change during calibration is reported by the next run), with what was learned."""
    # a load that reads as the baseline counts too: a block seen gone, then back, flaps
    taught = calibrate(old.text, new.text, learned)
    known = {slot.anchors for slot in learned.slots} if learned else set()
    return Difference(Status.NONE, {}, old.with_learned(taught),
                      {"calibration/learned_regions": sum(1 for s in taught.slots if s.anchors not in known)})


def _settled(old: ContentPart, new: ContentPart, difference: Difference, learned: Learned,
             context: CompareContext) -> Difference:
    """A text read as the baseline, with slots learned from a confirmation to settle: one that
    still holds what the confirmation load showed (it stayed put) is a change, shown from what
    the first load held there; the others vary, and are slots from now on."""
    learning = judge(old.text, new.text, learned)
    if not learning.remaining:
        return _with_learned(difference, new, learning.learned)
    options = context.diff
    diff = charset.readable(line_diff(learning.shown_from, new.text, context=options.context,
                                      max_lines=options.max_lines, max_chars=options.max_chars))
    return Difference(Status.CHANGED, {"distance": 0, "diff": diff}, new.with_learned(learning.learned),
                      {**difference.counters, "learned_stayed": 1})


def _noisy(old: ContentPart, new: ContentPart, difference: Difference, learned: Learned) -> Difference:
    """A page known to vary in every line: its text is never a change; the first time this is
    seen in a normal run, a ``noisy:`` error says so (once)."""
    if learned.noisy == 1:
        told = dataclasses.replace(learned, noisy=2)
        lines = sum(1 for line in new.text.split("\n") if line.strip())
        why = f"noisy: every line of the page varies from load to load ({lines} lines); its text is not compared"
        quiet = Difference(Status.NOISE, {NOISY: why}, counters={"noisy": 1})
    else:
        told = learned
        quiet = Difference(Status.NOISE if difference.status is not Status.NONE else Status.NONE,
                           counters=difference.counters)
    if difference.status is Status.CHANGED:
        return _kept_old(old, new, told, quiet)
    return _with_learned(dataclasses.replace(quiet, keep=difference.keep,
                                             keep_as_version=difference.keep_as_version), new, told)
