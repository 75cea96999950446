"""Keyed stores, chosen by URI scheme: a scheme names a class by dotted path, imported only when
a URI uses it (as Scrapy's FILES_STORE_SCHEMES). The crawl merges ``CHANGEWATCH_STORE_SCHEMES``
over :data:`BUILTIN_STORE_SCHEMES`."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from importlib import import_module
from typing import Any

from ..core.validators import HttpValidators
from .errors import NoSuchStore, OlderSchema, StaleObservation, StoreError, StoreNotEmpty, VersionConflict
from .options import redact
from .protocol import (
    CLOCK_TOLERANCE,
    ChangeLogStore,
    MaintainedStore,
    PageSetStore,
    RoutingStore,
    SnapshotStore,
    Store,
    StoreFactory,
    StoreOptions,
    TransferableStore,
)
from .records import (
    TRANSFER_TABLES,
    ChangeEvidence,
    ChangeQuery,
    Committed,
    Evidence,
    KeptVersion,
    Lease,
    LogEntry,
    LoggedChange,
    NotificationState,
    Outcome,
    PageSetChange,
    PendingNotification,
    StoreCounts,
    StoredState,
    TransferBatch,
)

__all__ = ["BUILTIN_STORE_SCHEMES", "CLOCK_TOLERANCE", "DEFAULT_STORE_URI", "TRANSFER_TABLES", "ChangeEvidence",
           "ChangeLogStore", "ChangeQuery", "Committed", "Evidence", "HttpValidators", "KeptVersion", "Lease",
           "LogEntry", "LoggedChange", "MaintainedStore", "NoSuchStore", "NotificationState", "OlderSchema", "Outcome",
           "PageSetChange", "PageSetStore", "PendingNotification", "RoutingStore", "SnapshotStore", "StaleObservation",
           "Store", "StoreCounts",
           "StoreError",
           "StoreFactory", "StoreNotEmpty", "StoreOptions", "StoredState", "TransferBatch", "TransferableStore",
           "VersionConflict", "open_store", "store_from_uri"]

DEFAULT_STORE_URI = "sqlite:///.changewatch/state.db"

#: scheme → dotted path of a class with ``from_uri(uri, options)`` (:class:`StoreFactory`)
BUILTIN_STORE_SCHEMES: dict[str, str] = {
    "sqlite": "changewatch.store.sqlite.SQLiteStore",
    "postgresql": "changewatch.store.postgresql.PostgreSQLStore",
    "postgres": "changewatch.store.postgresql.PostgreSQLStore",
}

_PROTOCOL = ("open", "close", "now", "read", "commit", "keys", "changes", "undelivered", "lease_owners",
             "claim_undelivered", "renew_leases", "release_leases", "mark_delivered", "validators",
             "forget_validators")


def store_from_uri(uri: str, schemes: Mapping[str, str | None] | None = None,
                   options: StoreOptions | None = None) -> Store:
    """Build (not open) the store named by *uri*. *schemes* are merged over the built-in ones
    (None removes one); *options* are the crawl's defaults, which the URI's query overrides."""
    table = {name.lower(): path for name, path in {**BUILTIN_STORE_SCHEMES, **(schemes or {})}.items() if path}
    scheme = uri.split(":", 1)[0].lower() if ":" in uri else ""
    if scheme not in table:
        known = ", ".join(f"{name}:" for name in sorted(table))
        raise StoreError(f"unknown store URI scheme in {redact(uri)!r}; known schemes: {known} "
                         "(add one with CHANGEWATCH_STORE_SCHEMES)")
    factory = _factory(scheme, table[scheme])
    store = factory.from_uri(uri, options or {})
    missing = [name for name in _PROTOCOL if not callable(getattr(store, name, None))]
    if missing:
        raise StoreError(f"store class {table[scheme]} (scheme {scheme}:) does not implement the store "
                         f"protocol: no {', '.join(missing)}")
    return store


@lru_cache(maxsize=32)
def _factory(scheme: str, path: str) -> type[StoreFactory]:
    module, _, name = path.rpartition(".")
    try:
        cls: Any = getattr(import_module(module), name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise StoreError(f"store scheme {scheme}: cannot import {path!r}: {exc}") from exc
    if not callable(getattr(cls, "from_uri", None)):
        raise StoreError(f"store scheme {scheme}: {path} has no from_uri(uri, options)")
    factory: type[StoreFactory] = cls
    return factory


def open_store(uri: str = DEFAULT_STORE_URI, options: StoreOptions | None = None) -> Store:
    """The store named by *uri*, opened (for scripts and the command line; a crawl opens its
    store on spider signals)."""
    store = store_from_uri(uri, options=options)
    store.open()
    return store
