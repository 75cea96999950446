"""``when:`` conditions: the grammar, numbers compared as numbers, and every way one can be wrong."""

from __future__ import annotations

from typing import Any

import pytest

from changewatch.core.conditions import ConditionError, parse_condition
from changewatch.core.values import normalise_field

KINDS = {"offers.price": "price", "availability": "availability", "stock": "auto"}


def normalise(field: str, value: Any) -> Any:
    return normalise_field(value, KINDS.get(field, "auto"))


@pytest.mark.parametrize(("condition", "values", "expected"), [
    ("offers.price < 80", {"offers.price": "79 EUR"}, True),
    ("offers.price < 80", {"offers.price": "80 EUR"}, False),
    ("offers.price <= 80", {"offers.price": "80"}, True),
    ("offers.price < 80", {"offers.price": "1234.56 EUR"}, False),  # numerically, not as text ("1234" < "80")
    ("offers.price > 9.5", {"offers.price": "10"}, True),
    ("offers.price >= 100", {"offers.price": "99.99"}, False),
    ("offers.price < 80", {"offers.price": "Call us"}, False),  # not a number: false, never an error
    ("offers.price < 80", {}, False),  # a field the change does not carry
    ("offers.price < 80", {"offers.price": None}, False),
    ("availability == InStock", {"availability": "InStock"}, True),
    ("availability == 'in stock'", {"availability": "InStock"}, True),  # the value is normalised as the field is
    ("availability == http://schema.org/InStock", {"availability": "InStock"}, True),
    ("availability != InStock", {"availability": "OutOfStock"}, True),
    ("stock == 5", {"stock": "5.0"}, True),  # numbers compare as numbers
    ('stock == "5 left"', {"stock": "5 left"}, True),
    ("offers.price < 80 and availability == InStock", {"offers.price": "79", "availability": "OutOfStock"}, False),
    ("offers.price < 80 or availability == InStock", {"offers.price": "99", "availability": "InStock"}, True),
    # "and" binds tighter than "or"
    ("stock == 1 or offers.price < 80 and availability == InStock", {"stock": "1", "offers.price": "99"}, True),
    ("stock == 1 or offers.price < 80 AND availability == InStock", {"stock": "2", "offers.price": "79",
                                                                     "availability": "InStock"}, True),
    ("offers.price < -1", {"offers.price": "-2"}, True),
])
def test_conditions_hold_as_written(condition: str, values: dict[str, Any], expected: bool) -> None:
    assert parse_condition(condition).holds(values, normalise) is expected


@pytest.mark.parametrize(("condition", "says"), [
    ("", "a condition such as"),
    ("   ", "a condition such as"),
    ("offers.price", "expected a comparison"),
    ("offers.price <", "expected a comparison"),
    ("offers.price = 80", "use =="),
    ("offers.price < 80 &&  stock == 1", "use and"),
    ("(offers.price < 80)", "no parentheses"),
    ("offers.price < 80 stock == 1", "expected 'and' or 'or'"),
    ("offers.price < 80 and", "expected a comparison"),
    ("< 80", "expected a field name"),
    ("offers.price 80 <", "expected one of"),
    ("availability == in stock", "quote a value with spaces"),
    ("offers.price < and", "expected a value"),
    ("offers.price == 'unterminated", "unexpected"),
    ("x == 1 and " * 200, "longer than"),
])
def test_a_bad_condition_says_what_is_wrong(condition: str, says: str) -> None:
    with pytest.raises(ConditionError, match=None) as caught:
        parse_condition(condition)
    assert says in str(caught.value)


def test_the_fields_it_names_and_its_text() -> None:
    condition = parse_condition("  offers.price <  80 or offers.price > 200 and stock == 'a b' ")
    assert condition.fields == ("offers.price", "stock")
    assert str(condition) == "offers.price < 80 or offers.price > 200 and stock == 'a b'"
    assert str(condition.alternatives[1][1]) == 'stock == "a b"'


@pytest.mark.parametrize(("old", "new", "state", "crossing"), [
    ({"offers.price": "89 EUR"}, {"offers.price": "62 EUR"}, True, True),  # crossed
    ({"offers.price": "62 EUR"}, {"offers.price": "62 EUR"}, True, False),  # held already (a name change)
    ({"offers.price": "65 EUR"}, {"offers.price": "59 EUR"}, True, False),  # still below
    ({"offers.price": "62 EUR"}, {"offers.price": "89 EUR"}, False, False),  # crossed back: false now
    ({}, {"offers.price": "62 EUR"}, True, True),  # no value before: it did not hold
    ({"offers.price": "62 EUR"}, {}, False, False),
])
def test_a_crossing_fires_only_when_false_before_and_true_now(old: dict[str, Any], new: dict[str, Any],
                                                               state: bool, crossing: bool) -> None:
    assert parse_condition("offers.price < 80").fires(old, new, normalise) is state
    assert parse_condition("offers.price < 80", crossing=True).fires(old, new, normalise) is crossing


def test_a_crossing_of_a_compound_condition_is_of_the_whole() -> None:
    c = parse_condition("offers.price < 80 and availability == InStock", crossing=True)
    # the price fell below 80 while out of stock: not yet; back in stock: now
    assert not c.fires({"offers.price": "89", "availability": "OutOfStock"},
                       {"offers.price": "62", "availability": "OutOfStock"}, normalise)
    assert c.fires({"offers.price": "62", "availability": "OutOfStock"},
                   {"offers.price": "62", "availability": "InStock"}, normalise)
    assert c.as_written == {"crossing": "offers.price < 80 and availability == InStock"}
    assert parse_condition("stock == 1").as_written == "stock == 1"
