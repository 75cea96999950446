"""Where two loads of a candidate differ, as slots for judging that candidate (core/confirm.py).

What varies between two loads seconds apart is no change, whatever the baseline held there: each
run of lines the loads differ in is a slot between the nearest lines they share (as
:func:`~.learned.between_loads` learns it), taken as a slot at once in this judgement.

A reshuffled list whose one item stayed in place at its edge while the two loads were taken
anchors that slot on the item; the baseline, whose list was in another order, may hold items
beyond it. Lines of the baseline right past such an anchor, as many as the baseline's slot holds
fewer than the loads', each lacking from both loads or held in the loads' slot, with the loads'
next line (or the text's edge) right after them, were the list's: the slot is widened over them.
A paragraph removed next to a slot of fixed size (an ad's one line) is not: the baseline's slot
holds as many lines as the loads'. Nothing here imports Scrapy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from .learned import Learned, between_loads
from .learned_state import replaced, signatures
from .slots import Slot, label_of, locate_all

__all__ = ["pair_slots"]


def pair_slots(learned: Learned | None, old: str, first: str, second: str) -> Learned:
    """*learned* with where loads *first* and *second* differ as (not provisional) slots, widened
    over the baseline's (*old*) items of a reshuffled list past an anchor that stayed in place."""
    taught = between_loads(learned, first, second)
    o, f, s = old.split("\n"), first.split("\n"), second.split("\n")
    osig, ssig = signatures(o), signatures(s)
    loads = set(f) | set(s)
    slots = []
    for slot in taught.slots:
        if slot.provisional:
            slot = dataclasses.replace(slot, stayed="", was=())
            slot = _widened(slot, o, osig, s, ssig, loads)
        slots.append(slot)
    return replaced(taught, slots=tuple(slots))


def _count(lines: Sequence[str]) -> int:
    return sum(1 for line in lines if line.strip())


def _widened(slot: Slot, old: Sequence[str], osig: Sequence[str], new: Sequence[str], nsig: Sequence[str],
             loads: set[str]) -> Slot:
    here, there = locate_all([slot], osig), locate_all([slot], nsig)
    if not here or not there:
        return slot
    (o, n) = here[0], there[0]
    missing = _count(new[n.start:n.end]) - _count(old[o.start:o.end])
    if missing <= 0:
        return slot
    held = set(new[n.start:n.end])  # a line of the baseline past the anchor that both loads lack, or hold in the slot
    listed = {line for line in old if line not in loads or line in held}
    # past the after anchor: the baseline's lines both loads lack, then the loads' next line
    past = [i for i in range(o.end + 1, len(old)) if old[i].strip()][:missing + 1]
    beyond = [i for i in range(n.end + 1, len(new)) if new[i].strip()][:1]
    gone, rest = past[:missing], past[missing:]
    if slot.after != "$" and len(gone) == missing and all(old[i] in listed for i in gone) \
            and [osig[i] for i in rest] == [nsig[i] for i in beyond]:
        after = nsig[beyond[0]] if beyond else "$"
        label = label_of(new[beyond[0]]) if beyond else ""
        return dataclasses.replace(slot, after=after, labels=(slot.labels[0], label), most=slot.most + 1 + missing)
    # before the before anchor: the same, mirrored
    ahead = [i for i in range(o.start - 2, -1, -1) if old[i].strip()][:missing + 1]
    above = [i for i in range(n.start - 2, -1, -1) if new[i].strip()][:1]
    gone, rest = ahead[:missing], ahead[missing:]
    if slot.before != "^" and len(gone) == missing and all(old[i] in listed for i in gone) \
            and [osig[i] for i in rest] == [nsig[i] for i in above]:
        before = nsig[above[0]] if above else "^"
        nth = sum(1 for sig in nsig[:above[0]] if sig == before) if above else 0
        label = label_of(new[above[0]]) if above else ""
        return dataclasses.replace(slot, before=before, nth=nth, labels=(label, slot.labels[1]),
                                   most=slot.most + 1 + missing)
    return slot
