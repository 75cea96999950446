"""Keyed stores, chosen by URI scheme (as Scrapy's FILES_STORE is)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .base import HttpValidators, LoggedChange, Outcome, Store, StoredState, StoreError
from .sqlite import SQLiteStore

__all__ = ["DEFAULT_STORE_URI", "STORE_SCHEMES", "HttpValidators", "LoggedChange", "Outcome", "SQLiteStore", "Store",
           "StoreError", "StoredState", "open_store"]

DEFAULT_STORE_URI = "sqlite:///.changewatch/state.db"

STORE_SCHEMES: dict[str, Callable[[str], Store]] = {"sqlite": SQLiteStore.from_uri}


def store_from_uri(uri: str, schemes: Mapping[str, Callable[[str], Store]] | None = None) -> Store:
    """Build (not open) the store named by *uri*."""
    table = {**STORE_SCHEMES, **(schemes or {})}
    scheme = uri.split(":", 1)[0].lower() if ":" in uri else ""
    if scheme not in table:
        known = ", ".join(sorted(table))
        raise StoreError(f"unknown store URI scheme in {uri!r}; known schemes: {known}")
    return table[scheme](uri)


def open_store(uri: str = DEFAULT_STORE_URI) -> Store:
    store = store_from_uri(uri)
    store.open()
    return store
