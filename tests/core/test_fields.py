"""normalise_value and compare_fields: equal meanings compare equal, raw values are reported."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changewatch.core import compare_fields, normalise_value

FAST = settings(max_examples=100, deadline=None)


@pytest.mark.parametrize("value", ["89.00", "89.0", "89", 89, 89.0, Decimal("89"), Decimal("89.000"), " 89 ",
                                   "+89", "8.9e1", "8.9E+1", b"89.00"])
def test_equal_numbers_normalise_equal(value: object) -> None:
    assert normalise_value(value) == normalise_value("89") == "89"


@pytest.mark.parametrize("value", ["100", 100, 100.0, Decimal("1E+2"), "1E+2", "1e2", "100.00", Decimal("100.0")])
def test_hundred_is_written_in_plain_digits(value: object) -> None:
    assert normalise_value(value) == "100"


@pytest.mark.parametrize(("a", "b"), [("89.00", "79.00"), ("89", "89.01"), ("0.1", "0.01"), ("100", "10"),
                                      ("-5", "5"), (1, 2), ("1000", "1e4")])
def test_different_numbers_stay_different(a: object, b: object) -> None:
    assert normalise_value(a) != normalise_value(b)


@pytest.mark.parametrize("zero", ["0", "0.00", "-0", "-0.0", 0, 0.0, -0.0, Decimal("-0"), "+0"])
def test_every_zero_is_zero(zero: object) -> None:
    assert normalise_value(zero) == "0"


def test_long_numbers_are_not_rounded() -> None:
    # Decimal's default context keeps 28 digits: long ids and big amounts must not collapse.
    a, b = "1234567890123456789012345678901", "1234567890123456789012345678902"
    assert normalise_value(a) == a
    assert normalise_value(a) != normalise_value(b)
    assert normalise_value("0." + "1" * 40) != normalise_value("0." + "1" * 39 + "2")


@pytest.mark.parametrize("huge", ["1e999999999", "-1E+999999999", "1e-999999999", "9e99999999999999999999",
                                  Decimal("1e999999999"), "1e400", 1e308])
def test_huge_exponents_do_not_raise_or_explode(huge: object) -> None:
    result = normalise_value(huge)
    assert isinstance(result, str)
    assert len(result) <= 400
    assert normalise_value(huge) == result


def test_huge_exponents_stay_distinct() -> None:
    assert normalise_value("1e999999999") != normalise_value("1e999999998")
    assert normalise_value("1e999999999") != normalise_value("-1e999999999")


@pytest.mark.parametrize(("value", "expected"), [(float("nan"), "NaN"), (float("inf"), "Infinity"),
                                                 (Decimal("NaN"), "NaN"), (float("-inf"), "-Infinity")])
def test_non_finite_numbers(value: object, expected: str) -> None:
    assert normalise_value(value) == expected


def test_numbers_in_text_are_left_as_text() -> None:
    assert normalise_value("89.00 EUR") == "89.00 EUR"
    assert normalise_value("1,000") == "1,000"
    assert normalise_value("v1.2.3") == "v1.2.3"


@pytest.mark.parametrize("value", ["http://schema.org/InStock", "https://schema.org/InStock",
                                   "http://www.schema.org/InStock", "https://www.schema.org/InStock",
                                   "https://schema.org/InStock/", "  https://schema.org/InStock ", "InStock"])
def test_schema_org_enums_equal_bare_names(value: str) -> None:
    assert normalise_value(value) == "InStock"


def test_schema_org_enums_stay_distinct_and_other_urls_untouched() -> None:
    assert normalise_value("https://schema.org/OutOfStock") == "OutOfStock"
    assert normalise_value("https://schema.org/InStock") != normalise_value("https://schema.org/OutOfStock")
    assert normalise_value("https://example.org/InStock") == "https://example.org/InStock"
    assert normalise_value("https://schema.org/Thing/InStock") == "https://schema.org/Thing/InStock"


def test_whitespace_collapsed_but_case_kept() -> None:
    assert normalise_value("  Hello \n\t  World  ") == "Hello World"
    assert normalise_value("Hello World") != normalise_value("hello world")


def test_none_and_bool() -> None:
    assert normalise_value(None) is None
    assert normalise_value(True) is True
    assert normalise_value(False) is False
    assert normalise_value(True) != normalise_value(1)


def test_containers_normalised_recursively() -> None:
    a = {"price": "89.00", "availability": "http://schema.org/InStock", "tags": [" new ", 1.0],
         "seller": {"name": "  Shop   Ltd ", "rating": Decimal("4.50")}}
    b = {"seller": {"rating": "4.5", "name": "Shop Ltd"}, "tags": ["new", "1"], "price": 89,
         "availability": "InStock"}
    assert normalise_value(a) == normalise_value(b)
    assert normalise_value(a) == {"availability": "InStock", "price": "89", "seller": {"name": "Shop Ltd",
                                  "rating": "4.5"}, "tags": ["new", "1"]}
    assert normalise_value(("1.0", "2")) == ["1", "2"]
    assert normalise_value({1: "x"}) == {"1": "x"}


def test_list_order_matters() -> None:
    assert normalise_value(["a", "b"]) != normalise_value(["b", "a"])


def test_other_objects_go_through_str() -> None:
    class Price:
        def __str__(self) -> str:
            return " 89.00 "

    assert normalise_value(Price()) == "89"


finite_decimals = st.decimals(allow_nan=False, allow_infinity=False, min_value=-(10**30), max_value=10**30,
                              places=None)


@FAST
@given(finite_decimals, finite_decimals)
def test_equal_iff_numerically_equal(a: Decimal, b: Decimal) -> None:
    assert (normalise_value(a) == normalise_value(b)) == (a == b)
    assert normalise_value(str(a)) == normalise_value(a)


@FAST
@given(st.integers(min_value=-(10**40), max_value=10**40), st.integers(0, 6))
def test_integers_equal_their_decimal_spellings(n: int, zeros: int) -> None:
    spelled = f"{n}." + "0" * zeros if zeros else str(n)
    assert normalise_value(n) == normalise_value(spelled) == normalise_value(Decimal(n)) == str(n)


@FAST
@given(st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text() | st.binary(),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                                 max_size=4),
                    max_leaves=20))
def test_never_raises_and_is_idempotent(value: object) -> None:
    once = normalise_value(value)
    assert normalise_value(once) == once


# --- compare_fields ----------------------------------------------------------------------------------

def _compare(old_raw: Mapping[str, Any], new_raw: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return compare_fields({k: normalise_value(v) for k, v in old_raw.items()},
                          {k: normalise_value(v) for k, v in new_raw.items()}, old_raw, new_raw)


def test_compare_fields_reports_raw_values_beside_the_normalised_ones_compared() -> None:
    old = {"price": "89.00", "name": "Tea set", "availability": "https://schema.org/InStock"}
    new = {"price": "79.00", "name": "Tea  set", "availability": "http://schema.org/OutOfStock"}
    assert _compare(old, new) == {
        "price": {"old": "89.00", "new": "79.00", "old_normalised": "89", "new_normalised": "79"},
        "availability": {"old": "https://schema.org/InStock", "new": "http://schema.org/OutOfStock",
                         "old_normalised": "InStock", "new_normalised": "OutOfStock"},
    }


def test_compare_fields_equal_meanings_are_no_change() -> None:
    old = {"price": "89.00", "stock": "http://schema.org/InStock", "title": " Tea set "}
    new = {"price": 89, "stock": "InStock", "title": "Tea set"}
    assert _compare(old, new) == {}


def test_compare_fields_ignores_fields_only_one_side_tracks() -> None:
    assert _compare({"price": "1", "gone": "x"}, {"price": "1", "added": "y"}) == {}
    assert _compare({"price": "1", "gone": "x"}, {"price": "2", "added": "y"}) == {"price": {
        "old": "1", "new": "2", "old_normalised": "1", "new_normalised": "2"}}


def test_compare_fields_value_to_none_is_a_change() -> None:
    assert _compare({"price": "89"}, {"price": None}) == {
        "price": {"old": "89", "new": None, "old_normalised": "89", "new_normalised": None}}
    assert _compare({"price": None}, {"price": "89"}) == {
        "price": {"old": None, "new": "89", "old_normalised": None, "new_normalised": "89"}}


def test_compare_fields_nested_values() -> None:
    old = {"offers": {"price": "10.0", "currency": "EUR"}}
    new = {"offers": {"currency": "EUR", "price": "10"}}
    assert _compare(old, new) == {}
    changed = {"offers": {"currency": "USD", "price": "10"}}
    assert _compare(old, changed) == {"offers": {
        "old": old["offers"], "new": changed["offers"],
        "old_normalised": {"currency": "EUR", "price": "10"}, "new_normalised": {"currency": "USD", "price": "10"}}}


def test_compare_fields_in_new_observation_order() -> None:
    old = {"a": "1", "b": "1", "c": "1"}
    new = {"c": "2", "a": "2", "b": "2"}
    assert list(_compare(old, new)) == ["c", "a", "b"]


def test_a_change_of_case_in_a_text_field_is_a_change() -> None:
    # Field and entity values were never case folded: what holds for the page text holds here.
    old, new = {"name": "KETTLE 2000"}, {"name": "Kettle 2000"}
    old_norm = {k: normalise_value(v) for k, v in old.items()}
    new_norm = {k: normalise_value(v) for k, v in new.items()}
    assert compare_fields(old_norm, new_norm, old, new) == {"name": {
        "old": "KETTLE 2000", "new": "Kettle 2000", "old_normalised": "KETTLE 2000", "new_normalised": "Kettle 2000"}}


def test_an_undecodable_byte_is_shown_readable_at_any_depth_raw_and_normalised() -> None:
    # A byte that did not decode is carried as U+10DC80..; a record shows it as \x80, inside a
    # nested value (JSON-LD offers) as well as at the top.
    old = {"offers": {"price": "5 \U0010dc80", "currency": "EUR"}}
    new = {"offers": {"price": "6 \U0010dc80", "currency": "EUR"}}
    change = _compare(old, new)["offers"]
    assert change["old"] == {"price": "5 \\x80", "currency": "EUR"}
    assert change["new_normalised"] == {"currency": "EUR", "price": "6 \\x80"}
