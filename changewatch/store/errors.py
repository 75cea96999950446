"""What a store raises (changewatch.store.protocol says when)."""

from __future__ import annotations

__all__ = ["NoSuchStore", "OlderSchema", "StaleObservation", "StoreError", "StoreNotEmpty", "VersionConflict"]


class StoreError(Exception):
    """The store cannot be opened or written; the message says which and why. Fatal for a crawl."""


class NoSuchStore(StoreError):
    """``open_existing`` found no store where the URI points (nothing was created)."""


class OlderSchema(StoreError):
    """``open_existing`` found a store of an older schema, and was not asked to
    upgrade it (it was left untouched)."""


class StoreNotEmpty(StoreError):
    """``import_rows`` found the store holding data (it was left untouched)."""


class VersionConflict(Exception):
    """Another writer committed the key since it was read: read it again and recompute."""


class StaleObservation(Exception):  # a verdict on the observation, not a failure: no "Error"
    """The observation was fetched before the key's stored one: it changes nothing."""
