"""Durations: every way of writing one that is accepted, every way that is not, and round trips."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from changewatch.core.durations import DURATION_UNITS, format_duration, parse_duration


@pytest.mark.parametrize(("text", "seconds"), [
    (90, 90.0), (2.5, 2.5), ("90", 90.0), ("0.5", 0.5), (".5", 0.5), ("90s", 90.0), ("10m", 600.0),
    ("6h", 21600.0), ("7d", 604800.0), ("1h30m", 5400.0), ("1d12h", 129600.0), ("1.5h", 5400.0),
    ("  15m\n", 900.0), ("2d3h4m5s", 183845.0),
])
def test_accepted(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("value", [
    "soon", "", " ", "-5m", "-5", -1, "0", 0, 0.0, "0s", "0m0s", "5x", "10M", "1H", "m", "1.m", "1e3", "1_000",
    "30m1h", "1m1m", "1h 30m", "+5m", "nan", "inf", math.nan, math.inf, -math.inf, True, False, None, [60],
    {"m": 1}, 10 ** 400, "9" * 400 + "d",
])
def test_refused(value: object) -> None:
    with pytest.raises(ValueError):
        parse_duration(value)


def test_zero_only_where_allowed() -> None:
    assert parse_duration("0s", allow_zero=True) == parse_duration(0, allow_zero=True) == 0.0
    with pytest.raises(ValueError, match="negative"):
        parse_duration("-1s", allow_zero=True)


@given(st.integers(min_value=1, max_value=10 ** 9))
def test_whole_seconds_round_trip(seconds: int) -> None:
    text = format_duration(seconds)
    assert parse_duration(text) == seconds
    assert text[-1] in DURATION_UNITS


@given(st.floats(min_value=1e-6, max_value=1e9, allow_nan=False))
def test_fractions_round_trip_to_the_microsecond(seconds: float) -> None:
    assert parse_duration(format_duration(seconds)) == pytest.approx(seconds, abs=1e-6, rel=1e-12)


@given(st.text(max_size=20))
def test_any_text_is_a_positive_finite_duration_or_a_value_error(text: str) -> None:
    try:
        seconds = parse_duration(text)
    except ValueError:
        return
    assert math.isfinite(seconds) and seconds > 0


@given(st.lists(st.sampled_from(list(DURATION_UNITS)), min_size=1, max_size=4, unique=True),
       st.lists(st.integers(min_value=0, max_value=1000), min_size=4, max_size=4))
def test_parts_largest_first_add_up(units: list[str], counts: list[int]) -> None:
    units = sorted(units, key=DURATION_UNITS.__getitem__, reverse=True)
    text = "".join(f"{n}{u}" for n, u in zip(counts, units, strict=False))
    total = sum(n * DURATION_UNITS[u] for n, u in zip(counts, units, strict=False))
    if total == 0:
        with pytest.raises(ValueError):
            parse_duration(text)
    else:
        assert parse_duration(text) == total
