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

import json
from collections.abc import Mapping
from typing import Any

from itemadapter import ItemAdapter
from scrapy.exporters import CsvItemExporter
from scrapy.extensions.feedexport import ItemFilter

from .core.comparisons import Kind

__all__ = ["KIND_NAMES", "RECORD_FIELDS", "ChangeRecordCsvExporter", "KindFilter"]

#: every member a change record may have (changewatch.items.ChangeRecord), in the CSV's order
RECORD_FIELDS = ("change_id", "redelivery", "spider", "key", "url", "kind", "observed_at", "previous_observed_at",
                 "changes", "added", "removed", "changed", "distance", "diff", "error", "moved_to", "summary")

#: the kinds of change record: those that leave the crawl
KIND_NAMES = frozenset(kind.value for kind in Kind if kind.reported)


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


def _is_record(item: Any) -> bool:
    if not ItemAdapter.is_item(item):
        return False
    adapter = ItemAdapter(item)
    return adapter.get("kind") in KIND_NAMES and "key" in adapter and "observed_at" in adapter


class ChangeRecordCsvExporter(CsvItemExporter):
    """The ``csv`` feed format with the changewatch add-on: a feed of change records gets one
    header with every record member (``RECORD_FIELDS``), whatever kind comes first, and nested
    values (``changes``, ``added``, ``removed``, ``changed``) as JSON text. Scrapy's exporter
    took its columns from the first record: a ``field`` record after a ``content`` one lost its
    ``changes``, and nested values were Python reprs. A feed whose first item is not a change
    record, or that names its fields (FEED_EXPORT_FIELDS, a feed's ``fields``), is exported
    exactly as Scrapy does."""

    def __init__(self, file: Any, **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self._records = False

    def export_item(self, item: Any) -> None:
        if self._headers_not_written and not self.fields_to_export and _is_record(item):
            self.fields_to_export = list(RECORD_FIELDS)
            self._records = True
        super().export_item(item)

    def serialize_field(self, field: Mapping[str, Any] | Any, name: str, value: Any) -> Any:
        if self._records and isinstance(value, (dict, list, tuple)):
            return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
        return super().serialize_field(field, name, value)
