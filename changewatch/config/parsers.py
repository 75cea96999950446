"""Strict parsers for setting values, one per type: each says in words what it accepts and turns a
raw value (from ``settings.py``, ``custom_settings`` or ``-s NAME=VALUE``, where everything is a
string) into a typed one, or raises :class:`BadValue`. No Scrapy imports; the table of settings in
:mod:`changewatch.config.table` names one parser per setting; lists and mappings are in
:mod:`.structured`.

Strict on purpose: Scrapy's ``getbool`` reads any non-zero number as True and ``getint`` takes
``True`` as 1, so a typo would become a different setting silently.
"""

from __future__ import annotations

import math
import os
import re
import shutil
from dataclasses import dataclass
from typing import Any

from ..core.durations import parse_duration

__all__ = ["DOTTED", "SCHEME", "BadValue", "Bool", "Choice", "Contact", "Directory", "Duration", "Executable", "Float",
           "HttpUrl", "Int", "Name", "StoreUri", "Text"]


_BOOLS = {"True": True, "true": True, "1": True, "False": False, "false": False, "0": False}
_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")  # a dotted path such as module.Class
SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")  # RFC 3986


class BadValue(ValueError):
    """A raw value a parser does not accept; ``str()`` is an optional detail (what exactly is
    wrong), the parser's ``accepts`` says what would be right."""


@dataclass(frozen=True, slots=True)
class Bool:
    """True/False, and the strings Scrapy documents for booleans. Ints 0 and 1 too, as Scrapy
    documents them; not 2, not "yes"."""

    @property
    def accepts(self) -> str:
        return "True or False (also true, false, 1, 0)"

    def __call__(self, raw: Any) -> bool:
        if isinstance(raw, bool):
            return raw
        if type(raw) is int and raw in (0, 1):
            return bool(raw)
        if isinstance(raw, str) and raw.strip() in _BOOLS:
            return _BOOLS[raw.strip()]
        raise BadValue()


def _range_text(minimum: float | None, maximum: float | None, above: bool = False) -> str:
    if minimum is not None and maximum is not None:
        return f" from {minimum:g} to {maximum:g}"
    if minimum is not None:
        return f" {'>' if above else '>='} {minimum:g}"
    return f" <= {maximum:g}" if maximum is not None else ""


@dataclass(frozen=True, slots=True)
class Int:
    """A whole number (an int, or its digits as a string); never a float, a bool or "1.5".
    *optional*: None and an empty string mean None."""

    minimum: int | None = None
    maximum: int | None = None
    optional: bool = False

    @property
    def accepts(self) -> str:
        text = "an integer" + _range_text(self.minimum, self.maximum)
        return text + (", or None (an empty value)" if self.optional else "")

    def __call__(self, raw: Any) -> int | None:
        if self.optional and (raw is None or (isinstance(raw, str) and not raw.strip())):
            return None
        if type(raw) is int:
            number = raw
        elif isinstance(raw, str) and _INT.fullmatch(raw.strip()) and len(raw) < 100:
            number = int(raw.strip())
        else:
            raise BadValue()
        if (self.minimum is not None and number < self.minimum) or (self.maximum is not None and number > self.maximum):
            raise BadValue(f"{number} is out of range")
        return number


@dataclass(frozen=True, slots=True)
class Float:
    """A finite number (int, float or its text); *above*: strictly more than *minimum*.
    *optional*: None and an empty string mean None."""

    minimum: float | None = None
    above: bool = False
    optional: bool = False

    @property
    def accepts(self) -> str:
        return "a number" + _range_text(self.minimum, None, self.above) + (
            ", or None (an empty value)" if self.optional else "")

    def __call__(self, raw: Any) -> float | None:
        if self.optional and (raw is None or (isinstance(raw, str) and not raw.strip())):
            return None
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            try:
                number = float(raw)
            except OverflowError:
                raise BadValue("too large") from None
        elif isinstance(raw, str) and _FLOAT.fullmatch(raw.strip()):
            number = float(raw.strip())
        else:
            raise BadValue()
        if not math.isfinite(number):
            raise BadValue("not a finite number")
        if self.minimum is not None and (number < self.minimum or (self.above and number == self.minimum)):
            raise BadValue(f"{number:g} is out of range")
        return number


@dataclass(frozen=True, slots=True)
class Choice:
    """One of a few words, in any case; the canonical (upper case) spelling is returned."""

    options: tuple[str, ...]

    @property
    def accepts(self) -> str:
        return "one of " + ", ".join(self.options)

    def __call__(self, raw: Any) -> str:
        if isinstance(raw, str) and raw.strip().upper() in self.options:
            return raw.strip().upper()
        raise BadValue()


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,99}")


@dataclass(frozen=True, slots=True)
class Name:
    """A name that goes into Redis keys and log lines: up to 100 letters, digits and ``. _ : + -``,
    starting with a letter or digit. *optional*: None and an empty string mean None.

    >>> Name()("2026-11-30T12:00Z")
    '2026-11-30T12:00Z'
    """

    optional: bool = False

    @property
    def accepts(self) -> str:
        text = "a name of up to 100 letters, digits and . _ : + - (starting with a letter or digit)"
        return text + (", or None (an empty value)" if self.optional else "")

    def __call__(self, raw: Any) -> str | None:
        if self.optional and (raw is None or (isinstance(raw, str) and not raw.strip())):
            return None
        if isinstance(raw, str) and _NAME.fullmatch(raw):
            return raw
        raise BadValue()


@dataclass(frozen=True, slots=True)
class Duration:
    """:func:`changewatch.core.durations.parse_duration`: seconds, or ``90s``, ``10m``, ``6h``, ``7d``;
    at least *minimum* seconds. *zero*: 0 is accepted too (it turns something off)."""

    minimum: float = 0.0
    optional: bool = False  # None and an empty string mean None
    zero: bool = False

    @property
    def accepts(self) -> str:
        least = f"of at least {self.minimum:g} s" if self.minimum else "> 0"
        text = f"a duration {least}: seconds (90) or a number with a unit s, m, h or d (90s, 10m, 6h, 7d, 1h30m)"
        return text + (", or 0 (off)" if self.zero else "") + (", or None (an empty value)" if self.optional else "")

    def __call__(self, raw: Any) -> float | None:
        if self.optional and (raw is None or (isinstance(raw, str) and not raw.strip())):
            return None
        try:
            seconds = parse_duration(raw, allow_zero=self.zero)
        except ValueError as exc:
            raise BadValue(str(exc)) from None
        if seconds < self.minimum and not (self.zero and seconds == 0):
            raise BadValue(f"{seconds:g} s is less than {self.minimum:g} s")
        return seconds


@dataclass(frozen=True, slots=True)
class StoreUri:
    """A non-empty URI with a ``scheme:`` prefix; which schemes exist is the scheme table's
    business (``CHANGEWATCH_STORE_SCHEMES``), the rest the store class's."""

    @property
    def accepts(self) -> str:
        return "a store URI such as sqlite:///path/state.db"

    def __call__(self, raw: Any) -> str:
        if not isinstance(raw, str) or not raw.strip():
            raise BadValue()
        scheme, colon, _ = raw.strip().partition(":")
        if not colon or not SCHEME.fullmatch(scheme):
            path = raw.strip()
            if path.startswith(("/", "./")) or path.endswith(".db"):  # a path meant as the SQLite file
                raise BadValue(f"no scheme: prefix; a path is written sqlite:///{path} "
                               "(an absolute path has four slashes)")
            raise BadValue("no scheme: prefix")
        return raw.strip()


@dataclass(frozen=True, slots=True)
class Directory:
    """A directory's path (a string); None or an empty string mean None (the working directory).
    Whether it exists is checked when it is used: a crawl that never needs it must not fail."""

    @property
    def accepts(self) -> str:
        return "a directory path, or an empty value for the working directory"

    def __call__(self, raw: Any) -> str | None:
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return None
        if not isinstance(raw, str) or "\x00" in raw:
            raise BadValue()
        return raw.strip()


@dataclass(frozen=True, slots=True)
class Executable:
    """The path of a program that exists and may be run (a browser); None or an empty string mean
    None (found by the component itself). Checked at start: a typo fails then, not mid-crawl."""

    @property
    def accepts(self) -> str:
        return "the path of an executable file, or an empty value to find one"

    def __call__(self, raw: Any) -> str | None:
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return None
        if not isinstance(raw, str) or "\x00" in raw:
            raise BadValue()
        path = raw.strip()
        found = path if os.sep in path else shutil.which(path)
        if found is None or not os.path.exists(found):
            raise BadValue("no such file")
        if os.path.isdir(found) or not os.access(found, os.X_OK):
            raise BadValue("not an executable file")
        return found


@dataclass(frozen=True, slots=True)
class Text:
    """A one-line string of up to 200 characters (a model's name); None and an empty string mean None."""

    @property
    def accepts(self) -> str:
        return "one line of text (up to 200 characters), or None (an empty value)"

    def __call__(self, raw: Any) -> str | None:
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return None
        if not isinstance(raw, str) or len(raw.strip()) > 200 or any(c in raw for c in "\r\n\x00"):
            raise BadValue()
        return raw.strip()


@dataclass(frozen=True, slots=True)
class Contact:
    """How to reach whoever runs the crawl, for the User-Agent's comment: printable ASCII (a
    header value), no parentheses or backslash (they would end or escape the comment), up to 200
    characters; None and an empty string mean None.

    >>> Contact()("ops@shop.example")
    'ops@shop.example'
    """

    @property
    def accepts(self) -> str:
        return ("an e-mail address or a URL (printable ASCII without parentheses or backslash, up to 200 "
                "characters), or None (an empty value)")

    def __call__(self, raw: Any) -> str | None:
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return None
        if not isinstance(raw, str) or len(raw.strip()) > 200:
            raise BadValue()
        text = raw.strip()
        if any(not " " <= c <= "~" or c in "()\\" for c in text):
            raise BadValue("it would not fit in the User-Agent header's comment")
        return text


@dataclass(frozen=True, slots=True)
class HttpUrl:
    """An absolute http(s) URL with a host and no credentials in it; None and an empty string mean None."""

    @property
    def accepts(self) -> str:
        return "an http:// or https:// URL (such as https://api.openai.com/v1), or None (an empty value)"

    def __call__(self, raw: Any) -> str | None:
        from urllib.parse import urlsplit

        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return None
        if not isinstance(raw, str) or any(c.isspace() for c in raw.strip()):
            raise BadValue()
        try:
            parts = urlsplit(raw.strip())
            parts.port  # noqa: B018  (a bad port raises here)
        except ValueError as exc:
            raise BadValue(str(exc)) from None
        if parts.scheme.lower() not in ("http", "https"):
            raise BadValue(f"the scheme is {parts.scheme or 'missing'}")
        if not parts.hostname:
            raise BadValue("no host")
        if "@" in parts.netloc:
            raise BadValue("credentials belong in CHANGEWATCH_SUMMARY_API_KEY, not in the URL")
        return raw.strip().rstrip("/")
