"""Durations as people write them in settings and watchlists: a number of seconds (``90``,
``"90"``, ``2.5``) or numbers with units, largest first (``"90s"``, ``"10m"``, ``"6h"``, ``"7d"``,
``"1h30m"``). Pure functions: no Scrapy, no I/O.

Units are lower case only: ``10M`` would read as months to some people and minutes to others.
"""

from __future__ import annotations

import math
import re

__all__ = ["DURATION_UNITS", "format_duration", "parse_duration"]

#: seconds per unit, largest first (the order a duration's parts must come in)
DURATION_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}

_NUMBER = r"(?:\d+(?:\.\d+)?|\.\d+)"
_SECONDS = re.compile(_NUMBER)
_PART = re.compile(rf"({_NUMBER})([dhms])")
_WITH_UNITS = re.compile(rf"(?:{_NUMBER}[dhms])+")


def _number_seconds(value: int | float) -> float:
    try:
        return float(value)
    except OverflowError:  # an int too large for a float
        raise ValueError(f"{value!r} is too large") from None


def _text_seconds(text: str) -> float:
    if text.startswith("-") and (_SECONDS.fullmatch(text[1:]) or _WITH_UNITS.fullmatch(text[1:])):
        raise ValueError("a duration cannot be negative")
    if _SECONDS.fullmatch(text):
        return float(text)
    if not _WITH_UNITS.fullmatch(text):
        raise ValueError(f"{text!r} is not a number of seconds nor numbers with units d, h, m, s")
    seconds = 0.0
    last = math.inf
    for number, unit in _PART.findall(text):
        size = DURATION_UNITS[unit]
        if size >= last:  # "30m1h", "1m1m": most likely a typo, never a duration someone meant
            raise ValueError(f"{text!r}: units must come largest first, each once (like 1h30m)")
        last = size
        seconds += float(number) * size
    return seconds


def parse_duration(value: object, *, allow_zero: bool = False) -> float:
    """The seconds *value* stands for. Raises ValueError for anything else: negative, zero
    (unless *allow_zero*), NaN, infinite, a bool, text that is not a duration.

    >>> parse_duration(90), parse_duration("90"), parse_duration("90s"), parse_duration("1.5m")
    (90.0, 90.0, 90.0, 90.0)
    >>> parse_duration("10m"), parse_duration("6h"), parse_duration("7d"), parse_duration(" 1h30m ")
    (600.0, 21600.0, 604800.0, 5400.0)
    >>> parse_duration("0s", allow_zero=True)
    0.0
    >>> parse_duration("-5m")
    Traceback (most recent call last):
    ...
    ValueError: a duration cannot be negative
    >>> parse_duration("0")
    Traceback (most recent call last):
    ...
    ValueError: a duration must be more than 0 seconds
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration")
    if isinstance(value, int | float):
        seconds = _number_seconds(value)
    elif isinstance(value, str):
        seconds = _text_seconds(value.strip())
    else:
        raise ValueError(f"{value!r} is not a duration")
    if not math.isfinite(seconds):
        raise ValueError(f"{value!r} is not a finite duration")
    if seconds < 0:
        raise ValueError("a duration cannot be negative")
    if seconds == 0 and not allow_zero:
        raise ValueError("a duration must be more than 0 seconds")
    return seconds


def format_duration(seconds: float) -> str:
    """*seconds* written as :func:`parse_duration` reads it, in the largest units that fit
    (fractions of a second to the microsecond).

    >>> format_duration(5400), format_duration(600), format_duration(90.5), format_duration(0)
    ('1h30m', '10m', '1m30.5s', '0s')
    >>> parse_duration(format_duration(694861.25)) == 694861.25
    True
    """
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"{seconds!r} is not a duration")
    parts = []
    whole, fraction = divmod(seconds, 1)
    rest = int(whole)
    for unit, size in DURATION_UNITS.items():
        count, rest = divmod(rest, size)
        if unit == "s" and (count or fraction):
            # to the microsecond, in positional notation (``1e-07s`` would not parse)
            parts.append(f"{count + fraction:.6f}".rstrip("0").rstrip(".") + "s")
        elif count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"
