"""What the conditional-request middlewares and the pipelines share: the public meta keys, the
notice a 304 leaves in ``response.meta``, and which full response each item came from."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from scrapy.crawler import Crawler
from scrapy.http import Response

from .. import meta
from ..core.validators import HttpValidators
from ..items import Observation
from ..store import StoredState

__all__ = ["NotModified", "ResponseOrigins", "not_modified_callback"]



@dataclass(slots=True)
class NotModified:
    """``response.meta["changewatch_not_modified"]`` on a 304 that answered our validators:
    the URL, the keys whose last good observation came from it, and (for callbacks that asked
    for the 304 with ``handle_httpstatus_list``) their stored states, e.g. to re-visit the
    entities a listing page had."""

    url: str
    keys: tuple[str, ...]
    states: dict[str, StoredState] = field(default_factory=dict)


def not_modified_callback(response: Response, **_cb_kwargs: Any) -> Iterator[Observation]:
    """Stands in for the spider's callback on a 304 the spider did not ask for."""
    notice: NotModified = response.meta[meta.NOT_MODIFIED]
    for key in notice.keys:
        yield Observation(key=key, url=notice.url, not_modified=True)


class ResponseOrigins:
    """Which full response each item came from, until a changewatch pipeline adopts it: the
    item itself is the user's (a dict, a scrapy.Item...) and must not grow private fields."""

    _ATTR = "_changewatch_response_origins"

    def __init__(self) -> None:
        self._items: dict[int, tuple[Any, HttpValidators]] = {}

    @classmethod
    def of(cls, crawler: Crawler) -> ResponseOrigins:
        origins: ResponseOrigins | None = getattr(crawler, cls._ATTR, None)
        if origins is None:
            origins = cls()
            setattr(crawler, cls._ATTR, origins)
        return origins

    def register(self, item: Any, origin: HttpValidators) -> None:
        self._items[id(item)] = (item, origin)  # holding the item keeps its id unique

    def pop(self, item: Any) -> HttpValidators | None:
        entry = self._items.get(id(item))
        if entry is None or entry[0] is not item:
            return None
        del self._items[id(item)]
        return entry[1]

    def forget(self, item: Any) -> None:
        self.pop(item)

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
