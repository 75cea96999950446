"""Which full response each item came from, until the comparison step takes it."""

from __future__ import annotations

from typing import Any

from ..core.validators import HttpValidators

__all__ = ["ResponseOrigins"]


class ResponseOrigins:
    """Which full response each item came from, until a changewatch pipeline adopts it: the
    item itself is the user's (a dict, a scrapy.Item...) and must not grow private fields."""

    def __init__(self) -> None:
        self._items: dict[int, tuple[Any, HttpValidators]] = {}

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
