"""Which full response each item came from, until the comparison step takes it."""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

from ..core.validators import HttpValidators

__all__ = ["ItemRequests", "ResponseOrigins", "ServedHeaders"]


class ResponseOrigins:
    """Which full response each item came from, until a changewatch pipeline adopts it: the
    item itself is the user's (a dict, a scrapy.Item...) and must not grow private fields.
    With the response itself when its body may be kept as evidence (Scrapy holds a response
    until its items are processed anyway: holding it here costs no memory)."""

    def __init__(self) -> None:
        self._items: dict[int, tuple[Any, HttpValidators, Any]] = {}

    def register(self, item: Any, origin: HttpValidators, response: Any = None) -> None:
        self._items[id(item)] = (item, origin, response)  # holding the item keeps its id unique

    def take(self, item: Any) -> tuple[HttpValidators, Any] | None:
        """The validators of the response *item* came from, and the response when it was
        registered with it; None for an item of no known response. Forgotten once taken."""
        entry = self._items.get(id(item))
        if entry is None or entry[0] is not item:
            return None
        del self._items[id(item)]
        return entry[1], entry[2]

    def pop(self, item: Any) -> HttpValidators | None:
        taken = self.take(item)
        return None if taken is None else taken[0]

    def forget(self, item: Any) -> None:
        self.take(item)

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


class ItemRequests:
    """Which request each item's response answered (CalibrationMiddleware registers every item,
    the pipeline takes it): what a calibration load repeats, and whether an item is one."""

    def __init__(self) -> None:
        self._items: dict[int, tuple[Any, Any]] = {}

    def register(self, item: Any, request: Any) -> None:
        self._items[id(item)] = (item, request)

    def take(self, item: Any) -> Any:
        """The request of *item*'s response (None: not known); forgotten once taken."""
        entry = self._items.get(id(item))
        if entry is None or entry[0] is not item:
            return None
        del self._items[id(item)]
        return entry[1]

    def forget(self, item: Any) -> None:
        self.take(item)

    def __len__(self) -> int:
        return len(self._items)


class ServedHeaders:
    """Each response's header lines exactly as served (name case, order, repeats), by the request
    it answered, for evidence: noted by changewatch's download handler (changewatch.render.served),
    read by the pipeline. Keyed by the request, which a response keeps through every
    ``replace()`` (decompression makes a new response); held weakly, so an entry lives as long
    as its request. A response the handler did not download (a rendered page, Scrapy's HTTP
    cache, another handler) has none, nor one whose status is not the one noted (a 304 that
    Scrapy's HTTP cache turned into the cached 200)."""

    def __init__(self) -> None:
        self._by_request: WeakKeyDictionary[Any, tuple[int, tuple[tuple[str, str], ...]]] = WeakKeyDictionary()

    def keep(self, request: Any, status: int, headers: tuple[tuple[str, str], ...]) -> None:
        self._by_request[request] = (status, headers)

    def of(self, response: Any) -> tuple[tuple[str, str], ...] | None:
        """The header lines *response* was served with; None when they are not known."""
        request = getattr(response, "request", None)
        entry = None if request is None else self._by_request.get(request)
        if entry is None or entry[0] != response.status:
            return None
        return entry[1]
