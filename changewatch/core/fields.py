"""Field values: normalisation for comparison, and value-by-value comparison."""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal
from typing import Any

from .text.charset import readable

__all__ = ["FieldChange", "compare_fields", "normalise_value", "normalised_text"]

# {"old": raw, "new": raw, "old_normalised": …, "new_normalised": …}: the page's own words for
# the reader, and beside them what was compared (why "89.00" and "89" are one price).
FieldChange = dict[str, Any]

_WS = re.compile(r"\s+")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_SCHEMA_ENUM = re.compile(r"^https?://(?:www\.)?schema\.org/([A-Za-z][\w]*)/?$")
_PLAIN_EXPONENT = 100


def _number(value: Decimal) -> str:
    if not value.is_finite():
        return str(value)
    if value.is_zero():
        return "0"  # not "-0"
    # The default context would round to 28 digits and overflow past 1E+999999: normalise
    # with the number's own precision and the widest exponent range instead.
    exact = Context(prec=len(value.as_tuple().digits), Emax=MAX_EMAX, Emin=MIN_EMIN)
    normal = value.normalize(exact)
    # normalize() writes 100 as 1E+2: format it back into plain digits, unless they would be
    # mostly zeros (1E+999999999 must not become a gigabyte of them).
    exponent = normal.as_tuple().exponent
    return format(normal, "f") if isinstance(exponent, int) and abs(exponent) <= _PLAIN_EXPONENT else str(normal)


def normalise_value(value: Any) -> Any:
    """A JSON-compatible value equal for equal meanings.

    >>> normalise_value("89.00") == normalise_value(89) == normalise_value(" 89.0 ")
    True
    >>> normalise_value("http://schema.org/InStock") == normalise_value("InStock")
    True
    >>> normalise_value("  Hello \\n  world ")
    'Hello world'
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float | Decimal):
        try:
            return _number(Decimal(str(value)))
        except ArithmeticError:  # decimal's InvalidOperation, Overflow…
            return str(value)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        text = _WS.sub(" ", value).strip()
        if _NUMBER.fullmatch(text):
            try:
                return _number(Decimal(text))
            except ArithmeticError:  # decimal's InvalidOperation, Overflow…
                return text
        enum = _SCHEMA_ENUM.match(text)
        return enum.group(1) if enum else text
    if isinstance(value, Mapping):
        return {str(k): normalise_value(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple | set | frozenset):
        return [normalise_value(v) for v in value]
    return normalise_value(str(value))


def normalised_text(value: Any) -> Any:
    """A normalised value as a field keeps it: text (a boolean as ``true``/``false``), lists and
    mappings of text; None (nothing found) stays None.

    >>> normalised_text(True), normalised_text([False, "89"]), normalised_text(None)
    ('true', ['false', '89'], None)
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return [normalised_text(v) for v in value]
    if isinstance(value, dict):
        return {k: normalised_text(v) for k, v in value.items()}
    return value


def compare_fields(old_norm: Mapping[str, Any], new_norm: Mapping[str, Any],
                   old_raw: Mapping[str, Any], new_raw: Mapping[str, Any],
                   old_types: Mapping[str, str] | None = None,
                   new_types: Mapping[str, str] | None = None) -> dict[str, FieldChange]:
    """Changes between two observations' fields, keyed by field name: the raw values as the
    page showed them, and beside them the normalised values that were compared.

    Fields that one side does not track at all (the watch gained or lost a field) are not
    changes: they start or end being compared. Where both sides know a field's JSON type
    (*old_types*, *new_types*: a JSON document's fields), a value of another type is a change
    whose record says both (``old_type``, ``new_type``), even if it normalises alike.

    >>> compare_fields({"p": "89"}, {"p": "79"}, {"p": "89.00"}, {"p": "79.00"})
    {'p': {'old': '89.00', 'new': '79.00', 'old_normalised': '89', 'new_normalised': '79'}}
    >>> retyped = compare_fields({"n": "10"}, {"n": "10"}, {"n": "10"}, {"n": 10}, {"n": "string"}, {"n": "number"})
    >>> retyped["n"]["new"], retyped["n"]["old_type"], retyped["n"]["new_type"]
    (10, 'string', 'number')
    """
    changes: dict[str, FieldChange] = {}
    old_types, new_types = old_types or {}, new_types or {}
    for name, new in new_norm.items():
        if name not in old_norm:
            continue
        old = old_norm[name]
        before, after = old_types.get(name), new_types.get(name)
        retyped = before is not None and after is not None and before != after
        if old != new or retyped:
            changes[name] = {"old": _shown(old_raw.get(name)), "new": _shown(new_raw.get(name)),
                             "old_normalised": _shown(old), "new_normalised": _shown(new)}
            if retyped:
                changes[name].update(old_type=before, new_type=after)
    return changes


def _shown(value: Any) -> Any:
    # A byte that did not decode is shown as \x80 (the character it is compared as has no glyph),
    # at any depth: raw values and normalised ones are strings, numbers, lists or mappings of them.
    if isinstance(value, str):
        return readable(value)
    if isinstance(value, list):
        return [_shown(v) for v in value]
    if isinstance(value, dict):
        return {k: _shown(v) for k, v in value.items()}
    return value
