"""The learned model of a key's variation (core/learned.py) and the content comparison's use of it
(core/comparisons/noise.py): calibration, learning in normal runs, variants, always-noisy pages."""

from __future__ import annotations

import itertools
from typing import Any

from changewatch.core.calibration import calibrate
from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.comparisons.content_part import ContentPart
from changewatch.core.comparisons.noise import CALIBRATION
from changewatch.core.learned import MAX_LINES, MAX_VARIANTS, Learned, Slot, judge, learn_noise, signature
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.verdict import Verdict, observe
from tests.changes import field as field_change

STABLE = ["Terms of service", "You may cancel at any time.", "We were founded in 1998.", "Contact us"]


def text(*middle: str, stable: list[str] | None = None) -> str:
    lines = list(stable or STABLE)
    return "\n".join([lines[0], lines[1], *middle, *lines[2:]])


def test_signature_collapses_numbers_case_and_spacing() -> None:
    assert signature("1,204 readers") == signature("17  Readers") == signature("3.5 readers")
    assert signature("1,204 readers") != signature("1,204 writers")


def test_nothing_learned_leaves_every_hunk_a_change() -> None:
    learning = judge(text("Trending: cats"), text("Trending: dogs"), None)
    assert [h.removed for h in learning.remaining] == [("Trending: cats",)] and not learning.ignored


def test_learned_lines_are_ignored_and_a_stable_edit_still_shows() -> None:
    learned = Learned(frozenset(signature(x) for x in ("Trending: cats", "Trending: dogs")))
    quiet = judge(text("Trending: cats"), text("Trending: dogs"), learned)
    assert not quiet.remaining and len(quiet.ignored) == 1
    edited = text("Trending: dogs", stable=[*STABLE[:1], "You may cancel within 14 days.", *STABLE[2:]])
    loud = judge(text("Trending: cats"), edited, learned)
    assert [h.removed for h in loud.remaining] == [("You may cancel at any time.",)]
    # the diff is shown from the old text with the ignored hunk as it is now: the line gone is not
    # shown as unchanged, the page's new one is
    assert "Trending: cats" not in loud.shown_from.split("\n")
    assert "Trending: dogs" in loud.shown_from.split("\n")
    assert loud.ignored_regions == {"count": 1, "sample": "Trending: dogs", "slots": []}


def test_a_removed_stable_line_is_never_ignored_even_in_a_volatile_region() -> None:
    learned = Learned(frozenset({signature("Trending: cats")}), (Slot(signature(STABLE[1]), signature(STABLE[2])),))
    old = text("Trending: cats")
    new = "\n".join([STABLE[0], STABLE[1], "Trending: new thing", STABLE[3]])  # and "founded" is gone
    assert judge(old, new, learned).remaining


def test_a_volatile_region_covers_text_never_seen_there() -> None:
    learned = Learned(frozenset({signature("Trending: cats")}), (Slot(signature(STABLE[1]), signature(STABLE[2])),))
    assert not judge(text("Trending: cats"), text("Trending: something new"), learned).remaining


def test_normal_runs_learn_only_what_changes_on_most_loads() -> None:
    learned: Learned | None = Learned(calibrated=1)
    boxes = ["Most read: A", "Most read: B", "Most read: C", "Most read: D", "Most read: E"]
    reported = []
    for old, new in itertools.pairwise(boxes):
        learning = judge(text(old), text(new), learned)
        reported.append(bool(learning.remaining))
        learned = learning.learned
    assert reported == [True, True, True, False]  # the slot changed on 3 of the last 4 changes: volatile
    once = judge(text("x", stable=[*STABLE[:3], "Contact us today"]), text("x"), Learned(calibrated=1))
    assert once.remaining and not once.learned.lines and not once.learned.slots  # text that changed once


def test_recent_variants_flip_back_quietly() -> None:
    a, b = text("Try the digest free"), text("Read our weekly digest")
    first = judge(a, b, Learned(calibrated=1))
    assert first.remaining and not first.known_variant  # a new variant: reported
    back = judge(b, a, first.learned)
    assert not back.remaining and back.learned.provisional  # A again: it flips back (held, tests/core/test_flips.py)
    learned = back.learned
    for i in range(20):
        learned = judge(text(f"variant {i}"), text(f"variant {i + 1}"), learned).learned
    assert len(learned.variants) <= MAX_VARIANTS


def test_calibration_learns_flaps_counters_and_moves_but_not_a_single_change() -> None:
    base = text("1,204 readers", "Breaking news", "Newsletter")
    loads = [text("1,221 readers", "Newsletter"), text("Newsletter", "1,238 readers", "Breaking news"),
             text("1,255 readers", "Newsletter")]
    edited = [*STABLE[:1], "You may no longer cancel.", *STABLE[2:]]
    learned = None
    for i, load in enumerate(loads):
        real = "\n".join(line if line != STABLE[1] or i == 0 else edited[1] for line in load.split("\n"))
        learned = calibrate(base, real, learned)
    assert learned is not None and learned.calibrated == 3
    assert {signature("1 readers"), signature("Breaking news")} <= learned.lines  # three texts; came and went twice
    assert signature("You may no longer cancel.") not in learned.lines  # changed once and stayed: a change
    assert signature(STABLE[1]) not in learned.lines


def test_learned_state_is_bounded() -> None:
    many = Learned().with_lines(str(i) for i in range(MAX_LINES + 500))
    assert len(many.lines) == MAX_LINES


def test_noise_learns_the_lines_of_a_diff() -> None:
    learned = learn_noise(None, "  Terms\n- Trending: cats\n+ Trending: dogs\n  Contact\n@@\n- Old\n+ New\n@@")
    assert learned.lines == {signature(x) for x in ("Trending: cats", "Trending: dogs", "Old", "New")}
    # a slot where the diff shows the lines around it; none where it does not ("@@")
    assert [(s.labels, s.most) for s in learned.slots] == [(("Terms", "Contact"), 1)]


def test_learned_state_round_trips_through_the_snapshot() -> None:
    comparisons = load_comparisons()
    learned = calibrate(text("a 1"), text("b 2"), calibrate(text("a 1"), text("c 3"), None))
    part = ContentPart.of_page(f"<p>{text('x')}</p>", None, False).with_learned(learned)
    data = Snapshot({"content": part}).encode(comparisons)
    back = Snapshot.decode(data, comparisons).part("content")
    assert back is not None and back.learned == learned
    assert Learned.decode({"lines": 3}) is None  # unreadable: nothing learned, never a crash


def _page(*lines: str, price: str = "10") -> Observation:
    body = "".join(f"<p>{line}</p>" for line in lines)
    html = f"<html><body>{body}<span class=p>{price}</span></body></html>"
    return Observation("k", "https://example.com/", html=html, fields={"price": price})


def _observe(obs: Observation, old: Snapshot | None, **options: Any) -> Verdict:
    obs.options.update(options)
    return observe(obs, old, load_comparisons(), context=CompareContext(options=obs.options))


def test_calibration_load_keeps_the_baseline_and_learns() -> None:
    baseline = _observe(_page("Stable one", "Stable two", "Ad: kettles"), None).keep
    assert baseline is not None
    snapshot = baseline
    for ad in ("Ad: phones", "Ad: kettles", "Ad: trips"):
        verdict = _observe(_page("Stable one", "Stable two", ad, price="12"), snapshot, **{CALIBRATION: True})
        assert verdict.kind is Kind.NONE and "calibration/learned_regions" in verdict.counters
        snapshot = verdict.keep or snapshot
    assert snapshot.fields == baseline.fields  # a calibration load moves nothing but what is learned
    assert snapshot.text == baseline.text
    quiet = _observe(_page("Stable one", "Stable two", "Ad: phones"), snapshot)
    assert quiet.kind is Kind.NOISE and quiet.counters["content/learned_ignored"] == 1
    loud = _observe(_page("Stable one", "Stable 2", "Ad: phones"), snapshot)
    assert loud.kind is Kind.CONTENT and loud.members["ignored_regions"]["count"] == 1
    diff = loud.members["diff"]
    assert "- Stable two\n+ Stable 2" in diff and "+ Ad:" not in diff and "- Ad:" not in diff


def test_a_page_whose_every_line_varies_is_reported_noisy_once_and_fields_still_work() -> None:
    def busy(n: int, price: str = "10") -> Observation:
        return _page(*(f"Headline {(n + i) % 7} of the hour" if i % 2 else f"Story {chr(65 + (n + i) % 9)}"
                       for i in range(12)), price=price)

    snapshot = _observe(busy(0), None).keep
    for n in range(1, 8):
        snapshot = _observe(busy(n), snapshot, **{CALIBRATION: True}).keep or snapshot
    first = _observe(busy(8), snapshot)
    assert first.kind is Kind.ERROR and first.error is not None and first.error.startswith("noisy:"), first
    snapshot = first.keep or snapshot
    assert _observe(busy(9), snapshot).kind is Kind.NOISE  # said once
    field = _observe(busy(10, price="12"), snapshot)
    assert field.kind is Kind.FIELD and field.changes == {"price": field_change("10", "12")}


def test_a_provisional_slot_that_stayed_put_is_reported_even_when_the_text_reads_as_stored() -> None:
    from changewatch.core.learned import between_loads

    lines = ["Stable one", "Stable two", "Middle a", "Middle b"]
    first = _observe(_page(*lines, "Ad: kettles"), None).keep
    second = _observe(_page(lines[0], "Stable 2", *lines[2:], "Ad: phones"), None).keep
    assert first is not None and second is not None and first.text and second.text
    learned = between_loads(None, first.text, second.text)
    assert len(learned.slots) == 2 and all(s.provisional for s in learned.slots)
    part = second.part("content").with_learned(learned)
    snapshot = Snapshot({**second.parts, "content": part})
    same = _observe(_page(lines[0], "Stable 2", *lines[2:], "Ad: phones"), snapshot)
    # both stayed put (the ad showed the confirmation's text again too): both are reported
    assert same.kind is Kind.CONTENT and "- Stable two\n+ Stable 2\n" in (same.diff or ""), same
    other = _observe(_page(lines[0], "Stable 2", *lines[2:], "Ad: trips"), snapshot)
    assert other.kind is Kind.CONTENT and "Ad:" not in (other.diff or "") and "+ Stable 2" in (other.diff or "")
    kept = other.keep
    assert kept is not None and [s.provisional for s in kept.part("content").learned.slots] == [False]


def test_a_line_removed_next_to_a_slot_of_fixed_size_is_a_change_not_what_the_slot_held() -> None:
    from changewatch.core.learned import between_loads

    head = ["Town news", "The council met on Monday to discuss the bridge."]
    tail = ["The bridge reopens next spring after repairs.", "Contact the editor."]
    paragraph = "Residents asked for a wider footpath on the east side of the river crossing."
    ad = ["Win a cruise today.", "Cheap flights to Rome.", "Your new sofa awaits.", "Best loans now."]
    learned = between_loads(None, "\n".join([*head, ad[1], *tail]), "\n".join([*head, ad[2], *tail]))
    # the stored text had the paragraph right after the ad; the new one lacks it
    verdict = judge("\n".join([*head, ad[0], paragraph, *tail]), "\n".join([*head, ad[3], *tail]), learned)
    assert [h.removed for h in verdict.remaining] == [(paragraph,)]
    assert not any(h.added for h in verdict.remaining)
