"""build_entities / compare_entities: the set of things a page lists, keyed by canonical URL."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changewatch.core import Entity, build_entities, compare_entities
from changewatch.core import entities as entities_module
from changewatch.core.comparisons import CompareContext
from changewatch.core.comparisons.entities import EntitiesComparison
from changewatch.core.entities import duplicate_key
from changewatch.core.observation import Observation
from tests.changes import field

BASE = "https://Rentals.example:443/search/?q=2br&page=2"


def raw(*items: tuple[Any, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"key": k, "fields": f} for k, f in items]


def test_relative_keys_joined_to_the_base_url_and_canonicalised() -> None:
    entities = build_entities(raw(("/flat/1?utm_source=list#photos", {}), ("flat/2", {}), ("../flat/3", {}),
                                  ("//rentals.example/flat/4;jsessionid=X", {}),
                                  ("HTTPS://RENTALS.example/flat/5?b=2&a=1", {})), base_url=BASE)
    assert list(entities) == [
        "https://rentals.example/flat/1",
        "https://rentals.example/search/flat/2",
        "https://rentals.example/flat/3",
        "https://rentals.example/flat/4",
        "https://rentals.example/flat/5?a=1&b=2",
    ]
    assert all(e.key == k for k, e in entities.items())


def test_absolute_keys_need_no_base() -> None:
    entities = build_entities(raw(("https://rentals.example/flat/1?fbclid=abc", {})))
    assert list(entities) == ["https://rentals.example/flat/1"]


def test_keep_and_drop_params_passed_to_canonicalisation() -> None:
    items = raw(("/flat/1?ref=list&utm_campaign=x&id=1", {}))
    assert list(build_entities(items, base_url=BASE)) == ["https://rentals.example/flat/1?id=1&ref=list"]
    assert list(build_entities(items, base_url=BASE, drop_params=["ref"])) == ["https://rentals.example/flat/1?id=1"]
    assert list(build_entities(items, base_url=BASE, keep_params=["utm_campaign"])) == [
        "https://rentals.example/flat/1?id=1&ref=list&utm_campaign=x"]


def test_non_url_identifiers_kept_as_they_are() -> None:
    entities = build_entities(raw(("sku:123", {}), ("urn:isbn:0451450523", {}), ("  ABC-42  ", {})), base_url=BASE)
    assert list(entities) == ["sku:123", "urn:isbn:0451450523", "ABC-42"]


def test_entities_sharing_a_key_are_told_apart_by_their_text_and_repeats_are_one() -> None:
    entities = build_entities(raw(
        ("/flat/1", {"title": "First"}),
        ("https://rentals.example/flat/1?utm_source=x", {"title": "Second"}),
        ("/flat/2", {"title": "Other"}),
        ("/flat/1#map", {"title": "First"}),  # the first one again: one entity
    ), base_url=BASE)
    flat = "https://rentals.example/flat/1"
    assert list(entities) == [duplicate_key(flat, {"title": "First"}), duplicate_key(flat, {"title": "Second"}),
                              "https://rentals.example/flat/2"]
    assert all(key.startswith("dup:") and key.endswith(":" + flat) for key in list(entities)[:2])
    same = build_entities(raw(("/flat/1", {"title": "First"}), ("/flat/1#photos", {"title": " First "})), base_url=BASE)
    assert list(same) == [flat]  # the same entity twice: one, under its key


def test_a_sponsored_copy_at_the_top_is_added_not_a_change_of_the_item() -> None:
    listing = [("/flat/1", {"title": "Sunny flat", "price": "1200"}), ("/flat/2", {"title": "Loft", "price": "900"})]
    before = build_entities(raw(*listing), base_url=BASE)
    sponsored = ("/flat/2?utm_source=promo", {"title": "Sponsored: Loft", "price": "850"})
    after = build_entities(raw(sponsored, *listing), base_url=BASE)
    added, removed, changed = compare_entities(before, after)
    assert [a["fields"] for a in added] == [sponsored[1]] and removed == [] and changed == []
    # and gone again: the copy is removed, the item unchanged
    added, removed, changed = compare_entities(after, build_entities(raw(*listing), base_url=BASE))
    assert added == [] and [r["fields"] for r in removed] == [sponsored[1]] and changed == []
    # the item itself changed while its copy is there: still seen (as removed and added)
    edited = build_entities(raw(sponsored, listing[0], ("/flat/2", {"title": "Loft", "price": "950"})), base_url=BASE)
    added, removed, changed = compare_entities(before, edited)
    assert {a["fields"]["price"] for a in added} == {"850", "950"}
    assert [r["fields"]["price"] for r in removed] == ["900"]


def _duplicates_cost(n: int) -> int:
    """Entity keys hashed and compared for a page of *n* entities sharing one key (each its own
    text), against the same page with one more."""
    calls = 0
    real = entities_module.duplicate_key

    def counted(canon: str, norm: Any) -> str:
        nonlocal calls
        calls += 1
        return real(canon, norm)

    entities_module.duplicate_key = counted  # type: ignore[assignment]
    try:
        page = raw(*(("/flat/1", {"title": f"Copy {i}"}) for i in range(n)))
        old = build_entities(page[1:], base_url=BASE)
        new = build_entities(page, base_url=BASE)
        added, removed, changed = compare_entities(old, new)
        assert len(new) == n and len(added) == 1 and not removed and not changed
    finally:
        entities_module.duplicate_key = real  # type: ignore[assignment]
    return calls


def test_ten_thousand_duplicate_keys_cost_linear_work() -> None:
    small, large = _duplicates_cost(1_000), _duplicates_cost(10_000)
    assert large <= 12 * small, (small, large)  # linear: 10x; quadratic would be 100x
    assert large <= 3 * 2 * 10_000  # a few hashes per entity


def test_fields_kept_raw_and_normalised() -> None:
    entities = build_entities(raw(("/flat/1", {"price": "1200.00", "title": "  Sunny   flat "})), base_url=BASE)
    entity = entities["https://rentals.example/flat/1"]
    assert entity.fields == {"price": "1200.00", "title": "  Sunny   flat "}
    assert entity.norm == {"price": "1200", "title": "Sunny flat"}


@pytest.mark.parametrize("missing", [None, "", "   "])
def test_content_keys_when_there_is_no_url(missing: str | None) -> None:
    entities = build_entities([{"key": missing, "fields": {"title": "A"}}, {"fields": {"title": "B"}},
                               {"key": missing, "fields": {"title": "A"}}])
    keys = list(entities)
    assert len(keys) == 2
    assert all(k.startswith("content:") for k in keys)
    assert entities[keys[0]].fields == {"title": "A"}


def test_content_keys_are_stable_and_follow_meaning() -> None:
    a = build_entities([{"fields": {"price": "89.00", "title": "Tea"}}])
    b = build_entities([{"fields": {"title": "Tea", "price": 89}}])
    c = build_entities([{"fields": {"title": "Tea", "price": 79}}])
    assert list(a) == list(b)
    assert list(a) != list(c)


def test_unparseable_url_key_does_not_break_the_page() -> None:
    entities = build_entities(raw(("http://[broken/listing", {"t": "a"}), ("//[also-broken/x", {"t": "b"}),
                                  ("/flat/1", {"t": "c"})), base_url=BASE)
    assert len(entities) == 3
    assert "https://rentals.example/flat/1" in entities


def test_entity_json_round_trip() -> None:
    entity = next(iter(build_entities(raw(("/flat/1", {"price": "1200.00"})), base_url=BASE).values()))
    assert Entity.from_json(entity.key, entity.to_json()) == entity


# --- compare_entities -----------------------------------------------------------------------------------

def _set(*items: tuple[str, dict[str, Any]]) -> dict[str, Entity]:
    return build_entities(raw(*items), base_url="https://rentals.example/")


def test_added_removed_changed_in_page_order() -> None:
    old = _set(("/a", {"price": "10"}), ("/b", {"price": "20"}), ("/c", {"price": "30"}), ("/d", {"price": "40"}))
    new = _set(("/e", {"price": "50"}), ("/d", {"price": "41"}), ("/c", {"price": "30.00"}), ("/b", {"price": "21"}),
               ("/f", {}))
    added, removed, changed = compare_entities(old, new)
    assert added == [{"key": "https://rentals.example/e", "fields": {"price": "50"}},
                     {"key": "https://rentals.example/f", "fields": {}}]
    assert removed == [{"key": "https://rentals.example/a", "fields": {"price": "10"}}]
    assert changed == [
        {"key": "https://rentals.example/d", "changes": {"price": field("40", "41")}},
        {"key": "https://rentals.example/b", "changes": {"price": field("20", "21")}},
    ]


def test_removed_follow_the_old_page_order() -> None:
    old = _set(("/z", {}), ("/y", {}), ("/x", {}), ("/keep", {}))
    new = _set(("/keep", {}))
    _, removed, _ = compare_entities(old, new)
    assert [r["key"].rsplit("/", 1)[-1] for r in removed] == ["z", "y", "x"]


def test_same_set_gives_nothing() -> None:
    old = _set(("/a", {"price": "10.0", "title": "Flat  A"}), ("/b", {}))
    new = _set(("/b", {}), ("/a?utm_source=x", {"price": 10, "title": "Flat A"}))
    assert compare_entities(old, new) == ([], [], [])


def test_field_only_one_side_tracks_is_no_change() -> None:
    old = _set(("/a", {"price": "10"}))
    new = _set(("/a", {"price": "10", "rooms": "2"}))
    assert compare_entities(old, new) == ([], [], [])


def test_from_empty_and_to_empty() -> None:
    some = _set(("/a", {}), ("/b", {}))
    assert [a["key"] for a in compare_entities({}, some)[0]] == list(some)
    assert [r["key"] for r in compare_entities(some, {})[1]] == list(some)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=30),
                          st.text(max_size=20).map(lambda t: "http://" + t),
                          st.text(max_size=20).map(lambda t: "/" + t)), max_size=8))
def test_build_entities_never_raises_on_odd_keys(keys: list[str | None]) -> None:
    entities = build_entities([{"key": k, "fields": {"i": i}} for i, k in enumerate(keys)], base_url=BASE)
    assert 0 < len(entities) <= len(keys) or not keys
    first_of_each = [e.fields["i"] for e in entities.values()]
    assert first_of_each == sorted(first_of_each)


def test_a_change_of_case_in_an_entity_field_is_a_change() -> None:
    old = build_entities(raw(("/a", {"title": "Flat in PARIS"})), base_url=BASE)
    new = build_entities(raw(("/a", {"title": "Flat in Paris"})), base_url=BASE)
    added, removed, changed = compare_entities(old, new)
    assert not added and not removed
    assert [c["changes"] for c in changed] == [{"title": field("Flat in PARIS", "Flat in Paris")}]


def _observed_seconds(n: int) -> float:
    """Best of three: a page of *n* entities sharing one key, half of them repeats, digested and
    compared with the same page less one, as the entity comparison does it."""
    comparison = EntitiesComparison()
    items = [{"key": "/flat/1", "fields": {"title": f"Copy {i // 2}"}} for i in range(n)]
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        old = comparison.digest(Observation("k", BASE, entities=items[2:]))
        new = comparison.digest(Observation("k", BASE, entities=items))
        assert old is not None and new is not None
        difference = comparison.compare(old, new, CompareContext())
        best = min(best, time.process_time() - started)
    assert comparison.counters(new) == {"duplicates": n // 2}
    assert [a["fields"] for a in difference.members["added"]] == [{"title": "Copy 0"}]
    return best


def test_ten_thousand_duplicate_keys_on_a_page_take_near_linear_time() -> None:
    small, large = _observed_seconds(1_000), _observed_seconds(10_000)
    assert large <= 30 * small, (small, large)  # near-linear: ~10x; quadratic would be ~100x
