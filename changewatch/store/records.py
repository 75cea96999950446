"""The values a store takes and gives (changewatch.store.protocol says what it does with them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.comparisons import Kind
from ..core.evidence import KeptBody
from ..core.schedule import ScheduleUpdate
from ..core.validators import HttpValidators

__all__ = ["TRANSFER_TABLES", "ChangeEvidence", "ChangeQuery", "Committed", "Evidence", "KeptVersion", "Lease",
           "LogEntry", "LoggedChange", "NotificationState", "Outcome", "PageSetChange", "PendingNotification",
           "StoreCounts", "StoredState", "TransferBatch"]


@dataclass(slots=True)
class StoredState:
    """Everything the store keeps for one key."""

    key: str
    url: str
    version: int
    #: the last good observation's snapshot (changewatch.core.snapshot); None: no good one yet
    snapshot: bytes | None
    counters: dict[str, int] = field(default_factory=dict)
    first_seen: str | None = None
    last_seen: str | None = None
    last_good: str | None = None
    last_changed: str | None = None
    last_error: str | None = None
    error_streak: int = 0
    #: the adaptive schedule's estimate of how often the key changes (changewatch.core.schedule;
    #: None: never estimated)
    schedule: str | None = None
    #: the key's last observation of its page (a response compared, a 304, an unchanged page; not
    #: an error): a change record's ``previous_observed_at``
    last_observed: str | None = None
    #: when the content of ``snapshot`` was first observed (its baseline, or the change that
    #: brought it): a change record's ``baseline_since``
    content_since: str | None = None


@dataclass(frozen=True, slots=True)
class Evidence:
    """The response an observation came from, as served: kept with it when it is a version a
    change is judged between (changewatch.core.evidence). *headers* is JSON, without cookies or
    credentials; *url* has no user name or password."""

    url: str
    status: int
    headers: str
    body: KeptBody


@dataclass(frozen=True, slots=True)
class PageSetChange:
    """What a site watch's page set gains and loses in one commit (the ``site_pages`` rows of the
    key committed): the pages *added* and the pages *removed* (canonical URLs). Written in the
    transaction of the observation that reports them: the set and its record, together or not at all."""

    added: Sequence[str] = ()
    removed: Sequence[str] = ()
    #: how the set was chosen (``max_pages``): another spec starts the set afresh, silently
    spec: str | None = None


@dataclass(slots=True)
class Outcome:
    """What one observation does to a key, decided from its state."""

    kind: Kind
    url: str
    observed_at: str
    snapshot: bytes | None = None  # the new snapshot; None keeps the stored one
    record: dict[str, Any] | None = None  # appended to the change log when set
    error: str | None = None
    #: the validators of the full response this observation came from: they replace the key's
    #: stored ones in the same transaction (a crash before the commit never leaves validators
    #: for a page whose observation was lost). None leaves them as they are.
    http: HttpValidators | None = None
    #: a 304 answered the conditional request for ``url``: count it against the safety net
    not_modified: bool = False
    #: the simhash distance a noise or content observation measured (the health history sums it)
    distance: int | None = None
    #: destinations to notify of ``record``, as (id, shown): a pending notification each, written
    #: with the change-log row (a :class:`RoutingStore` does; other stores ignore it)
    notify: tuple[tuple[str, str], ...] = ()
    #: what the observation tells the adaptive schedule: the commit writes the key's estimate and
    #: due time from the fetch time it stores (None: leave them as they are)
    schedule: ScheduleUpdate | None = None
    #: the body and headers to keep, in the same transaction (None: keep nothing)
    evidence: Evidence | None = None
    #: a site watch's page set: the rows its commit adds and removes (None: the set is left as it is)
    pages: PageSetChange | None = None


@dataclass(frozen=True, slots=True)
class Committed:
    """What :meth:`Store.commit` did: the key's new version, the change-log id of the record
    (None without a record), and the fetch time it stored (clamped when it was ahead)."""

    version: int
    change_id: int | None
    observed_at: str
    clamped: bool = False


@dataclass(frozen=True, slots=True)
class Lease:
    """A claim on change-log rows: by *owner* (:func:`changewatch.store.leases.new_owner`:
    ``host:scope:pid:start:nonce``), for *seconds* of the store's clock."""

    owner: str
    seconds: float


@dataclass(frozen=True, slots=True)
class LoggedChange:
    id: int
    spider: str
    key: str
    kind: str
    observed_at: str
    record: dict[str, Any]
    lease_owner: str | None = None


@dataclass(frozen=True, slots=True)
class ChangeQuery:
    """Which logged changes :meth:`ChangeLogStore.query_changes` lists. Each member given
    narrows the list (empty: any); values within one member are alternatives."""

    spiders: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    #: a site watch's records: its page set's (its key) and its pages' (``KEY|…``)
    site_watches: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    #: a time as the store keeps them (``2026-11-30T12:00:00Z``): changes fetched at it or later
    since: str | None = None
    undelivered: bool = False


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One change-log row as listed: the logged change and when it was confirmed as delivered
    (None: not yet)."""

    id: int
    spider: str
    key: str
    kind: str
    observed_at: str
    record: dict[str, Any]
    delivered_at: str | None


@dataclass(frozen=True, slots=True)
class StoreCounts:
    """How much a store holds: keys per spider, validators, logged changes and undelivered ones, health rows."""

    keys: dict[str, int]
    validators: int
    changes: int
    undelivered: int
    #: rows of the health history and open health conditions (store/health.py)
    health: int = 0
    #: versions kept as evidence (their bodies are counted with them)
    evidence: int = 0


#: what a migration copies, table by table in this order, with the columns of each in the order
#: of a :data:`TransferBatch`'s rows. Leases are not copied: a lease names a process of the old
#: store's crawls, and an undelivered change without one is claimed by the next crawl at once.
TRANSFER_TABLES: dict[str, tuple[str, ...]] = {
    "observations": ("spider", "key", "url", "version", "snapshot", "counters", "first_seen", "last_seen",
                     "last_good", "last_changed", "last_error", "error_streak",
                     # -- adaptive revisits and forgetting
                     "schedule", "due_at", "due_interval", "listed_at",
                     # -- the previous observation and the age of the content, apart from the snapshot's time
                     "last_observed", "content_since"),
    "validators": ("spider", "url", "key", "etag", "last_modified", "size", "full_at", "runs", "spec", "render",
                   "links"),
    "changes": ("id", "spider", "key", "kind", "observed_at", "record", "delivered_at"),
    # the watcher's own health (store/health.py): the history it is judged by, its open conditions
    "health_history": ("spider", "site", "day", "kind", "count", "distances", "distance_sum", "distance_max"),
    "health_conditions": ("spider", "site", "condition", "since", "error", "change_id"),
    # claims are not copied either: they name a process of the old store's crawls
    "notifications": ("change_id", "destination", "spider", "shown", "sent_at", "attempts", "last_error",
                      "discarded_at"),
    "summary_spend": ("day", "cost", "calls"),
    # -- evidence
    "evidence_bodies": ("spider", "digest", "compression", "size", "stored_at", "body"),
    "evidence": ("id", "spider", "key", "change_id", "observed_at", "url", "status", "headers", "digest",
                 "superseded"),
    # -- site watches' page sets
    "site_pages": ("spider", "site", "url"),
    "site_sets": ("spider", "site", "spec"),
}

#: a table's name and some of its rows, as tuples of :data:`TRANSFER_TABLES`' columns (a
#: snapshot as bytes, counters and records as the JSON text stored, times as text)
TransferBatch = tuple[str, list[tuple[Any, ...]]]


@dataclass(frozen=True, slots=True)
class PendingNotification:
    """A change one destination has not been sent yet (claimed for sending)."""

    change_id: int
    destination: str
    spider: str
    key: str
    kind: str
    observed_at: str
    record: dict[str, Any]
    attempts: int


@dataclass(frozen=True, slots=True)
class NotificationState:
    """One destination's delivery state of one change, as ``changewatch notify`` lists it."""

    change_id: int
    destination: str
    shown: str
    spider: str
    key: str
    kind: str
    observed_at: str
    sent_at: str | None
    attempts: int
    last_error: str | None
    #: when ``changewatch notify --discard`` ended it unsent (None: not discarded)
    discarded_at: str | None = None


@dataclass(frozen=True, slots=True)
class KeptVersion:
    """One version kept as evidence: the response as served (*body* compressed as *compression*
    says; None when the body row is gone), and the change it was judged a change of (None: a
    baseline or a re-baseline)."""

    id: int
    spider: str
    key: str
    change_id: int | None
    observed_at: str
    url: str
    status: int
    headers: str
    digest: str
    compression: str | None
    body: bytes | None
    size: int | None


@dataclass(frozen=True, slots=True)
class ChangeEvidence:
    """A logged change with the versions it was judged between: *after* the one it was found
    at, *before* the kept version before it (None: never kept, or gone by retention)."""

    change: LogEntry
    before: KeptVersion | None
    after: KeptVersion | None
