"""Routing change records to feeds by kind, site or field, with Scrapy's own FEEDS ``item_filter``
(docs/notifications.md has the recipes; tests/test_feed_recipes.py runs each as written).

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
from urllib.parse import urlsplit

from itemadapter import ItemAdapter
from scrapy.exporters import CsvItemExporter
from scrapy.extensions.feedexport import ItemFilter

from .core.comparisons import Kind

__all__ = ["KIND_NAMES", "RECORD_FIELDS", "ChangeRecordCsvExporter", "FieldFilter", "KindFilter", "SiteFilter"]

#: every member a change record may have (changewatch.items.ChangeRecord), in the CSV's order
RECORD_FIELDS = ("change_id", "redelivery", "spider", "key", "url", "kind", "observed_at", "previous_observed_at",
                 "baseline_since", "changes", "added", "removed", "changed", "distance", "diff", "error", "moved_to",
                 "confirmed", "summary", "conditions", "site_watch")

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


def _names(feed_options: dict[str, Any] | None, option: str, filter_name: str, example: str) -> frozenset[str]:
    """A feed option's list (or comma-separated string) of non-empty names."""
    raw = (feed_options or {}).get(option)
    if raw is None:
        raise ValueError(f"changewatch.feeds.{filter_name} needs the feed option {option}, e.g. {example}")
    names = [n.strip() for n in raw.split(",")] if isinstance(raw, str) else [str(n).strip() for n in raw]
    if not names or not all(names):
        raise ValueError(f"{option}: expected a non-empty list of names, e.g. {example}")
    return frozenset(names)


class SiteFilter(ItemFilter):
    """Accepts change records whose page (``url``, or ``moved_to``) is on a host of the feed option
    ``item_filter_sites``: ``shop.example`` (that host, and ``www.shop.example``) or ``.shop.example``
    (the domain and every subdomain). Other items are refused."""

    def __init__(self, feed_options: dict[str, Any] | None) -> None:
        super().__init__(feed_options)
        sites = _names(feed_options, "item_filter_sites", "SiteFilter", "['shop.example', '.news.example']")
        self.hosts = frozenset(s.lower().rstrip(".") for s in sites if not s.startswith("."))
        self.domains = tuple(s.lower().rstrip(".") for s in sites if s.startswith("."))

    def _matches(self, url: Any) -> bool:
        if not isinstance(url, str):
            return False
        host = (urlsplit(url).hostname or "").rstrip(".")
        bare = host.removeprefix("www.")
        return (host in self.hosts or bare in self.hosts or host.endswith(self.domains)
                or any(host == d[1:] for d in self.domains))

    def accepts(self, item: Any) -> bool:
        if not _is_record(item):
            return False
        adapter = ItemAdapter(item)
        return self._matches(adapter.get("url")) or self._matches(adapter.get("moved_to"))


class FieldFilter(ItemFilter):
    """Accepts change records in which a field of the feed option ``item_filter_fields`` changed
    (a name of the record's ``changes``, as the watch names it: ``offers.price``, ``stock``), or
    an entity's field did (``changed``). Other items are refused."""

    def __init__(self, feed_options: dict[str, Any] | None) -> None:
        super().__init__(feed_options)
        self.fields = _names(feed_options, "item_filter_fields", "FieldFilter", "['offers.price', 'stock']")

    def accepts(self, item: Any) -> bool:
        if not _is_record(item):
            return False
        adapter = ItemAdapter(item)
        changes = adapter.get("changes")
        if isinstance(changes, Mapping) and not self.fields.isdisjoint(changes):
            return True
        changed = adapter.get("changed")
        return isinstance(changed, list) and any(isinstance(e, Mapping) and isinstance(e.get("changes"), Mapping)
                                                 and not self.fields.isdisjoint(e["changes"]) for e in changed)


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
