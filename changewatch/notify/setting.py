"""CHANGEWATCH_NOTIFY's parser (docs/notifications.md): the project's destinations, for every
kind or per kind; the URLs are checked as a watch's are (:mod:`changewatch.core.destinations`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..config import SETTINGS_BY_NAME, BadValue
from ..core.destinations import (
    NOTIFY_KINDS,
    Destination,
    DestinationError,
    NotifyRoutes,
    destinations,
    split_urls,
)

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["NotifySetting", "notify_routes"]


def _json(raw: Any) -> Any:
    import json

    if isinstance(raw, str) and raw.strip()[:1] in ("[", "{"):
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise DestinationError(f"not valid JSON: {exc}") from None
    return raw


@dataclass(frozen=True, slots=True)
class NotifySetting:
    """CHANGEWATCH_NOTIFY's parser (:func:`notify_routes`): Apprise URLs (a list, or one
    string), or a mapping of kind to URLs; also as JSON. Its errors never quote a URL's secrets."""

    @property
    def accepts(self) -> str:
        return (f"Apprise URLs (a list, or a string of them), or a dict of kind ({', '.join(NOTIFY_KINDS)}) to "
                "Apprise URLs")

    def __call__(self, raw: Any) -> NotifyRoutes:
        try:
            return self._routes(_json(raw))
        except DestinationError as exc:
            raise BadValue(str(exc)) from None

    def _routes(self, raw: Any) -> NotifyRoutes:
        if raw is None or (isinstance(raw, str | list | tuple | dict) and not raw):
            return NotifyRoutes()
        if not isinstance(raw, Mapping):
            return NotifyRoutes(every=destinations(split_urls(raw)))
        by_kind: dict[str, tuple[Destination, ...]] = {}
        for kind, urls in raw.items():
            if kind not in NOTIFY_KINDS:
                raise DestinationError(f"unknown kind {kind!r} (known: {', '.join(NOTIFY_KINDS)})")
            try:
                by_kind[kind] = destinations(split_urls(urls))
            except DestinationError as exc:
                raise DestinationError(f"{kind}: {exc}") from None
        return NotifyRoutes(by_kind=MappingProxyType(by_kind))


def notify_routes(settings: BaseSettings) -> NotifyRoutes:
    """CHANGEWATCH_NOTIFY's destinations; ConfigError (one line, no secrets) for a URL Apprise
    does not know or a kind that does not exist."""
    setting = SETTINGS_BY_NAME["CHANGEWATCH_NOTIFY"]
    routes: NotifyRoutes = setting.refine(setting.raw(settings), NotifySetting())
    return routes
