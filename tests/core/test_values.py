"""Typed normalisation: one meaning, one normalised value; the raw value stays for display."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changewatch.core.values import FIELD_KINDS, infer_kind, normalise_field, normalise_fields


@pytest.mark.parametrize(("a", "b"), [
    ("€ 1.234,56", "1.234,56 €"), ("€ 1.234,56", "EUR 1.234,56"), ("1,234.56 USD", "USD 1,234.56"),
    ("£1,150 pcm", "£ 1 150 pcm"), ("ab 9,99 €", "9,99 €"), ("89.00", 89), ("89", Decimal("89.000")),
    ("1234.560", "1234.56"), ("Free", "0"), ("  Call for price ", "Call for price"),
])
def test_equal_prices(a: object, b: object) -> None:
    assert normalise_field(a, "price") == normalise_field(b, "price")


@pytest.mark.parametrize(("a", "b"), [("€ 129,00", "€ 119,00"), ("€ 9,99", "$ 9,99"), ("9.99", "9.90"),
                                      ("1.234", "1,234.5"), ("Free", "€ 1")])
def test_different_prices(a: object, b: object) -> None:
    assert normalise_field(a, "price") != normalise_field(b, "price")


@pytest.mark.parametrize("empty", ["", "   ", None])
def test_an_empty_price_is_missing(empty: object) -> None:
    assert normalise_field(empty, "price") is None


@pytest.mark.parametrize("value", ["InStock", "http://schema.org/InStock", "https://schema.org/InStock/", "in stock",
                                   "IN_STOCK", "In-Stock", "available", "schema:InStock"])
def test_availability_spellings(value: str) -> None:
    assert normalise_field(value, "availability") == "InStock"


def test_availability_keeps_what_it_does_not_know() -> None:
    assert normalise_field("Ships in 3 weeks", "availability") == "Ships in 3 weeks"
    assert normalise_field("Sold out!", "availability") == "SoldOut"


@pytest.mark.parametrize(("a", "b"), [
    ("2015-10-31T19:30:00-0400", "2015-10-31T23:30:00Z"), ("2015-10-31T19:30:00-04:00", "2015-10-31T23:30:00+00:00"),
    ("2020-09-28", "28 Sep 2020"), ("2020-09-28", "September 28, 2020"), ("2020-09-28", "28.09.2020"),
    ("Sat, 31 Oct 2015 23:30:00 GMT", "2015-10-31T23:30:00Z"),
])
def test_equal_dates(a: str, b: str) -> None:
    assert normalise_field(a, "date") == normalise_field(b, "date")


def test_dates_that_differ_and_text() -> None:
    assert normalise_field("2020-12-31T23:59:00", "date") != normalise_field("2020-12-31T23:58:00", "date")
    assert normalise_field("to be announced", "date") == "to be announced"


def test_durations() -> None:
    assert normalise_field("PT80M", "duration") == normalise_field("P0DT1H20M0S", "duration") == "4800s"
    assert normalise_field("P0DT1H10M0S", "duration") != normalise_field("PT80M", "duration")
    assert normalise_field("about an hour", "duration") == "about an hour"
    assert normalise_field("PT", "duration") == "PT"


def test_numbers_and_text() -> None:
    assert normalise_field("4,6", "number") == normalise_field("4.60", "number") == "4.6"
    assert normalise_field("1 234", "number") == "1234"
    assert normalise_field(" 007 ", "text") == "007"  # not the number 7
    assert normalise_field("007", "auto") == "7"


def test_lists_are_normalised_element_by_element() -> None:
    assert normalise_field(["€ 1,00", "2 EUR"], "price") == ["1 EUR", "2 EUR"]


def test_unknown_kind_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown field kind 'money'"):
        normalise_field("1", "money")


def test_fields_by_kind_and_inferred_kinds() -> None:
    fields = {"price": "€ 1.234,56", "name": " Lamp ", "when": "2020-09-28"}
    assert normalise_fields(fields, {"price": "price", "when": "date"}) == {
        "price": "1234.56 EUR", "name": "Lamp", "when": "2020-09-28"}
    assert infer_kind("offers.lowPrice") == "price" and infer_kind("offers.price|offers.lowPrice") == "price"
    assert infer_kind("startDate") == "date" and infer_kind("totalTime") == "duration"
    assert infer_kind("sku") == "auto"


@settings(max_examples=200, deadline=None)
@given(kind=st.sampled_from(sorted(FIELD_KINDS)),
       value=st.one_of(st.none(), st.text(), st.integers(), st.floats(allow_nan=False), st.booleans()))
def test_never_raises_and_is_stable(kind: str, value: object) -> None:
    once = normalise_field(value, kind)
    assert normalise_field(value, kind) == once  # deterministic
