"""Two loads judged together (core/confirm.py): only the differences both loads show."""

from __future__ import annotations

import random
from typing import Any

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.comparisons.content_part import ContentPart
from changewatch.core.confirm import Loads, baseline_loads, confirmed_text, judge_loads, observe_loads
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.verdict import classify, digest

from ._support import prose_paragraphs

COMPARISONS = load_comparisons()
PARAGRAPHS = prose_paragraphs(1200, 12, seed=3)
HEADLINES = [" ".join(random.Random(n).sample(PARAGRAPHS[0].split(), 6)).capitalize() for n in range(300)]


def page(*, box: list[str], paragraphs: list[str] = PARAGRAPHS, extra: str = "") -> str:
    items = "".join(f"<li>{h}</li>" for h in box)
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (f"<html><body><h1>Town news</h1><main>{body}{extra}</main>"
            f"<aside><h2>Trending now</h2><ul>{items}</ul><p>More stories below</p></aside></body></html>")


def obs(**kw: Any) -> Observation:
    kw.setdefault("key", "k")
    kw.setdefault("url", "https://news.example/")
    return Observation(**kw)


def snap(**kw: Any) -> Snapshot:
    return digest(obs(**kw), COMPARISONS)


def loads(old: Snapshot, first: Snapshot, second: Snapshot) -> Any:
    return judge_loads(Loads(old, first, second), COMPARISONS, CompareContext())


def text(snapshot: Snapshot | None) -> str:
    assert snapshot is not None
    part = snapshot.part("content")
    assert isinstance(part, ContentPart)
    return part.text


def box(seed: int) -> list[str]:
    return random.Random(seed).sample(HEADLINES, 5)


def test_a_box_new_on_every_load_is_not_a_change() -> None:
    old, first, second = (snap(html=page(box=box(n))) for n in (1, 2, 3))
    assert classify(old, first, COMPARISONS).kind is Kind.CONTENT  # the candidate
    verdict = loads(old, first, second)
    assert verdict.kind is Kind.NOISE or verdict.kind is Kind.NONE
    assert "diff" not in verdict.members
    # the stored text is still the baseline's: nothing unconfirmed moved it
    assert text(verdict.keep or old) == text(old)


def test_an_edit_in_both_loads_is_reported_without_the_box() -> None:
    edited = [*PARAGRAPHS[:3], PARAGRAPHS[3] + " Doors open in the east hall.", *PARAGRAPHS[4:]]
    old = snap(html=page(box=box(1)))
    first, second = (snap(html=page(box=box(n), paragraphs=edited)) for n in (2, 3))
    verdict = loads(old, first, second)
    assert verdict.kind is Kind.CONTENT
    diff = verdict.members["diff"]
    assert "Doors open in the east hall." in diff
    assert not any(h in diff for h in box(2) + box(3))
    # the confirmation's page is the one kept
    assert text(verdict.keep) == text(second)


def test_an_edit_that_only_the_confirmation_shows_is_not_reported_now() -> None:
    # the page changed between the two loads: late (the next run reports it), never stored unseen
    old, first = snap(html=page(box=box(1))), snap(html=page(box=box(1), extra="<p>First notice.</p>"))
    second = snap(html=page(box=box(1), extra="<p>Second notice.</p>"))
    verdict = loads(old, first, second)
    assert verdict.kind in (Kind.NONE, Kind.NOISE)
    assert text(verdict.keep or old) == text(old)
    assert classify(verdict.keep or old, second, COMPARISONS).kind is Kind.CONTENT


def test_a_field_that_flips_between_loads_is_a_variant() -> None:
    old = snap(fields={"price": "10", "title": "Lamp"})
    first = snap(fields={"price": "12", "title": "Lamp"})
    second = snap(fields={"price": "14", "title": "Lamp"})
    verdict = loads(old, first, second)
    assert verdict.kind in (Kind.NONE, Kind.NOISE)
    assert "changes" not in verdict.members


def test_only_the_fields_both_loads_changed_alike_are_reported() -> None:
    old = snap(fields={"price": "10", "title": "Lamp", "badge": "A"})
    first = snap(fields={"price": "12", "title": "Lamp", "badge": "B"})
    second = snap(fields={"price": "12", "title": "Lamp", "badge": "C"})
    verdict = loads(old, first, second)
    assert verdict.kind is Kind.FIELD
    assert set(verdict.members["changes"]) == {"price"}
    assert verdict.members["changes"]["price"]["new"] == "12"


def test_entities_present_in_both_loads_only() -> None:
    def entities(*keys: str) -> Snapshot:
        return snap(entities=[{"key": f"https://shop.example/{k}", "fields": {"name": k}} for k in keys])

    old, first, second = entities("a", "b", "c"), entities("a", "b", "d", "x1"), entities("a", "b", "d", "x2")
    verdict = loads(old, first, second)
    assert verdict.kind is Kind.ENTITIES
    assert [e["key"] for e in verdict.members["added"]] == ["https://shop.example/d"]
    assert [e["key"] for e in verdict.members["removed"]] == ["https://shop.example/c"]


def test_entities_gone_where_entities_rotate_between_loads_are_not_a_change() -> None:
    """A listing whose two sponsored entries are new on every load: the baseline's are gone in
    both loads, but they went where entries come and go between the loads; a job removed in both
    loads is still a change."""
    def listing(*paths: str) -> Snapshot:
        return snap(entities=[{"key": f"https://jobs.example{p}", "fields": {"t": p}} for p in paths])

    old = listing("/jobs/1", "/jobs/2", "/jobs/3", "/promo/11", "/promo/12")
    first, second = listing("/jobs/1", "/jobs/2", "/jobs/3", "/promo/13", "/promo/14"), \
        listing("/jobs/1", "/jobs/2", "/jobs/3", "/promo/15", "/promo/16")
    assert loads(old, first, second).kind is not Kind.ENTITIES
    first, second = listing("/jobs/1", "/jobs/3", "/promo/13", "/promo/14"), \
        listing("/jobs/1", "/jobs/3", "/promo/15", "/promo/16")
    verdict = loads(old, first, second)
    assert verdict.kind is Kind.ENTITIES and not verdict.members.get("added")
    assert [e["key"] for e in verdict.members["removed"]] == ["https://jobs.example/jobs/2"]


def test_a_block_page_confirms_nothing() -> None:
    old = snap(html=page(box=box(1)))
    first = snap(html=page(box=box(1), extra="<p>New notice.</p>"))
    blocked = obs(html="<html><head><title>Just a moment...</title></head><body>Checking your browser "
                       "before accessing. Please complete the captcha.</body></html>")
    verdict = observe_loads(obs(html=page(box=box(1), extra="<p>New notice.</p>")), blocked, old, COMPARISONS)
    assert verdict.kind is Kind.ERROR
    assert first.part("content") is not None


def test_confirmed_text_hunks() -> None:
    check = confirmed_text("a\nbox 1\nb\nc", "a\nbox 2\nb\nc!", "a\nbox 3\nb\nc!")
    assert (check.confirmed, check.unconfirmed) == (1, 1)
    removal = confirmed_text("a\nx\nb", "a\nb", "a\nb")
    assert (removal.confirmed, removal.unconfirmed) == (1, 0)
    back = confirmed_text("a\nx\nb", "a\nx\nb", "a\nb")  # present on one load only: not a removal
    assert (back.confirmed, back.unconfirmed) == (0, 1)


def test_a_sentence_added_next_to_a_line_that_varies_on_every_load_is_confirmed_alone():
    from changewatch.core.confirm import confirmed_text

    before = "Intro\nPage generated 10:00:01 · request id 1a2b3c4d5e\nBody"
    first = "Intro\nRefunds now take sixty days.\nPage generated 10:05:07 · request id 9f8e7d6c5b\nBody"
    second = "Intro\nRefunds now take sixty days.\nPage generated 10:05:09 · request id 3c4d5e6f7a\nBody"
    check = confirmed_text(before, first, second)
    assert check.confirmed and check.unconfirmed
    # the diff from shown_from to the second load is the sentence alone
    assert check.shown_from == "Intro\nPage generated 10:05:09 · request id 3c4d5e6f7a\nBody"
    # a box that rotates between the loads confirms nothing
    rotating = confirmed_text("a\nbox 1\nb", "a\nbox 2\nb", "a\nbox 3\nb")
    assert (rotating.confirmed, rotating.shown_from) == (0, "a\nbox 3\nb")
    # a headline both loads happen to show, among others that rotate: not a change
    shared = confirmed_text("a\nTram school (I)\nLibrary tram (A)\nb", "a\nMarket square (E)\nLibrary tram (A)\nb",
                            "a\nMarket square (E)\nOrchard ferry (Q)\nb")
    assert shared.confirmed == 0


ADS = [" ".join(random.Random(1000 + n).sample(PARAGRAPHS[1].split(), 7)).capitalize() + "." for n in range(60)]


def ad_page(n: int, paragraphs: list[str]) -> str:
    """A page with an ad slot (a new phrase on every load) between its fourth and fifth paragraphs."""
    body = "".join(f"<p>{p}</p>" for p in paragraphs[:4]) + f"<div class='ad'><p>{ADS[n]}</p></div>"
    body += "".join(f"<p>{p}</p>" for p in paragraphs[4:])
    return f"<html><body><h1>Town news</h1><main>{body}</main></body></html>"


def runs(paragraphs: list[str], count: int = 4) -> list[Any]:
    """Each run's verdict (a candidate confirmed by a second load) from a baseline of PARAGRAPHS."""
    stored, verdicts = snap(html=ad_page(0, PARAGRAPHS)), []
    for n in range(1, count + 1):
        first = snap(html=ad_page(2 * n, paragraphs))
        verdict = classify(stored, first, COMPARISONS)
        if verdict.kind.changes_page:
            verdict = loads(stored, first, snap(html=ad_page(2 * n + 1, paragraphs)))
        verdicts.append(verdict)
        stored = verdict.keep if verdict.keep is not None else stored
    return verdicts


def changed(diff: str) -> list[str]:
    return [line for line in diff.split("\n") if line[:1] in "+-"]


def test_an_edit_next_to_a_varying_ad_is_reported_at_once_with_only_its_words() -> None:
    # the ad's new phrase and the edit fall in one hunk: the edit both loads show is still a change
    cases = {
        "removed after": ([*PARAGRAPHS[:4], *PARAGRAPHS[5:]], ["- " + PARAGRAPHS[4]]),
        "edited after": ([*PARAGRAPHS[:4], PARAGRAPHS[4] + " Doors open at nine.", *PARAGRAPHS[5:]],
                         ["- " + PARAGRAPHS[4], "+ " + PARAGRAPHS[4] + " Doors open at nine."]),
        "edited before": ([*PARAGRAPHS[:3], PARAGRAPHS[3] + " Doors open at nine.", *PARAGRAPHS[4:]],
                          ["- " + PARAGRAPHS[3], "+ " + PARAGRAPHS[3] + " Doors open at nine."]),
    }
    for name, (paragraphs, lines) in cases.items():
        first, *later = runs(paragraphs)
        assert first.kind is Kind.CONTENT, name
        assert changed(first.members["diff"]) == lines, name
        assert all(v.kind is not Kind.CONTENT for v in later), name  # reported once


def test_a_paragraph_removed_next_to_a_learned_ad_slot_is_reported() -> None:
    # the ad's slot is learned first (three noise-only runs); then the paragraph after it goes
    stored = snap(html=ad_page(0, PARAGRAPHS))
    edited = [*PARAGRAPHS[:4], *PARAGRAPHS[5:]]
    reported = []
    for n in range(1, 7):
        paragraphs = edited if n >= 4 else PARAGRAPHS
        first = snap(html=ad_page(2 * n, paragraphs))
        verdict = classify(stored, first, COMPARISONS)
        if verdict.kind.changes_page:
            verdict = loads(stored, first, snap(html=ad_page(2 * n + 1, paragraphs)))
        stored = verdict.keep if verdict.keep is not None else stored
        if verdict.kind is Kind.CONTENT:
            reported.append((n, changed(verdict.members["diff"])))
    assert reported == [(4, ["- " + PARAGRAPHS[4]])]


def test_a_line_both_loads_show_amid_lines_that_vary_between_them_is_not_a_change() -> None:
    # a list whose other items differ between the loads: "x5" is one of its items, not an edit
    check = confirmed_text("a\np\nq\nb", "a\nr\nx5\ns\nb", "a\nt\nx5\nu\nb")
    assert (check.confirmed, check.unconfirmed) == (0, 1)
    # the same line beside the page's stable lines, both loads alike: a change
    assert confirmed_text("a\nx1\nx2\nb", "a\nx1\nx2\nx5\nb", "a\nx1\nx2\nx5\nb").confirmed == 1


def test_a_reshuffled_list_whose_fresh_items_both_loads_lack_is_not_a_change() -> None:
    # what the two loads differ in is a slot in their own judgement: the baseline's fresh items,
    # gone from both loads, went from where the page varies between loads
    (s1, s2, s3), fresh = HEADLINES[:3], HEADLINES[100:106]
    lists = ([s1, fresh[0], s2, fresh[1], s3], [s2, fresh[2], s1, fresh[3], s3], [fresh[4], s1, fresh[5], s2, s3])
    old, first, second = (snap(html=page(box=box(1), extra="".join(f"<p>{x}</p>" for x in items))) for items in lists)
    verdict = loads(old, first, second)
    assert not verdict.kind.reported, verdict.members.get("diff")
    edited = [PARAGRAPHS[0] + " Now free.", *PARAGRAPHS[1:]]
    old, first, second = (snap(html=page(box=box(1), paragraphs=p, extra="".join(f"<p>{x}</p>" for x in items)))
                          for p, items in zip((PARAGRAPHS, edited, edited), lists, strict=True))
    verdict = loads(old, first, second)  # an edit beside it is still one, its diff only the edit
    changed = [(line[0], line[1:].strip()) for line in str(verdict.members.get("diff")).split("\n") if line[:1] in "+-"]
    assert verdict.kind is Kind.CONTENT and changed == [("-", PARAGRAPHS[0]), ("+", edited[0])], changed


def test_a_reshuffled_list_whose_edge_item_stayed_in_place_is_not_a_change() -> None:
    # both loads keep one item at the list's end: the slot between them ends on it, and the
    # baseline's items past it (another order, fresh items both loads lack) were the list's
    (s1, s2, s3), fresh = HEADLINES[:3], HEADLINES[100:106]
    lists = ([s1, s3, s2, fresh[0], fresh[1]], [fresh[2], s1, fresh[3], s3, s2], [s3, fresh[4], s1, fresh[5], s2])
    old, first, second = (snap(html=page(box=box(1), extra="".join(f"<p>{x}</p>" for x in items))) for items in lists)
    verdict = loads(old, first, second)
    assert not verdict.kind.reported, verdict.members.get("diff")
    # a paragraph removed past a slot of fixed size (one line that varies) is still a change
    ads = ("Save big on garden chairs", "Now in stock: blue kettles", "Sponsored: three nights for two")
    paragraphs = [[*PARAGRAPHS[:3], ad, *PARAGRAPHS[3:]] for ad in ads]
    del paragraphs[1][5], paragraphs[2][5]
    old, first, second = (snap(html=page(box=box(1), paragraphs=p)) for p in paragraphs)
    verdict = loads(old, first, second)
    changed = [(line[0], line[1:].strip()) for line in str(verdict.members.get("diff")).split("\n") if line[:1] in "+-"]
    assert verdict.kind is Kind.CONTENT and changed == [("-", PARAGRAPHS[4])], changed


def daily_page(day: int) -> str:
    """A page of twelve paragraphs that all name the day: every line changes once a day."""
    body = "".join(f"<p>Daily news of day {day}: paragraph {i} says something stable about day {day}.</p>"
                   for i in range(12))
    return f"<html><body><main>{body}</main></body></html>"


def daily_runs(stored: Snapshot, days: range, confirm: bool = True) -> list[Any]:
    """Each day's verdict: the page changed since the run before, the candidate confirmed by a
    second load of the same content (committed as the pipeline commits it), or not *confirm*ed."""
    verdicts = []
    for day in days:
        first = snap(html=daily_page(day))
        verdict = classify(stored, first, COMPARISONS)
        if confirm and verdict.kind.changes_page:
            verdict = loads(stored, first, snap(html=daily_page(day)))
        verdicts.append(verdict)
        if verdict.kind is not Kind.ERROR or (verdict.error or "").startswith("noisy:"):
            stored = verdict.keep if verdict.keep is not None else stored
    learned = stored.part("content").learned  # type: ignore[union-attr]
    assert learned is None or not (learned.slots or learned.lines or learned.noisy), learned
    return verdicts


def test_a_page_whose_every_line_changes_on_every_run_is_content_each_time() -> None:
    # changes between runs that two loads confirm are content: never learned as where the page
    # varies, never "noisy:"; only what differs between two loads of the same content is
    verdicts = daily_runs(snap(html=daily_page(0)), range(1, 9))
    assert [v.kind for v in verdicts] == [Kind.CONTENT] * 8, [v.error for v in verdicts]
    assert all(f"day {day}: paragraph 11" in v.members["diff"] for day, v in enumerate(verdicts, 1))


def test_a_calibrated_page_whose_every_line_changes_on_every_run_is_content_each_time() -> None:
    from changewatch.core.comparisons.noise import CALIBRATION

    stored = snap(html=daily_page(0))
    for _ in range(3):  # calibration loads that find nothing varying: the key has learned state all the same
        calibration = digest(obs(html=daily_page(0), options={CALIBRATION: True}), COMPARISONS)
        stored = classify(stored, calibration, COMPARISONS,
                          context=CompareContext(options={CALIBRATION: True})).keep or stored
    assert stored.part("content").learned is not None  # type: ignore[union-attr]
    verdicts = daily_runs(stored, range(1, 9))
    assert [v.kind for v in verdicts] == [Kind.CONTENT] * 8, [v.error for v in verdicts]
    # without confirmation (confirm: false) the change between runs is counted, but a change that
    # rewrites the page is a new edition, never where it varies: every day is still reported
    verdicts = daily_runs(stored, range(1, 9), confirm=False)
    assert [v.kind for v in verdicts] == [Kind.CONTENT] * 8, [v.error for v in verdicts]


def baseline(first_html: str, second_html: str) -> Any:
    return baseline_loads(obs(html=first_html), obs(html=second_html), COMPARISONS)


def test_a_baseline_of_two_loads_knows_a_rotating_box_before_the_first_run() -> None:
    verdict = baseline(page(box=box(1)), page(box=box(2)))
    assert verdict.kind is Kind.BASELINE and verdict.counters["content/baseline_slots"] == 1
    stored = verdict.keep
    assert text(stored) == text(snap(html=page(box=box(1))))  # the first load is the baseline
    # the box holds new headlines on the next run: it varies, a slot from then on
    run1 = classify(stored, snap(html=page(box=box(3))), COMPARISONS)
    assert run1.kind in (Kind.NOISE, Kind.NONE), run1.members
    stored = run1.keep or stored
    assert not any(s.provisional for s in stored.part("content").learned.slots)  # type: ignore[union-attr]
    # a word edited outside the box is still reported, with only its words
    edited = [*PARAGRAPHS[:5], PARAGRAPHS[5].replace(" ", " very ", 1), *PARAGRAPHS[6:]]
    run2 = classify(stored, snap(html=page(box=box(4), paragraphs=edited)), COMPARISONS)
    assert run2.kind is Kind.CONTENT
    assert not any(h in run2.members["diff"] for h in box(4) + box(1))


def test_an_edit_between_the_two_loads_of_a_baseline_is_reported_by_the_next_run() -> None:
    # the second load showed a notice edited between the two loads, and the page keeps it: the
    # next run reports the edit (late, never lost), from the first load's text
    first = page(box=box(1), extra="<p>Opening hours: 9 to 5.</p>")
    second = page(box=box(1), extra="<p>Opening hours: 9 to 6.</p>")
    stored = baseline(first, second).keep
    assert text(stored) == text(snap(html=first))
    edited = classify(stored, snap(html=second), COMPARISONS)
    assert edited.kind is Kind.CONTENT
    assert "- Opening hours: 9 to 5.\n+ Opening hours: 9 to 6." in edited.members["diff"]
    # held the first load's text again instead (X, Y, X): the place flips, it varies
    flipped = classify(stored, snap(html=first), COMPARISONS)
    assert flipped.kind in (Kind.NONE, Kind.NOISE)


def test_a_baseline_whose_second_load_is_a_block_page_or_a_rewrite_teaches_nothing() -> None:
    blocked = ("<html><head><title>Just a moment...</title></head><body>Checking your browser "
               "before accessing. Please complete the captcha.</body></html>")
    refused = baseline(page(box=box(1)), blocked)  # the first load alone is the baseline
    assert refused.kind is Kind.BASELINE and refused.counters["content/baseline_unteachable"] == 1
    assert refused.keep.part("content").learned is None  # type: ignore[union-attr]
    rewritten = baseline(page(box=box(1)), page(box=box(2), paragraphs=prose_paragraphs(1200, 12, seed=9)))
    assert rewritten.kind is Kind.BASELINE and rewritten.counters["content/baseline_rewritten"] == 1
    assert rewritten.counters["content/digested"] == 1  # the first load's counters: one observation
    assert rewritten.keep.part("content").learned is None  # type: ignore[union-attr]
    same = baseline(page(box=box(1)), page(box=box(1)))
    assert same.kind is Kind.BASELINE and same.keep.part("content").learned is None  # type: ignore[union-attr]
