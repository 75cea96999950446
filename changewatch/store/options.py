"""Store options: defaults from the crawl's settings, overridden by the store URI's query
(``sqlite:///state.db?synchronous=FULL&timeout=10``). Shared by every backend, so that each
names a bad option the same way.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from .errors import StoreError
from .protocol import StoreOptions

__all__ = ["Option", "choice", "redact", "resolve_options", "seconds", "split_query", "uri_argument"]

_SETTINGS = "CHANGEWATCH_STORE"  # the prefix of the settings that give the options their defaults


@dataclass(frozen=True, slots=True)
class Option:
    """One option a backend accepts: how to read a value (raising ValueError), what is accepted
    (for messages) and its value when neither the settings nor the URI give one."""

    parse: Callable[[Any], Any]
    accepts: str
    default: Any


def choice(*values: str, default: str) -> Option:
    """One of *values*, case-insensitive (given in upper case)."""
    def parse(value: Any) -> str:
        text = str(value).strip().upper()
        if text not in values:
            raise ValueError(text)
        return text
    return Option(parse, ", ".join(values[:-1]) + f" or {values[-1]}", default)


def seconds(*, default: float) -> Option:
    """A number of seconds, 0 or more."""
    def parse(value: Any) -> float:
        number = float(value)
        if not number >= 0 or number == float("inf"):
            raise ValueError(value)
        return number
    return Option(parse, "a number of seconds, 0 or more", default)


#: query parameters whose values are secrets (libpq accepts ``?password=``)
SECRET_PARAMETERS = frozenset({"password", "sslpassword"})


def redact(uri: str) -> str:
    """*uri* as typed, but for the password of its user part or of its query (``***``): for
    messages, and for commands printed to be run (:func:`uri_argument`).

    >>> redact("postgresql://me:secret@db.example/watch?sslmode=require")
    'postgresql://me:***@db.example/watch?sslmode=require'
    >>> redact("postgresql://me@db.example/watch?password=secret&sslmode=require")
    'postgresql://me@db.example/watch?password=***&sslmode=require'
    >>> redact("sqlite:///.changewatch/state.db"), redact("sqlite:////srv/state.db?timeout=10")
    ('sqlite:///.changewatch/state.db', 'sqlite:////srv/state.db?timeout=10')
    """
    # by hand, not urlsplit/urlunsplit: those drop the empty host of sqlite:///… (a relative path
    # becomes sqlite:/…, which no store opens) and re-spell what they do not know
    rest, hash_, fragment = uri.partition("#")
    rest, question, query = rest.partition("?")
    scheme, slashes, after = rest.partition("://")
    if slashes:
        authority, slash, path = after.partition("/")
        if ":" in authority and "@" not in authority and "@" in path and not authority.rpartition(":")[2].isdigit():
            # a password with a "/" in it, not percent-encoded: hidden up to the last "@"
            authority, slash, path = after, "", ""
        user, at, host = authority.rpartition("@")
        if at and ":" in user:
            authority = f"{user.partition(':')[0]}:***@{host}"
        rest = f"{scheme}{slashes}{authority}{slash}{path}"
    if question:
        query = _redact_query(query)
    return f"{rest}{question}{query}{hash_}{fragment}"


def uri_argument(uri: str) -> str:
    """*uri* as an argument of a command printed for a person to run: redacted, and quoted for a
    POSIX shell where it must be (a path with a space in it).

    >>> uri_argument("sqlite:///state.db"), uri_argument("sqlite:////srv/my stores/state.db")
    ('sqlite:///state.db', "'sqlite:////srv/my stores/state.db'")
    """
    return shlex.quote(redact(uri))


def _redact_query(query: str) -> str:
    def one(pair: str) -> str:
        name, eq, _ = pair.partition("=")
        return f"{name}=***" if eq and name.strip().lower() in SECRET_PARAMETERS else pair
    return "&".join(one(pair) for pair in query.split("&"))


def _shown(name: str, value: Any) -> str:
    return "'***'" if name.strip().lower() in SECRET_PARAMETERS else repr(value)


def split_query(uri: str) -> tuple[str, dict[str, str]]:
    """*uri* without its query, and the query's options (each named once).

    >>> split_query("sqlite:///state.db?synchronous=FULL&timeout=10")
    ('sqlite:///state.db', {'synchronous': 'FULL', 'timeout': '10'})
    """
    base, _, query = uri.partition("?")
    try:
        parsed = parse_qs(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise StoreError(f"store URI {redact(uri)!r}: cannot read its options {_redact_query(query)!r} "
                         "(expected name=value&name=value)") from None
    repeated = sorted(name for name, values in parsed.items() if len(values) > 1)
    if repeated:
        raise StoreError(f"store URI {redact(uri)!r} gives option {repeated[0]!r} more than once")
    return base, {name: values[0] for name, values in parsed.items()}


def resolve_options(uri: str, accepted: Mapping[str, Option], defaults: StoreOptions,
                    query: Mapping[str, str]) -> dict[str, Any]:
    """Every option in *accepted*: its value from *query* (the URI's), else from *defaults* (the
    crawl's settings; options of other backends there are ignored),
    else its own default.
    Raises StoreError naming an unknown option of the URI, or a value that is not accepted."""
    unknown = sorted(set(query) - set(accepted))
    if unknown:
        known = "; ".join(f"{name} ({option.accepts})" for name, option in accepted.items())
        name = unknown[0]
        raise StoreError(f"store URI {redact(uri)!r}: unknown option {name}={_shown(name, query[name])}; "
                         f"accepted: {known}")
    resolved: dict[str, Any] = {}
    for name, option in accepted.items():
        source, value = (("the URI", query[name]) if name in query
                         else (f"{_SETTINGS}_{name.upper()}", defaults.get(name)))
        if value is None:
            resolved[name] = option.default
            continue
        try:
            resolved[name] = option.parse(value)
        except (TypeError, ValueError):
            raise StoreError(f"store option {name}={_shown(name, value)} (from {source}) is not accepted: "
                             f"expected {option.accepts}") from None
    return resolved
