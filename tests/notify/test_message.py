"""One message per destination: every change named, capped in size, saying what was cut."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from changewatch.core.diff import line_diff
from changewatch.notify.message import DIFF_LINES, SECTION_CHARS, _fair, build_message
from changewatch.store import PendingNotification


def pending(change_id: int, kind: str, **record: Any) -> PendingNotification:
    full = {"key": f"k{change_id}", "url": f"https://s.example/{change_id}", "kind": kind, **record}
    return PendingNotification(change_id, "d", "watch", f"k{change_id}", kind, "2026-11-30T12:00:00Z", full, 0)


def test_each_kind_shows_what_changed_in_the_page_s_own_words() -> None:
    message = build_message([
        pending(1, "field", changes={"offers.price": {"old": "€ 89,00", "new": "€ 79,00"}}, summary="Cheaper."),
        pending(2, "content", diff="- Old Terms.\n+ New Terms!", distance=4),
        pending(3, "entities", added=[{"key": "https://s.example/i/9", "fields": {"title": "Flat, 2 rooms"}}],
                removed=[{"key": "https://s.example/i/1", "fields": {}}]),
        pending(4, "error", error="blocked: HTTP 403"), pending(5, "moved", moved_to="https://t.example/5")],
        4000, "sqlite:///state.db")
    assert message.title == "changewatch: 5 changes (content, entities, error, field, moved) from watch"
    body = message.body
    for text in ("offers.price: € 89,00 → € 79,00", "Summary: Cheaper.", "- Old Terms.", "+ New Terms!",
                 "+ https://s.example/i/9 (title: Flat, 2 rooms)", "- https://s.example/i/1", "blocked: HTTP 403",
                 "moved to https://t.example/5", "[entities] https://s.example/3 (key k3) · change 3"):
        assert text in body, text
    assert message.change_ids == (1, 2, 3, 4, 5)


def test_a_huge_diff_and_a_long_batch_are_cut_and_say_so() -> None:
    diff = "\n".join(f"+ line {i} of a long change" for i in range(500))
    changes = [pending(i, "content", diff=diff) for i in range(1, 60)]
    message = build_message(changes, 4000, "postgresql://u:***@db/x")
    assert len(message.body) <= 4000
    assert f"… {500 - DIFF_LINES} more added lines" in message.body
    assert "more changes not shown here (ids" in message.body and "changewatch changes --store postgresql://u:***@db/x"\
        in message.body
    assert message.change_ids == tuple(range(1, 60))  # every one is named or counted


def test_one_section_longer_than_the_message_is_cut_to_fit() -> None:
    message = build_message([pending(1, "field", changes={f"f{i}": {"old": "a" * 200, "new": "b"} for i in range(8)})],
                            500, "x")
    assert len(message.body) <= 500 and "cut" in message.body


def diff_lines(body: str) -> list[str]:
    return [line.strip() for line in body.splitlines() if line.startswith("    ")]


def test_an_edited_40_line_block_shows_what_was_removed_and_what_the_page_says_now() -> None:
    old = "\n".join(["Terms of service"] + [f"Clause {i}: the provider may change these terms." for i in range(40)]
                    + ["Contact us"])
    new = "\n".join(["Terms of service"] + [f"Clause {i}: the provider will not change these terms." for i in
                                            range(40)] + ["Contact us"])
    diff = line_diff(old, new, max_lines=200, max_chars=100_000)  # the record's whole diff: 82 lines
    message = build_message([pending(1, "content", diff=diff, distance=21)], 4000, "x")
    shown = diff_lines(message.body)
    removed = [line for line in shown if line.startswith("- ")]
    added = [line for line in shown if line.startswith("+ ")]
    assert len(removed) == len(added) == DIFF_LINES // 2  # cut alike: neither side is the one cut away
    assert added[0].startswith("+ Clause 0: the provider will not") and removed[0].startswith("- Clause 0: the")
    assert "… 30 more removed lines" in shown and "… 30 more added lines" in shown
    assert shown.index("… 30 more removed lines") < shown.index(added[0])  # each side in its place
    assert "82 diff lines, cut passage by passage" in message.body
    assert len(message.body) <= SECTION_CHARS and "cut at" not in message.body  # fitted, not chopped


def test_a_capped_diff_of_several_passages_shows_each_passage_s_two_sides() -> None:
    old = "\n".join(f"line {i}" for i in range(200))
    new_lines = [f"line {i}" for i in range(200)]
    for start in (10, 60, 120):  # three edited blocks of 12 lines
        new_lines[start:start + 12] = [f"LINE {i} rewritten" for i in range(start, start + 12)]
    diff = line_diff(old, "\n".join(new_lines), max_lines=500, max_chars=100_000)
    shown = diff_lines(build_message([pending(1, "content", diff=diff)], 4000, "x").body)
    assert shown.count("@@") == 2  # three passages
    for start in (10, 60, 120):
        assert f"- line {start}" in shown and f"+ LINE {start} rewritten" in shown
    assert sum(line[:2] in ("- ", "+ ") for line in shown) == DIFF_LINES


def test_too_many_passages_are_counted_not_half_shown() -> None:
    old = "\n".join(f"line {i}" for i in range(100))
    new = "\n".join(f"line {i}" if i % 4 else f"LINE {i}" for i in range(100))  # 25 one-line edits
    diff = line_diff(old, new, max_lines=500, max_chars=100_000)
    shown = diff_lines(build_message([pending(1, "content", diff=diff)], 4000, "x").body)
    assert shown[-1] == "… 15 more changed passages (30 lines)"
    edits = [line for line in shown if line[:2] in ("- ", "+ ")]
    assert len(edits) == 20 and all(f"+ LINE {4 * n}" in edits for n in range(10))


def test_a_short_diff_of_long_lines_keeps_its_added_lines() -> None:
    diff = "\n".join([*(f"- {'old words ' * 25}{i}" for i in range(6)),
                      *(f"+ {'new words ' * 25}{i}" for i in range(6))])
    body = build_message([pending(1, "content", diff=diff)], 4000, "x").body
    assert len(body) <= SECTION_CHARS and "cut at" not in body
    assert sum(line.startswith("+ new words") for line in diff_lines(body)) == 6


def test_a_diff_that_fits_is_shown_as_it_is() -> None:
    diff = "  Intro\n- Old Terms.\n+ New Terms!\n  Outro"
    body = build_message([pending(1, "content", diff=diff, distance=4)], 4000, "x").body
    assert body.splitlines()[1:] == ["  text changed (4 simhash bits):", "      Intro", "    - Old Terms.",
                                     "    + New Terms!", "      Outro"]


def test_sharing_lines_fairly() -> None:
    assert _fair([40, 40], 20) == [10, 10]
    assert _fair([3, 40], 20) == [3, 17]  # what a short side leaves goes to the other
    assert _fair([0, 5, 5], 4) == [0, 2, 2]
    assert _fair([1, 1, 1], 2) == [1, 1, 0]


def test_entity_changes_show_old_and_new_and_no_none() -> None:
    body = build_message([pending(1, "entities", changed=[
        {"key": "https://s.example/i/1", "changes": {"price": {"old": "€ 1200", "new": "€ 1150"},
                                                     "floor": {"old": None, "new": "3rd"}}}],
        added=[{"key": "https://s.example/i/2", "fields": {"title": "Flat", "price": None}}])], 4000, "x").body
    assert "~ https://s.example/i/1 (price: € 1200 → € 1150, floor: (none) → 3rd)" in body
    assert "+ https://s.example/i/2 (title: Flat)" in body
    assert "None" not in body


def test_the_values_a_condition_tested_are_shown_to_the_destinations_it_chose() -> None:
    conditions = [
        {"when": "offers.price < 80", "values": {"offers.price": {"old": "62 EUR", "new": "62 EUR"}},
         "destinations": ["json://state.example/x"]},
        {"when": {"crossing": "offers.price < 80"}, "values": {"offers.price": {"old": "89 EUR", "new": "62 EUR"}},
         "destinations": ["json://deals.example/x"]}]
    change = pending(1, "field", changes={"name": {"old": "Kettle", "new": "Kettle 2000"}}, conditions=conditions)
    state = build_message([change], 4000, "x", "json://state.example/x").body
    assert "sent as offers.price < 80 holds: offers.price: 62 EUR → 62 EUR" in state and "became true" not in state
    deals = build_message([change], 4000, "x", "json://deals.example/x").body
    assert "sent as offers.price < 80 became true: offers.price: 89 EUR → 62 EUR" in deals and " holds" not in deals
    assert "name: Kettle → Kettle 2000" in deals
    other = build_message([change], 4000, "x", "json://ops.example/x").body
    assert "sent as" not in other  # a destination no condition chose


def test_a_short_message_shares_out_its_diff_too() -> None:
    old = "\n".join(f"Clause {i}: the provider may change these terms." for i in range(40))
    new = "\n".join(f"Clause {i}: the provider will not change these terms." for i in range(40))
    diff = line_diff(old, new, max_lines=200, max_chars=100_000)
    body = build_message([pending(1, "content", diff=diff)], 600, "x").body
    assert len(body) <= 600 and "cut" not in body.replace("cut passage by passage", "")
    shown = diff_lines(body)
    assert any(line.startswith("+ Clause 0") for line in shown) and any(line.startswith("- Clause 0") for line in shown)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(1, 300)), min_size=1, max_size=30),
       st.sampled_from([500, 1000, 4000]))
def test_a_capped_diff_always_fits_and_never_shows_one_side_of_a_passage_alone(
        passages: list[tuple[int, int, int]], max_chars: int) -> None:
    lines: list[str] = []
    for n, (removed, added, width) in enumerate(passages):
        lines += [f"  same {n}", *(f"- {'r' * width}" for _ in range(removed)), *(f"+ {'a' * width}" for _ in
                                                                                   range(added))]
    body = build_message([pending(1, "content", diff="\n".join(lines))], max_chars, "x").body
    assert len(body) <= max_chars
    if "cut passage by passage" not in body:
        return
    assert "… cut at" not in body  # shared out, not chopped
    shown = diff_lines(body)
    kept = [p for p in passages if p[0] or p[1]]
    groups = "\n".join(shown).split("\n@@\n")
    for (removed, added, _), group in zip(kept, groups, strict=False):
        if group.startswith("… ") and "more changed passage" in group:
            break
        assert ("\n- " in "\n" + group) == bool(removed) and ("\n+ " in "\n" + group) == bool(added)


def test_a_record_diff_capped_with_several_markers_is_counted_once() -> None:
    old = [f"Clause {i}: the provider may change these terms." for i in range(40)]
    new = [f"Clause {i}: the provider will not change these terms." for i in range(40)]
    filler = [f"filler {i}" for i in range(10)]
    diff = line_diff("\n".join(old + filler + ["Price 10", "end"]), "\n".join(new + filler + ["Price 12", "end"]))
    counted = [int(line[3:].split(" ")[0]) for line in diff.split("\n") if line.endswith("more diff lines)")]
    assert len(counted) == 1 and "+ Price 12" in diff  # the record: its block cut, its last hunk whole
    body = build_message([pending(1, "content", diff=diff)], 4000, "x").body
    shown = diff_lines(body)
    assert shown[-1] == f"… ({sum(counted)} more diff lines)" and sum("more diff lines" in s for s in shown) == 1
    assert "+ Price 12" in shown and any(line.startswith("+ Clause 0: the provider will not") for line in shown)
    several = "- a\n+ A\n… (3 more diff lines)\n  b\n@@\n- c 1\n+ C 1\n… (7 more diff lines)\n" + "\n".join(
        f"  x{i}" for i in range(30))
    assert diff_lines(build_message([pending(1, "content", diff=several)], 4000, "x").body)[-1] == \
        "… (10 more diff lines)"


def site_page(change_id: int, kind: str, site: str, url: str, **record: Any) -> PendingNotification:
    key = site if url == "" else f"{site}|{url}"
    full = {"key": key, "url": url or f"https://{site}.example/sitemap.xml", "kind": kind, "site_watch": site,
            **record}
    return PendingNotification(change_id, "d", "watch", key, kind, f"2026-11-30T12:00:{change_id:02}Z", full, 0)


def test_a_site_watchs_changes_are_one_message_gathered_under_the_site() -> None:
    changes = [site_page(1, "content", "docs", "https://docs.example/a", diff="- Old.\n+ New!"),
               pending(2, "field", changes={"p": {"old": "1", "new": "2"}}),
               site_page(3, "error", "docs", "https://docs.example/b", error="http: HTTP 503"),
               site_page(4, "entities", "docs", "", added=[{"url": "https://docs.example/c"}],
                         removed=[{"url": "https://docs.example/d"}, {"url": "https://docs.example/e"}])]
    message = build_message(changes, 4000, "x")
    assert message.change_ids == (1, 2, 3, 4)
    body = message.body
    head = "== site watch docs: 1 page added, 2 pages removed, 1 page changed, 1 page failing =="
    assert body.startswith(head + "\n[entities] https://docs.example/sitemap.xml (key docs)")
    assert body.index("change 4") < body.index("change 1") < body.index("change 3") < body.index("change 2")
    assert "+ https://docs.example/c" in body and "- https://docs.example/e" in body and "+ New!" in body
    assert body.count("== site watch") == 1
    only = build_message(changes[2:], 4000, "x")
    assert only.title == ("changewatch: site watch docs: 1 page added, 2 pages removed, 1 page failing, "
                          "2 changes (entities, error) from watch")


def test_a_cut_message_counts_a_site_watchs_changes_it_left_out() -> None:
    diff = "\n".join(f"+ line {i} of a long change" for i in range(40))
    changes = [site_page(i, "content", "docs", f"https://docs.example/{i}", diff=diff) for i in range(1, 40)]
    changes.insert(0, pending(50, "field", changes={"p": {"old": "1", "new": "2"}}))
    message = build_message(changes, 3000, "x")
    assert len(message.body) <= 3000 and "more changes not shown here (ids" in message.body
    assert "--since 2026-11-30T12:00:" in message.body
