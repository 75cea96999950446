"""``when:`` conditions of a watch's notifications: comparisons of field values, parsed by a small
grammar of their own (never ``eval``), checked when the watchlist is validated.

    condition  := comparison (("and" | "or") comparison)*      "and" binds tighter than "or"
    comparison := FIELD OP VALUE                               OP: < <= > >= == !=
    FIELD      := a field name as the watch names it (offers.price, stock)
    VALUE      := a number, a word (InStock) or a quoted text ("in stock", 'Out of stock')

A condition is written in one of two forms, both tested when a change is committed:

- ``when: "offers.price < 80"`` (its **state**): it fires for every change whose values hold it
  now, whatever they were before (a change of the name while the price is 62 fires it);
- ``when: {crossing: "offers.price < 80"}`` (a **crossing**): it fires only for a change whose
  values hold it now and did not on the previous observation (the last good one, the change's
  ``old`` side): 89 → 62 fires it, 62 → 59 or a change of the name at 62 does not.

Values are compared as the comparison normalised them (``offers.price`` ``€ 79,00`` is ``79 EUR``;
``http://schema.org/InStock`` is ``InStock``), and the value written in the condition is normalised
the same way (as the field's kind says). ``<``, ``<=``, ``>``, ``>=`` compare numbers (the amount of a
price); a value that is not a number makes them false. ``==`` and ``!=`` compare numbers as numbers
and anything else as text. A field the change does not carry makes its comparison false.

>>> c = parse_condition("offers.price < 80 and availability == InStock")
>>> c.fields
('offers.price', 'availability')
>>> c.holds({"offers.price": "79 EUR", "availability": "InStock"})
True
>>> c.holds({"offers.price": "89 EUR", "availability": "InStock"})
False
>>> x = parse_condition("offers.price < 80", crossing=True)
>>> x.fires({"offers.price": "89"}, {"offers.price": "62"}), x.fires({"offers.price": "62"}, {"offers.price": "62"})
(True, False)
>>> x.as_written
{'crossing': 'offers.price < 80'}
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["Comparison", "Condition", "ConditionError", "parse_condition"]

OPERATORS = ("<=", ">=", "==", "!=", "<", ">")
_TOKEN = re.compile(r"""\s*(?:(?P<op><=|>=|==|!=|<|>)|(?P<bad>=|!|&&|\|\||[()])|"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'"""
                    r"""|(?P<word>[^\s<>=!"'()]+))""")
_NUMBER = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_MAX_LENGTH = 1000

#: (field, raw value) → the value as the field's comparison normalises it
Normaliser = Callable[[str, Any], Any]


class ConditionError(ValueError):
    """A ``when:`` condition that cannot be parsed; the message says where and what is expected."""


@dataclass(frozen=True, slots=True)
class Comparison:
    field: str
    op: str
    value: str

    def holds(self, values: Mapping[str, Any], normalise: Normaliser | None = None) -> bool:
        if self.field not in values or values[self.field] is None:
            return False
        actual = values[self.field]
        wanted: Any = normalise(self.field, self.value) if normalise is not None else self.value
        a, b = _number(actual), _number(wanted)
        if self.op in ("==", "!="):
            equal = a == b if a is not None and b is not None else _text(actual) == _text(wanted)
            return equal if self.op == "==" else not equal
        if a is None or b is None:
            return False
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[self.op]

    def __str__(self) -> str:
        value = self.value if re.fullmatch(r"[^\s<>=!\"'()]+", self.value) else f'"{self.value}"'
        return f"{self.field} {self.op} {value}"


@dataclass(frozen=True, slots=True)
class Condition:
    """Comparisons in disjunctive form: the condition holds when every comparison of one of
    :attr:`alternatives` holds."""

    alternatives: tuple[tuple[Comparison, ...], ...]
    text: str
    #: fires only when it did not hold before (``when: {crossing: …}``), else whenever it holds
    crossing: bool = False

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields the condition names, in the order it names them (each once)."""
        return tuple(dict.fromkeys(c.field for group in self.alternatives for c in group))

    def holds(self, values: Mapping[str, Any], normalise: Normaliser | None = None) -> bool:
        return any(all(c.holds(values, normalise) for c in group) for group in self.alternatives)

    def fires(self, old: Mapping[str, Any], new: Mapping[str, Any], normalise: Normaliser | None = None) -> bool:
        """Whether a change from values *old* to *new* fires it: it holds for *new* and, for a
        crossing, did not for *old*."""
        if not self.holds(new, normalise):
            return False
        return not self.crossing or not self.holds(old, normalise)

    @property
    def as_written(self) -> str | dict[str, str]:
        """The condition in the watchlist's form: its text, or ``{"crossing": text}``."""
        return {"crossing": self.text} if self.crossing else self.text

    def __str__(self) -> str:
        return self.text


def _number(value: Any) -> Decimal | None:
    """The number a normalised value is or starts with (a price's amount: ``79 EUR``)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float | Decimal):
        text = str(value)
    elif isinstance(value, str):
        text = value.strip()
        match = _NUMBER.match(text)
        if match is None or (len(match[0]) < len(text) and not text[len(match[0])].isspace()):
            return None  # "12abc" is not a number; "79 EUR" is 79
        text = match[0]
    else:
        return None
    try:
        number = Decimal(text)
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """(kind, value, position) of each token: ``op``, ``value`` (quoted), ``word``."""
    tokens, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            if text[pos:].strip():
                raise ConditionError(f"unexpected {text[pos:].strip()[:20]!r} at character {pos + 1}")
            break
        start = match.start(match.lastgroup or 0)
        if match["bad"] is not None:
            hint = {"=": " (use ==)", "&&": " (use and)", "||": " (use or)", "!": " (use !=)"}.get(match["bad"],
                                                                                           " (no parentheses)")
            raise ConditionError(f"unexpected {match['bad']!r} at character {start + 1}{hint}")
        if match["op"] is not None:
            tokens.append(("op", match["op"], start))
        elif match["dq"] is not None or match["sq"] is not None:
            tokens.append(("value", match["dq"] if match["dq"] is not None else match["sq"], start))
        elif match["word"] is not None:
            tokens.append(("word", match["word"], start))
        pos = match.end()
    return tokens


def parse_condition(text: str, *, crossing: bool = False) -> Condition:
    """Parse a ``when:`` condition (*crossing*: the text of a ``{crossing: …}``);
    :class:`ConditionError` says what is wrong and where."""
    if not isinstance(text, str) or not text.strip():
        raise ConditionError("a condition such as 'offers.price < 80' is needed")
    if len(text) > _MAX_LENGTH:
        raise ConditionError(f"longer than {_MAX_LENGTH} characters")
    tokens = _tokens(text)
    groups: list[list[Comparison]] = [[]]
    i = 0
    while True:
        if i < len(tokens) and (tokens[i][0] != "word" or tokens[i][1].lower() in ("and", "or")):
            raise ConditionError(f"expected a field name at character {tokens[i][2] + 1}, found {tokens[i][1]!r}")
        if i + 3 > len(tokens):
            what = " ".join(t[1] for t in tokens[i:]) or "nothing"
            raise ConditionError(f"expected a comparison such as 'offers.price < 80' at the end, found {what!r}")
        (_, field, _), (ko, op, opos), (kv, value, _) = tokens[i:i + 3]
        if ko != "op":
            raise ConditionError(f"expected one of {' '.join(OPERATORS)} after {field!r} at character {opos + 1}, "
                                 f"found {op!r}")
        if kv == "op" or (kv == "word" and value.lower() in ("and", "or")):
            raise ConditionError(f"expected a value after {field} {op}")
        groups[-1].append(Comparison(field, op, value))
        i += 3
        if i == len(tokens):
            break
        kind, joiner, jpos = tokens[i]
        if kind != "word" or joiner.lower() not in ("and", "or"):
            raise ConditionError(f"expected 'and' or 'or' at character {jpos + 1}, found {joiner!r} "
                                 "(quote a value with spaces: \"in stock\")")
        if joiner.lower() == "or":
            groups.append([])
        i += 1
    return Condition(tuple(tuple(g) for g in groups), " ".join(text.split()), crossing)
