"""Bounded ``repr`` for error messages that quote user input."""

from __future__ import annotations

import reprlib
from typing import Any

__all__ = ["short_repr"]

_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxstring = 80
_REPR.maxother = 80
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = _REPR.maxfrozenset = 6


def short_repr(value: Any) -> str:
    """``repr(value)``, cut short: a YAML document of nested aliases ("billion laughs") is tiny
    on disk but its full repr would never finish.

    >>> short_repr(list(range(100))), short_repr([[[[1]]]])
    ('[0, 1, 2, 3, 4, 5, ...]', '[[[[...]]]]')
    """
    return _REPR.repr(value)
