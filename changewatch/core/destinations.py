"""Where notifications go: Apprise URLs (email, Slack, Teams, Discord, webhooks, …), checked once
when the crawl starts, and named everywhere else without their secrets.

A :class:`Destination` keeps its URL (tokens and passwords included) in memory only. The store
knows it by :attr:`Destination.id`, a digest of the URL, and shows it as Apprise's privacy form
(``json://user:****@host/path``), which is what logs and error messages quote too. Apprise is
imported only when a crawl has destinations.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

__all__ = ["NOTIFY_KINDS", "Destination", "DestinationError", "NotifyRoutes", "destination",
           "destinations", "masked", "split_urls"]

#: the kinds of change record a destination may be given (changewatch.feeds.KIND_NAMES)
NOTIFY_KINDS = ("field", "entities", "content", "error", "moved", "recovered")
_SCHEME = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.-]*)://")
_SPLIT = re.compile(r"\s+|,\s*(?=[A-Za-z][A-Za-z0-9+.-]*://)")


class DestinationError(ValueError):
    """An Apprise URL that cannot be used; the message quotes it without its secrets."""


def masked(url: str) -> str:
    """What a message may say of a URL Apprise could not read: its scheme only.

    >>> masked("slakc://T1JJ3T3L2/A1BRTD4JD/secret"), masked("no scheme at all")
    ('slakc://…', '(not a URL)')
    """
    match = _SCHEME.match(url)
    return f"{match[1]}://…" if match else "(not a URL)"


@dataclass(frozen=True, slots=True)
class Destination:
    """One Apprise URL. *guarded*: it came from a watchlist fetched by URL, so the crawl's SSRF
    policy decides whether it may be reached (a URL from settings or a local file is the
    operator's own)."""

    id: str
    url: str = field(repr=False, compare=False)
    shown: str = field(compare=False)
    guarded: bool = field(default=False, compare=False)

    def __str__(self) -> str:
        return self.shown


def _apprise_schemes() -> frozenset[str]:
    from apprise import manager_plugins

    factory: Any = manager_plugins.NotificationManager
    manager = factory()  # one registry for the process (a singleton)
    return frozenset(manager.schemas())


def destination(url: str, *, guarded: bool = False) -> Destination:
    """*url* checked by Apprise; :class:`DestinationError` (naming it without its secrets) when
    Apprise cannot send to it."""
    import apprise

    if not isinstance(url, str) or not url.strip():
        raise DestinationError("an empty destination: expected an Apprise URL such as json://host/path")
    text = url.strip()
    match = _SCHEME.match(text)
    if match is None:
        raise DestinationError(f"{masked(text)} is not an Apprise URL (scheme://…, such as "
                               "mailto://user:password@example.com or json://host/path)")
    if match[1].lower() not in _apprise_schemes():
        raise DestinationError(f"{masked(text)}: Apprise knows no scheme {match[1]!r}")
    plugin: Any = apprise.Apprise.instantiate(text, suppress_exceptions=True)
    if plugin is None:
        raise DestinationError(f"{masked(text)}: Apprise cannot send to it (a missing or malformed token, host or "
                               "option; the Apprise documentation of that service shows its URL)")
    shown = str(plugin.url(privacy=True)).split("?", 1)[0]
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]
    return Destination(digest, text, shown, guarded)


def split_urls(raw: Any) -> list[str]:
    """Apprise URLs from a list, or a string of them separated by whitespace or by commas before
    the next ``scheme://`` (a comma inside a URL, ``?to=a@x,b@y``, stays)."""
    if isinstance(raw, str):
        return [part for part in _SPLIT.split(raw.strip()) if part]
    if isinstance(raw, list | tuple):
        if not all(isinstance(u, str) for u in raw):
            raise DestinationError("expected Apprise URLs as strings")
        return [u.strip() for u in raw if u.strip()]
    raise DestinationError(f"expected an Apprise URL or a list of them, not {type(raw).__name__}")


def destinations(urls: Iterable[str], *, guarded: bool = False) -> tuple[Destination, ...]:
    found: dict[str, Destination] = {}
    for n, url in enumerate(urls, 1):
        try:
            d = destination(url, guarded=guarded)
        except DestinationError as exc:
            raise DestinationError(f"destination {n}: {exc}") from None
        found.setdefault(d.id, d)
    return tuple(found.values())


@dataclass(frozen=True, slots=True)
class NotifyRoutes:
    """CHANGEWATCH_NOTIFY: destinations for every kind of change, and per kind."""

    every: tuple[Destination, ...] = ()
    by_kind: Mapping[str, tuple[Destination, ...]] = field(default_factory=lambda: MappingProxyType({}))

    def __bool__(self) -> bool:
        return bool(self.every or self.by_kind)

    def for_kind(self, kind: str) -> tuple[Destination, ...]:
        return self.every + self.by_kind.get(kind, ())

    @property
    def all(self) -> tuple[Destination, ...]:
        found = {d.id: d for d in self.every}
        for kind_destinations in self.by_kind.values():
            found.update((d.id, d) for d in kind_destinations if d.id not in found)
        return tuple(found.values())
