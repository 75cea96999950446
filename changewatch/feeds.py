"""Routing change records to feeds by kind, with Scrapy's own FEEDS ``item_filter``.

::

    FEEDS = {
        "changes/fields.jsonl": {"format": "jsonlines", "item_filter": "changewatch.feeds.KindFilter",
                                 "item_filter_kinds": ["field", "entities"]},
        "changes/errors.jsonl": {"format": "jsonlines", "item_filter": "changewatch.feeds.KindFilter",
                                 "item_filter_kinds": ["error"]},
    }
"""

from __future__ import annotations

from typing import Any

from itemadapter import ItemAdapter
from scrapy.extensions.feedexport import ItemFilter

__all__ = ["KIND_NAMES", "KindFilter"]

KIND_NAMES = frozenset({"field", "entities", "content", "error"})


class KindFilter(ItemFilter):
    """Accepts change records whose ``kind`` is in the feed option ``item_filter_kinds``
    (a list, or a comma-separated string). Other items are refused."""

    def __init__(self, feed_options: dict[str, Any] | None) -> None:
        super().__init__(feed_options)
        raw = (feed_options or {}).get("item_filter_kinds")
        if raw is None:
            raise ValueError("changewatch.feeds.KindFilter needs the feed option item_filter_kinds, "
                             "e.g. ['field', 'entities']")
        kinds = {k.strip() for k in raw.split(",")} if isinstance(raw, str) else {str(k) for k in raw}
        unknown = kinds - KIND_NAMES
        if unknown:
            raise ValueError(f"item_filter_kinds: unknown kind(s) {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(sorted(KIND_NAMES))}")
        self.kinds = frozenset(kinds)

    def accepts(self, item: Any) -> bool:
        return ItemAdapter.is_item(item) and ItemAdapter(item).get("kind") in self.kinds
