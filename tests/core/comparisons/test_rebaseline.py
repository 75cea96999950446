"""Editing a watch re-baselines what changed, silently: a field read another way starts afresh
while the others keep comparing; a text read another way (region, sort_lines, type, include,
ignore) and an entity set read another way start afresh; nothing is reported, not even an error."""

from __future__ import annotations

from typing import Any

import pytest

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.comparisons.content import text_spec
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.verdict import Verdict, observe
from tests.changes import field

COMPARISONS = load_comparisons()
CONTEXT = CompareContext(threshold=3)
SPECS = {"price": "css p.price::text", "stock": "css p.stock::text"}


def judge(obs: Observation, old: Snapshot | None) -> Verdict:
    return observe(obs, old, COMPARISONS, context=CONTEXT)


def stored(verdict: Verdict) -> Snapshot:
    """The snapshot a verdict keeps, as the store gives it back."""
    assert verdict.keep is not None, verdict
    return Snapshot.decode(verdict.keep.encode(COMPARISONS), COMPARISONS)


def fields_obs(price: str, stock: str | None, specs: dict[str, str] | None = SPECS) -> Observation:
    options: dict[str, Any] = {"field_specs": dict(specs)} if specs is not None else {}
    return Observation(key="k", url="https://shop.example/p/1", fields={"price": price, "stock": stock},
                       options=options)


# -- fields --------------------------------------------------------------------------------------

def test_an_edited_selector_restarts_that_field_while_a_price_change_is_still_reported() -> None:
    old = stored(judge(fields_obs("10.00", "In stock"), None))
    edited = {**SPECS, "stock": "css main p.availability::text"}
    verdict = judge(fields_obs("12.00", "Available now", edited), old)
    assert verdict.kind is Kind.FIELD
    assert verdict.changes == {"price": field("10.00", "12.00", "10", "12")}  # not the re-read stock
    assert verdict.counters["fields/rebaselined"] == 1
    kept = stored(verdict).part("fields")
    assert kept.raw["stock"] == "Available now" and kept.specs == edited
    # from then on the field compares as any other
    later = judge(fields_obs("12.00", "Sold out", edited), stored(verdict))
    assert later.changes == {"stock": field("Available now", "Sold out")}
    assert "fields/rebaselined" not in later.counters


def test_the_same_values_under_the_same_specs_report_the_field_change() -> None:
    """The control: without the edit, the same observation is a change of stock."""
    old = stored(judge(fields_obs("10.00", "In stock"), None))
    verdict = judge(fields_obs("12.00", "Available now"), old)
    assert set(verdict.changes) == {"price", "stock"}
    assert "fields/rebaselined" not in verdict.counters


def test_an_edited_field_that_reads_nothing_now_is_not_missing() -> None:
    old = stored(judge(fields_obs("10.00", "In stock"), None))
    assert judge(fields_obs("10.00", None), old).kind is Kind.ERROR  # the same spec: missing
    verdict = judge(fields_obs("10.00", None, {**SPECS, "stock": "css p.gone::text"}), old)
    assert verdict.kind is Kind.NONE and verdict.error is None and verdict.keep is not None


def test_a_kind_edit_is_a_respecified_field() -> None:
    old = stored(judge(fields_obs("10.00", "In stock"), None))
    verdict = judge(fields_obs("10.00", "3 in stock", {**SPECS, "stock": SPECS["stock"] + " number"}), old)
    assert verdict.kind is Kind.NONE and verdict.counters["fields/rebaselined"] == 1


def test_fields_without_specs_compare_as_before() -> None:
    """An item that does not say how it read its fields: every field keeps comparing."""
    old = stored(judge(fields_obs("10.00", "In stock", None), None))
    assert stored(judge(fields_obs("10.00", "In stock", None), None)).part("fields").specs is None
    verdict = judge(fields_obs("10.00", "Sold out", {"stock": "css x"}), old)
    assert verdict.changes == {"stock": field("In stock", "Sold out")}


# -- content -------------------------------------------------------------------------------------

FURNITURE = "".join(f"<li>Navigation link number {i} to a section of the site</li>" for i in range(60))


def page_html(article: str, clock: str = "10:32") -> bytes:
    return (f"<html><body><nav><ul>{FURNITURE}</ul></nav><p>Updated {clock}</p>"
            f"<main><h1>Terms</h1><p>{article}</p></main><footer>Footer of the site</footer></body></html>").encode()


def page_obs(body: bytes, region: str | None = None, **options: Any) -> Observation:
    return Observation(key="k", url="https://e.example/terms", html=body, encoding="utf-8", region=region,
                       options=options)


def test_a_region_added_to_a_text_watch_is_no_change_and_no_collapse() -> None:
    body = page_html("You may cancel at any time.")
    old = stored(judge(page_obs(body), None))
    verdict = judge(page_obs(body, "main"), old)
    assert verdict.kind is Kind.NONE and verdict.error is None and not verdict.members
    assert verdict.counters["content/rebaselined"] == 1
    kept = stored(verdict).part("content")
    assert kept.text == "Terms\nYou may cancel at any time." and kept.spec == text_spec(page_obs(body, "main"))
    # the control: the whole page's text said to be read as the region is, the region collapses
    as_region = old.part("content").with_spec(text_spec(page_obs(body, "main")), "html")
    assert judge(page_obs(body, "main"), Snapshot({"content": as_region})).error.startswith(  # type: ignore[union-attr]
        "collapsed:")
    # and a real change inside the region is then reported, the furniture gone from the diff
    changed = judge(page_obs(page_html("You may cancel within 14 days."), "main"), stored(verdict))
    assert changed.kind is Kind.CONTENT and changed.diff is not None
    assert "+ You may cancel within 14 days." in changed.diff and "Navigation" not in changed.diff


def test_a_region_removed_is_no_change() -> None:
    body = page_html("You may cancel at any time.")
    old = stored(judge(page_obs(body, "main"), None))
    verdict = judge(page_obs(body), old)
    assert verdict.kind is Kind.NONE and "Navigation link number 3" in stored(verdict).part("content").text


@pytest.mark.parametrize("before, after", [(False, True), (True, False)])
def test_sort_lines_toggled_is_no_change(before: bool, after: bool) -> None:
    body = page_html("Zebra.</p><p>Apple.")
    old = stored(judge(page_obs(body, sort_lines=before), None))
    verdict = judge(page_obs(body, sort_lines=after), old)
    assert verdict.kind is Kind.NONE and verdict.counters["content/rebaselined"] == 1
    assert judge(page_obs(body, sort_lines=after), stored(verdict)).keep is None  # settled


def test_an_option_edit_with_the_same_body_still_rereads_and_restores_the_text(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``type`` is not in the body hash (``include``/``ignore`` are, since they came): the same bytes
    read under another spec must be read again and stored as read now, not answered by the
    body-hash shortcut."""
    from changewatch.core.comparisons import content_part

    body = page_html("You may cancel at any time.")
    old = stored(judge(page_obs(body), None))
    assert judge(page_obs(body), old).keep is None  # the shortcut: nothing to rewrite
    reads: list[object] = []
    real = content_part.visible_text
    monkeypatch.setattr(content_part, "visible_text", lambda *a, **k: reads.append(a) or real(*a, **k))
    for options in ({"include": ["title", "links"]}, {"ignore": {"text": ["^Updated"]}}, {"type": "html"}):
        verdict = judge(page_obs(body, **options), old)
        assert verdict.kind is Kind.NONE and verdict.counters["content/rebaselined"] == 1
        kept = stored(verdict).part("content")
        assert kept.spec == text_spec(page_obs(body, **options)) != old.part("content").spec
        assert kept.body_hash is not None
        assert (kept.body_hash == old.part("content").body_hash) == ("type" in options)
    assert len(reads) == 3  # each read the page again


def test_default_option_values_are_no_edit() -> None:
    plain = page_obs(b"x")
    for options in ({"sort_lines": False}, {"include": []}, {"ignore": {"selectors": [], "text": None}},
                    {"type": None}, {"threshold": 9}):
        assert text_spec(page_obs(b"x", **options)) == text_spec(plain), options
    assert text_spec(page_obs(b"x", ignore={"text": ["a"]})) != text_spec(page_obs(b"x", ignore={"text": ["b"]}))


def test_a_block_page_is_still_an_error_across_an_edit() -> None:
    old = stored(judge(page_obs(page_html("You may cancel at any time.")), None))
    blocked = b"<html><body><main><h1>Access denied</h1><p>Sorry.</p></main></body></html>"
    verdict = judge(page_obs(blocked, "main"), old)
    assert verdict.kind is Kind.ERROR and verdict.error is not None and verdict.error.startswith("blocked:")


# -- entities ------------------------------------------------------------------------------------

def entities_obs(keys: list[str], spec: str | None, **fields: Any) -> Observation:
    options: dict[str, Any] = {"entities_spec": spec} if spec is not None else {}
    if fields:
        options["field_specs"] = {name: "css " + name for name in fields}
    return Observation(key="k", url="https://rentals.example/", options=options,
                       entities=[{"key": f"/flat/{k}", "fields": {"title": k}} for k in keys],
                       fields=fields or None)


def test_an_edited_entity_set_restarts_alone() -> None:
    old = stored(judge(entities_obs(["a", "b"], "sel-1", count="2"), None))
    verdict = judge(entities_obs(["a", "c", "d"], "sel-2", count="3"), old)
    assert verdict.kind is Kind.FIELD and verdict.changes == {"count": field("2", "3")}
    assert not verdict.added and not verdict.removed
    assert verdict.counters["entities/rebaselined"] == 1
    assert list(stored(verdict).part("entities").entities) == [f"https://rentals.example/flat/{k}" for k in "acd"]
    # the control: the same set under the same spec is a change
    assert judge(entities_obs(["a", "c", "d"], "sel-1"), old).kind is Kind.ENTITIES


def test_an_edited_entity_set_that_is_empty_now_is_not_all_missing() -> None:
    old = stored(judge(entities_obs(["a", "b"], "sel-1"), None))
    assert judge(entities_obs([], "sel-1"), old).kind is Kind.ERROR
    assert judge(entities_obs([], "sel-2"), old).kind is Kind.NONE


def test_other_url_parameters_are_another_entity_set() -> None:
    def obs(drop: list[str]) -> Observation:
        return Observation(key="k", url="https://r.example/", entities=[{"key": "/flat/a?ref=x", "fields": {}}],
                           options={"entities_spec": "s", "drop_params": drop})

    old = stored(judge(obs([]), None))
    verdict = judge(obs(["ref"]), old)
    assert verdict.kind is Kind.NONE and verdict.counters["entities/rebaselined"] == 1
