"""One message per destination: every change named, capped in size, saying what was cut."""

from __future__ import annotations

from typing import Any

from changewatch.notify.message import DIFF_LINES, build_message
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
    assert f"… {500 - DIFF_LINES} more diff lines" in message.body
    assert "more changes not shown here (ids" in message.body and "changewatch changes --store postgresql://u:***@db/x"\
        in message.body
    assert message.change_ids == tuple(range(1, 60))  # every one is named or counted


def test_one_section_longer_than_the_message_is_cut_to_fit() -> None:
    message = build_message([pending(1, "field", changes={f"f{i}": {"old": "a" * 200, "new": "b"} for i in range(8)})],
                            500, "x")
    assert len(message.body) <= 500 and "cut" in message.body
