"""The store contract: what every backend keeps, and the semantics it guarantees with several
writers (docs/architecture.md, "The store protocol"; tests/store/test_contract.py runs the same
tests against every backend).

- **Optimistic per-key updates.** :meth:`Store.read` returns a key's state with its ``version``;
  the caller computes the new snapshot, the comparison and the diff outside any transaction;
  :meth:`Store.commit` writes the new state and its change-log row in one short transaction only
  if the key is still at the version read (``expected_version``; None: the key must not exist),
  and raises :class:`VersionConflict` otherwise, writing nothing. The caller then reads again
  and recomputes. No update is lost, no change is logged twice, and no lock is held while
  computing. A backend may serialise writers with a database lock (SQLite does); the protocol
  does not depend on it.
- **Fetch order.** An observation fetched before the key's stored one (``observed_at`` earlier
  than the state's ``last_seen``, compared as times; an equal time is not earlier) never
  replaces it: :meth:`Store.commit` raises :class:`StaleObservation` and writes nothing. Fetch
  times more than :data:`CLOCK_TOLERANCE` ahead of the store's clock are clamped to the store's
  clock (logged once per commit, stored as ``last_seen``, as the change-log row's and as the
  record's ``observed_at``, returned in :class:`Committed`), so one node with a skewed clock
  cannot freeze a key for everyone else. The rules are in :mod:`changewatch.store.semantics`,
  shared by every backend.
- **Leased redelivery.** A change-log row is undelivered until :meth:`Store.mark_delivered`.
  Its writer holds a lease on it from the commit (``lease``); other processes claim only
  undelivered rows whose lease is absent, expired, or held by an owner they know to be dead
  (:meth:`Store.claim_undelivered`). Leases are renewed while a crawl runs
  (:meth:`Store.renew_leases`) and released when a feed fails (:meth:`Store.release_leases`).
- The snapshot is opaque bytes to the store (:mod:`changewatch.core.snapshot` encodes it).

Two optional protocols serve the command line, and a store without them still crawls:
:class:`ChangeLogStore` (``changewatch changes``: open only a store that exists, list the change
log filtered in the database) and :class:`TransferableStore` (``changewatch migrate``: every
row out in batches, and into an empty store in one transaction). A third, :class:`RoutingStore`,
is what notifications and summaries need (a crawl with either refuses a store without it): each
destination's delivery state per change, written in the commit's transaction with the change
(``Outcome.notify``), a summary written into a logged record, and the day's spend on summaries.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from ..core.schedule import DueEntry
from ..core.validators import HttpValidators
from .records import (
    ChangeEvidence,
    ChangeQuery,
    Committed,
    Lease,
    LogEntry,
    LoggedChange,
    NotificationState,
    Outcome,
    PendingNotification,
    StoreCounts,
    StoredState,
    TransferBatch,
)

__all__ = ["CLOCK_TOLERANCE", "ChangeLogStore", "MaintainedStore", "PageSetStore", "RoutingStore", "SnapshotStore",
           "Store", "StoreFactory", "StoreOptions", "TransferableStore"]


#: how far ahead of the store's clock an observation's fetch time may be before it is clamped
CLOCK_TOLERANCE = timedelta(seconds=60)


@runtime_checkable
class Store(Protocol):
    """A keyed store, namespaced per spider. An instance is used from one thread at a time;
    several instances (threads, processes, machines) may share one database."""

    @property
    def fast_commits(self) -> bool:
        """True when a commit never waits on the disk or the network (no fsync, local file):
        the crawl then commits on the reactor thread instead of handing off to a thread."""
        ...

    def open(self) -> None:
        """Connect, create or upgrade the schema. Raises StoreError for a store that is not
        ours, corrupt, of a newer schema, or cannot be written; never deletes or resets one."""
        ...

    def close(self) -> None: ...

    def now(self) -> datetime:
        """The store's clock (aware, UTC): the reference for clamping and leases."""
        ...

    def read(self, spider: str, key: str) -> StoredState | None: ...

    def commit(self, spider: str, key: str, expected_version: int | None, outcome: Outcome, *,
               lease: Lease | None = None, previous: StoredState | None = None) -> Committed:
        """In one transaction, if *key* is at *expected_version* (None: absent) and *outcome*
        is not stale: write the state (counters, times, error streak, snapshot when given,
        validators when given), append ``outcome.record`` to the change log (leased to
        *lease* when given) and bump the version. Raises VersionConflict or StaleObservation
        (writing nothing), StoreError, or ValueError for a fetch time that is not ISO 8601.

        *previous*: the state as :meth:`read` returned it at *expected_version*, when the caller
        has it. A backend may then skip reading the key again: a write conditional on the
        version still fails with VersionConflict if the key moved since (so *previous* is
        exactly what is stored when the write succeeds)."""
        ...

    def keys(self, spider: str) -> list[str]: ...

    def changes(self, spider: str | None = None, after_id: int = 0) -> Iterator[LoggedChange]:
        """The change log, oldest first."""
        ...

    def undelivered(self, spider: str) -> list[LoggedChange]:
        """Logged changes of *spider* not yet confirmed as exported, oldest first, whoever holds them."""
        ...

    def lease_owners(self, spider: str) -> set[str]:
        """Owners of unexpired leases on *spider*'s undelivered changes."""
        ...

    def claim_undelivered(self, spider: str, lease: Lease, *, dead_owners: Collection[str] = ()) -> list[LoggedChange]:
        """Atomically take the lease on every undelivered change of *spider* that nobody holds
        (no lease, an expired one, or one of *dead_owners*) and return them, oldest first."""
        ...

    def renew_leases(self, spider: str, lease: Lease) -> int:
        """Extend the lease of every undelivered change *lease.owner* holds; how many."""
        ...

    def release_leases(self, spider: str, owner: str, ids: Sequence[int] | None = None) -> None:
        """Let others claim *owner*'s undelivered changes (*ids*, or all) now."""
        ...

    def mark_delivered(self, spider: str, ids: Sequence[int], at: str) -> None:
        """Confirm that the changes *ids* were exported (a feed was closed cleanly with them)."""
        ...

    def validators(self, spider: str, url: str) -> list[HttpValidators]:
        """The stored validators of *url*, one per key whose last good observation came from it."""
        ...

    def forget_validators(self, spider: str, url: str, keep: Sequence[str]) -> None:
        """Drop the validators of *url* for keys other than *keep* (keys its latest full response
        no longer yields). Always safe outside an observation's transaction: fewer validators
        can only mean a full fetch."""
        ...


#: a store's options: the crawl's settings give defaults, a URI's query (``?synchronous=FULL``)
#: overrides them (values from a URI are strings; from settings, whatever the setting holds)
StoreOptions = Mapping[str, Any]


@runtime_checkable
class SnapshotStore(Protocol):
    """A store whose snapshots can be rewritten outside an observation (``changewatch noise``,
    ``-a forget=``: what is learned of a key's variation lives in its snapshot)."""

    def replace_snapshot(self, spider: str, key: str, expected_version: int, snapshot: bytes) -> int:
        """In one transaction, if *key* is at *expected_version*: replace its snapshot and bump its
        version (the key's times, counters and change log are untouched); the new version. Raises
        VersionConflict (writing nothing) when the key moved or is absent, StoreError."""
        ...


class StoreFactory(Protocol):
    """What a class named in ``CHANGEWATCH_STORE_SCHEMES`` provides (changewatch.store.store_from_uri)."""

    @classmethod
    def from_uri(cls, uri: str, options: StoreOptions) -> Store:
        """Build (not open) the store *uri* names. *options* are the crawl's defaults: one this
        backend does not know is ignored (it is another backend's); an option in the URI's query
        overrides its default, and an unknown or invalid one raises StoreError naming it, its value
        and what is accepted. Messages never quote a URI's password."""
        ...


@runtime_checkable
class ChangeLogStore(Protocol):
    """Optional: what ``changewatch changes`` needs besides :class:`Store`. The built-in stores
    have it; the command refuses, saying so, a store that has not."""

    def open_existing(self, *, upgrade: bool = False) -> None:
        """Connect to the store only if it exists, as :meth:`Store.open` otherwise does: raises
        :class:`NoSuchStore` (and creates nothing: no file, directory or schema) where there is
        none, StoreError for one that is not ours or of a newer schema, and :class:`OlderSchema`
        for an older one unless *upgrade* (then it is upgraded in place, as a crawl would)."""
        ...

    def query_changes(self, query: ChangeQuery, *, after_id: int = 0, batch_size: int = 1000) -> Iterator[LogEntry]:
        """The logged changes *query* selects with an id above *after_id*, oldest (lowest id)
        first. Filtered in the database and read *batch_size* rows at a time, each batch its own
        short read: memory stays flat whatever the log's size, and no lock is held between
        batches (a change logged meanwhile is listed if its id is still ahead)."""
        ...


@runtime_checkable
class TransferableStore(ChangeLogStore, Protocol):
    """Optional: what ``changewatch migrate`` needs to move a whole store to another backend."""

    def export_rows(self, batch_size: int = 1000) -> Iterator[TransferBatch]:
        """Every row of :data:`TRANSFER_TABLES`, table by table in that order (keys by spider and
        key, changes by id), in batches of at most *batch_size* rows, all read in one snapshot of
        the store (writers meanwhile are not seen)."""
        ...

    def import_rows(self, batches: Iterable[TransferBatch]) -> None:
        """Write *batches* (as :meth:`export_rows` yields them) into this store in one
        transaction, keeping change ids (later changes get higher ones). Raises
        :class:`StoreNotEmpty` when the store holds any key, validator or change, and StoreError
        (or whatever *batches* raises) when anything fails before the end; either way it writes
        nothing."""
        ...

    def counts(self) -> StoreCounts: ...


@runtime_checkable
class RoutingStore(Protocol):
    """Optional: what notifications and AI summaries need. The built-in stores have it; a crawl that
    notifies or summarises refuses, saying so, a store that has not.

    Notifications: :meth:`Store.commit` writes a pending notification per ``Outcome.notify``
    destination with the change-log row, in its transaction (a crash can lose neither without the
    other). Sending claims them (an owner and an expiry, as change-log leases: two processes never
    send one at the same time, a dead sender's claims expire) and settles them: sent, or failed
    with the attempts counted and the error kept; a failed one stays pending for the next try, until
    it is sent or discarded (recorded as such, by ``changewatch notify --discard``)."""

    def claim_notifications(self, destinations: Collection[str], owner: str, seconds: float, *,
                            spider: str | None = None, since: str | None = None,
                            limit: int = 1000) -> list[PendingNotification]:
        """Atomically claim, for *owner* and *seconds* of the store's clock, up to *limit* unsent
        notifications to *destinations* (of *spider*'s changes, fetched at *since* or later, when
        given) that nobody else holds; oldest change first."""
        ...

    def settle_notifications(self, destination: str, ids: Sequence[int], owner: str, *, sent_at: str | None,
                             error: str | None = None, attempts: int = 1) -> None:
        """Record the outcome of sending *ids* to *destination*: sent at *sent_at*, or (None) failed
        with *error*; the *attempts* it took (the first try and each retry) are counted and *owner*'s
        claim released either way."""
        ...

    def notification_states(self, *, spider: str | None = None, since: str | None = None,
                            pending: bool = True) -> list[NotificationState]:
        """Each destination's state of each change (only the pending ones, neither sent nor
        discarded, when *pending*), by change."""
        ...

    def discard_notifications(self, destination: str | None, at: str, *, before: str | None = None,
                              spider: str | None = None) -> int | None:
        """End the pending notifications to *destination* (its id or its shown form; None: every
        destination) of changes fetched before *before* (None: any), of *spider*'s changes when
        given: each is recorded as discarded at *at*, never claimed or sent again. How many;
        None when no notification of the store, in any state, goes to *destination*."""
        ...

    def record_summary(self, spider: str, change_id: int, summary: str) -> bool:
        """Write *summary* into the logged record of change *change_id* (its ``summary`` member), so
        that notifications and redeliveries carry it; False when there is no such change."""
        ...

    def add_spend(self, day: str, cost: float, budget: float | None, *, calls: int = 1) -> bool:
        """Add *cost* (and *calls*) to the spend of *day* (``2026-11-30``, UTC), atomically, unless
        that would take it past *budget* (None: no limit): then add nothing and return False.
        Every process sharing the store shares the day's spend."""
        ...

    def spend(self, day: str) -> tuple[float, int]:
        """The cost and the number of calls counted for *day*."""


@runtime_checkable
class MaintainedStore(Protocol):
    """Optional: what the adaptive schedule, evidence, retention and forgetting need besides
    :class:`Store` (the built-in stores have it). Every purge deletes at most *limit* rows, in one
    short transaction of its own, and says how many it deleted: the caller repeats it until
    fewer come back. None scans what it keeps: retention looks only at superseded versions (a
    version is superseded in the commit that writes its key's next one)."""

    def due_entries(self, spider: str, keys: Sequence[str]) -> Mapping[str, DueEntry]:
        """Those of *keys* that *spider* has, each with its last fetch, due time and interval, and
        when it was last listed without being fetched (one read of those keys' rows: a caller asks
        for a batch of the keys it requests, never every key of a large store)."""
        ...

    def bound_schedule(self, spider: str, minimum: float, maximum: float) -> int:
        """Move every key of *spider* whose due interval lies outside *minimum*..*maximum* seconds
        (set under other bounds) to the bound it crossed, its due time with it, in one statement;
        how many keys moved (none when the bounds did not change)."""
        ...

    def mark_listed(self, spider: str, keys: Sequence[str], at: str) -> None:
        """Note that *keys* are still watched (listed, though not fetched: not due) at *at*."""
        ...

    def forget(self, spider: str, before: str, limit: int, bodies_before: str) -> list[str]:
        """Delete every key of *spider* neither fetched nor listed since *before*: its state,
        schedule, validators and evidence (not its logged changes), and the bodies no version
        refers to any more that were not stored again since *bodies_before*. The keys forgotten."""
        ...

    def purge_evidence(self, spider: str, before: str, limit: int, bodies_before: str) -> int:
        """Delete *spider*'s kept versions fetched before *before* that a later version of their key
        superseded (never a key's latest: its next change is judged against it), and their bodies
        as :meth:`forget` does. How many versions."""
        ...

    def purge_changes(self, spider: str, before: str, limit: int) -> int:
        """Delete *spider*'s delivered changes fetched before *before* (never an undelivered one)."""
        ...

    def change_evidence(self, change_id: int) -> ChangeEvidence | None:
        """The change *change_id* with its kept versions; None when the log has no such change."""
        ...


@runtime_checkable
class PageSetStore(Protocol):
    """Optional: what site watches need (the built-in stores have it). A site watch's page set is
    rows of its key, one a page, written by :meth:`Store.commit` from ``Outcome.pages`` in the
    transaction of the observation that reports them, and read a batch at a time, so that a crawl
    never holds a large site's stored set whole."""

    def site_pages(self, spider: str, site: str, after: str = "",
                   limit: int = 1000) -> list[tuple[str, DueEntry | None]]:
        """Up to *limit* pages of the set of site watch *site* whose URL sorts after *after*, in
        code point order, each with its page key's due state (its last fetch, due time, interval,
        last listing; None: the key was never stored)."""
        ...

    def site_spec(self, spider: str, site: str) -> str | None:
        """How the stored set of site watch *site* was chosen (``PageSetChange.spec``); None: no set."""
        ...
