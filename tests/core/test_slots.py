"""Slots (core/slots.py, core/learned.py): what a slot holds is ignored while its anchors stand;
an edit outside it, its anchors gone, or its growth beyond twice its size is a change; slots
learned by calibration, by normal runs, by a confirmation (provisional) and from a diff."""

from __future__ import annotations

import random

from changewatch.core.calibration import calibrate
from changewatch.core.learned import Learned, between_loads, forget_slot, judge, learn_noise, numbered, signature

HEAD = ["Local news", "Council approves the new library budget.", "Trending now"]
MIDDLE = ["The library opens in May.", "Its reading room seats 120 people."]
TAIL = ["Related", "Contact the newsroom"]
POOL = [f"Headline number {word} of the day" for word in
        ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo",
         "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango")]
ADS = [f"Sponsored: {a} {b}" for a in ("buy", "try", "win", "get") for b in ("kettles", "trips", "phones", "cars")]


def page(n: int, middle: list[str] | None = None, box: int = 3) -> str:
    rng = random.Random(n)
    return "\n".join([*HEAD, *rng.sample(POOL, box), *(middle or MIDDLE)[:1], rng.choice(ADS),
                      *(middle or MIDDLE)[1:], *TAIL])


def calibrated(loads: int = 5) -> Learned:
    learned = None
    for n in range(1, loads + 1):
        learned = calibrate(page(0), page(n), learned)
    assert learned is not None
    return learned


def test_calibration_learns_the_box_and_the_ad_line_as_slots_between_stable_lines() -> None:
    learned = calibrated()
    assert [s.labels for s in learned.slots] == [("Trending now", MIDDLE[0]), (MIDDLE[0], MIDDLE[1])]
    assert [s.most for s in learned.slots] == [3, 1]
    for n in range(10, 60):  # lines never seen before, in the slots: quiet
        learning = judge(page(0), page(n), learned)
        assert not learning.remaining, n
        learned = learning.learned


def test_a_one_word_edit_outside_the_slots_shows_alone() -> None:
    learned = calibrated()
    edited = page(70, [MIDDLE[0], "Its reading room seats 150 people."])
    learning = judge(page(0), edited, learned)
    edit = ((MIDDLE[1],), ("Its reading room seats 150 people.",))
    assert [(h.removed, h.added) for h in learning.remaining] == [edit]
    assert learning.ignored_regions["slots"][0]["before"] == "Trending now"
    # the diff is shown from the old text with the slots as they are now
    shown = learning.shown_from.split("\n")
    assert [line for line in shown if line not in edited.split("\n")] == [MIDDLE[1]]


def test_the_anchors_a_record_shows_are_the_new_text_s_lines() -> None:
    learned = calibrated()
    edited_anchor = "Its reading room seats 150 people."  # a number edited: the same signature
    shown = []
    for n in range(70, 80):
        learning = judge(page(0), page(n, [MIDDLE[0], edited_anchor]), learned)
        shown += [(slot["before"], slot["after"]) for slot in learning.ignored_regions["slots"]]
        # and what is learned (``changewatch explain``) shows them too
        assert [s.labels for s in learning.learned.slots][1] == (MIDDLE[0], edited_anchor)
    assert MIDDLE[1] not in {label for pair in shown for label in pair}, shown
    assert (MIDDLE[0], edited_anchor) in shown and ("Trending now", MIDDLE[0]) in shown


def test_an_edited_anchor_is_a_change_and_the_slot_is_anchored_anew() -> None:
    learned = calibrated()
    edited = page(80, ["The library opens in June.", MIDDLE[1]])
    learning = judge(page(0), edited, learned)
    assert [(h.removed, h.added) for h in learning.remaining] == [((MIDDLE[0],), ("The library opens in June.",))]
    assert [s.labels for s in learning.learned.slots][1] == ("The library opens in June.", MIDDLE[1])
    assert not judge(edited, page(81, ["The library opens in June.", MIDDLE[1]]), learning.learned).remaining


def test_a_removed_anchor_is_a_change_shown_alone() -> None:
    learned = calibrated()
    gone = "\n".join(line for line in page(90).split("\n") if line != MIDDLE[1])
    learning = judge(page(0), gone, learned)
    assert [(h.removed, h.added) for h in learning.remaining] == [((MIDDLE[1],), ())]


def test_a_slot_grown_beyond_twice_its_size_is_reported_once_then_relearned() -> None:
    learned = calibrated()
    grown = page(100, box=7)
    first = judge(page(0), grown, learned)
    assert first.remaining  # 7 lines where 3 were seen
    again = judge(grown, page(101, box=7), first.learned)
    assert not again.remaining  # seen holding 7: its size now


def test_a_fixed_size_slot_holding_one_line_more_shows_that_line() -> None:
    learned = calibrated()
    added = page(110, [MIDDLE[0], "A new paragraph about the opening hours.", MIDDLE[1]])
    learning = judge(page(0), added, learned)
    assert [(h.removed, h.added) for h in learning.remaining] == [((), ("A new paragraph about the opening hours.",))]


def test_a_real_edit_during_calibration_is_not_learned() -> None:
    learned = None
    edited = "Council approves a smaller library budget."
    for n in range(1, 6):
        load = page(n) if n < 3 else page(n).replace(HEAD[1], edited)
        learned = calibrate(page(0), load, learned)
    assert learned is not None
    learning = judge(page(0), page(9).replace(HEAD[1], edited), learned)
    assert [(h.removed, h.added) for h in learning.remaining] == [((HEAD[1],), (edited,))]


def test_a_page_whose_every_line_varies_is_noisy() -> None:
    def ticker(n: int) -> str:
        return "\n".join(f"Price {random.Random(n * 10 + i).random():.6f} at tick {n}-{i}" for i in range(12))

    learned = None
    for n in range(1, 4):
        learned = calibrate(ticker(0), ticker(n), learned)
    assert learned is not None and learned.noisy == 1


def test_between_loads_learns_provisional_slots_promoted_when_new_again() -> None:
    first, second = page(1), page(2)
    learned = between_loads(None, first, second)
    assert learned.slots and all(s.provisional for s in learned.slots)
    later = judge(second, page(3), learned)  # new again: it varies
    assert not later.remaining and not any(s.provisional for s in later.learned.slots)


def test_between_loads_a_difference_that_stays_put_is_reported_then() -> None:
    first = page(1)
    second = page(1, [MIDDLE[0], "Its reading room seats 150 people."])  # an edit landed between the loads
    learned = between_loads(None, first, second)
    later = judge(second, second, learned)  # the confirmation's text again: it stayed put
    assert [(h.removed, h.added) for h in later.remaining] == [((MIDDLE[1],), ("Its reading room seats 150 people.",))]
    assert not later.learned.slots


def test_between_loads_a_block_only_one_load_shows_widens_the_slot_to_hold_both() -> None:
    """A teaser that flips, and a newsletter block the second load shows and the first lacks: the
    slot holds one or two lines, so a later load with the block and the first teaser is quiet,
    while a paragraph added after the slot's anchor is a change."""
    head, tail = ["Council approves the new library budget.", "The library opens in May."], ["Related", "Contact"]
    teaser = ("Subscribe today: your first month is free", "Join 40,000 readers who get our morning brief")
    newsletter = "Sign up for our newsletter"
    first = "\n".join([*head, teaser[0], *tail])
    second = "\n".join([*head, teaser[1], newsletter, *tail])
    learned = between_loads(None, first, second)
    assert [(s.least, s.most) for s in learned.slots] == [(1, 2)]
    later = judge(first, "\n".join([*head, teaser[0], newsletter, *tail]), learned)
    assert not later.remaining, later.remaining
    added = "The reading room seats 120 people and opens at nine."
    loud = judge(first, "\n".join([*head, teaser[0], newsletter, tail[0], added, tail[1]]), learned)
    assert [h.added for h in loud.remaining] == [(added,)]


def test_forget_slot_removes_one_slot_by_its_number() -> None:
    learned = calibrated()
    listed = numbered(learned, page(0))
    assert [kind for kind, _ in listed[:2]] == ["slot", "slot"]
    fewer = forget_slot(learned, 1, page(0))
    assert [s.labels for s in fewer.slots] == [(MIDDLE[0], MIDDLE[1])]
    assert judge(page(0), page(5), fewer).remaining  # the box is a change again


def test_noise_from_a_diff_learns_a_slot_and_an_edit_elsewhere_still_shows() -> None:
    diff = "  Trending now\n- Headline one\n+ Headline two\n  The library opens in May."
    old = "\n".join([*HEAD, "Headline one", *MIDDLE, *TAIL])
    learned = learn_noise(None, diff)
    assert not judge(old, "\n".join([*HEAD, "Something new", *MIDDLE, *TAIL]), learned).remaining
    # as many lines as the diff showed there: a line more is a change
    assert judge(old, "\n".join([*HEAD, "Something new", "Another", *MIDDLE, *TAIL]), learned).remaining
    edited = "\n".join([*HEAD, "Something new", MIDDLE[0], "Its reading room seats 9 people.", *TAIL])
    assert judge(old, edited, learned).remaining


def test_slots_round_trip_and_older_regions_read_as_slots() -> None:
    learned = calibrated()
    assert Learned.decode(learned.encode()) == learned
    old = Learned.decode({"lines": [], "regions": {f"{signature('a')}:{signature('b')}": "x"}})
    assert old is not None and [(s.before, s.after, s.sample) for s in old.slots] == [
        (signature("a"), signature("b"), "x")]


def test_a_fixed_slot_holding_one_line_more_in_the_old_text_never_shows_a_line_it_still_holds_as_removed() -> None:
    # a box seen holding three lines each time (fixed) held four in the stored text: the extra
    # line is looked for at an end, and the end whose line the box still shows (a teaser above a
    # list, kept while the list's items change) is the box's own, never text removed beside it
    from changewatch.core.slots import Slot

    teaser = "Subscribe today and read everything"
    items = ["Harbour ferry returns to the island after a long and quiet winter",
             "Night trains are coming back to the valley towns at last", "Council backs it"]
    after = "Tickets for the opening weekend are available at the front desk and online."
    slot = Slot(signature("Related"), signature(after), most=3, least=3, varied=2)
    learned = Learned().with_slots([slot])
    intro = "The museum reopens its west wing after two years of careful restoration work."
    old = [intro, "Related", teaser, *items, after]
    new = [intro, "Related", teaser, "Bakery wins a prize", "Tram line extended", after]
    verdict = judge("\n".join(old), "\n".join(new), learned)
    removed = [line for hunk in verdict.remaining for line in hunk.removed]
    assert teaser not in removed, removed
