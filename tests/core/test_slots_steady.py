"""A box's heading inside a slot (core/steady.py): a line that stood, the same and in place, on
every load its slot varied in is not noise. A "Trending now" box at the top of a page, between
a clock line and a run of headlines drawn from hundreds, an ad line, a teaser that flips and a
block present on some loads: learning from calibration, confirmations and normal runs must not
swallow the heading, so that its edit is reported (alone), while the box itself stays quiet."""

from __future__ import annotations

import random

import pytest

from changewatch.core.calibration import calibrate
from changewatch.core.learned import Learned, between_loads, judge
from changewatch.core.slots import Slot

POOL = [f"{a} {b} {c}" for a in ("Council", "Harbour", "Valley", "Museum", "Market", "Library")
        for b in ("plans", "opens", "delays", "backs", "rejects", "reviews")
        for c in ("a new ferry", "the night trains", "its budget", "a footbridge", "the festival", "a tram line")]
BODY = ["Skip to content", "Daniel Lemire's blog", "Menu and widgets", "My home page",
        "Parsing numbers quickly is harder than it looks.", "Related stories"]


def load(n: int, heading: str = "Trending now", extra: tuple[str, ...] = ()) -> str:
    rng = random.Random(n)
    top = [f"Updated · 22:{rng.randint(0, 59):02d}", heading, *extra, *rng.sample(POOL, 5),
           f"Sponsored: {rng.choice(POOL)} \u2013 shop now",
           rng.choice(("Try our newsletter free for 30 days.", "Subscribe for £1 a week."))]
    if rng.random() < 0.4:
        top.append("Breaking: markets open higher as traders weigh rate outlook.")
    return "\n".join([*top, *BODY, *rng.sample(POOL, 3)])


def learned_from_runs(runs: int = 16, calibration: int = 5) -> tuple[Learned, str]:
    """Calibrated on *calibration* loads, then *runs* normal runs, each candidate confirmed by a
    second load (what the two loads differ in learned at once), as the worker does."""
    learned = Learned()
    for n in range(1, calibration + 1):
        learned = calibrate(load(0), load(n), learned)
    old = load(0)
    for n in range(10, 10 + 2 * runs, 2):
        learning = judge(old, load(n), learned)
        learned = learning.learned
        if learning.remaining:
            learned = between_loads(learned, load(n), load(n + 1))
            old = load(n + 1)
        else:
            old = load(n)
    return learned, old


@pytest.mark.parametrize("calibration", [5, 0])
def test_the_box_stays_quiet(calibration: int) -> None:
    learned, old = learned_from_runs(calibration=calibration)
    quiet = 0
    for n in range(200, 240):
        learning = judge(old, load(n), learned)
        quiet += not learning.remaining
        learned, old = learning.learned, load(n)
    assert quiet >= 38  # at most 2 in 40 (a slot's size first seen)


@pytest.mark.parametrize("calibration", [5, 0])
def test_the_heading_is_not_held_by_a_slot(calibration: int) -> None:
    """Without calibration, the first confirmation learns the clock line, the heading and the box
    as one slot (the heading is one line between two changed runs); the loads after it teach that
    the heading stands: the slot is split around it."""
    learned, old = learned_from_runs(calibration=calibration)
    for slot in learned.slots:
        held = [s for s in _held(slot, old) if s == "Trending now"]
        assert not held, (slot.labels, slot.most)


def _held(slot: Slot, text: str) -> list[str]:
    from changewatch.core.learned_state import signatures
    from changewatch.core.slots import locate_all

    lines = text.split("\n")
    return [line for loc in locate_all([slot], signatures(lines)) for line in lines[loc.start:loc.end]]


@pytest.mark.parametrize("calibration", [5, 0])
def test_the_heading_edit_is_reported_alone(calibration: int) -> None:
    learned, old = learned_from_runs(calibration=calibration)
    learning = judge(old, load(300, heading="Most read"), learned)
    assert [(h.removed, h.added) for h in learning.remaining] == [(("Trending now",), ("Most read",))]
    # then the box is learned anew under its new heading: quiet again
    learned, old = learning.learned, load(300, heading="Most read")
    later = [judge(old, load(n, heading="Most read"), learned) for n in range(301, 304)]
    assert not later[-1].remaining


def test_an_old_stored_slot_still_loads_and_a_new_one_keeps_its_inner_lines() -> None:
    old = Slot.decode(["^", "9e16abd642cd", 0, 10, 24, "Updated", ["", "Skip to content"], 9])
    assert old.inner == () and old.steady == 0 and old.most == 10
    learned, _ = learned_from_runs()
    again = Learned.decode(learned.encode())
    assert again is not None and again.slots == learned.slots


def test_a_kept_line_counts_only_while_it_stands_in_place() -> None:
    """An item of a reshuffled list that stayed in place while a slot was learned around it is
    forgotten the first load it moves or goes; a heading between runs that vary counts on."""
    from changewatch.core.steady import inner_of, sighted

    first = ["Updated · 22:01", "Trending now", "one", "two"]
    inner = inner_of(first, [1])
    assert [e[1] for e in inner] == [1]
    second = ["Updated · 22:07", "Trending now", "three", "four", "five"]  # one line more after it
    kept = sighted(inner, first, second)
    assert [e[1:] for e in kept] == [(2, 1, 1, 2, 3)]
    assert sighted(kept, second, ["Updated · 22:09", "six", "Trending now", "seven", "eight"]) == ()  # moved
    assert sighted(kept, second, ["Updated · 22:09", "Most read", "six", "seven"]) == ()  # edited
    assert sighted(kept, second, ["Trending now", "Trending now", "six"]) == ()  # doubled
