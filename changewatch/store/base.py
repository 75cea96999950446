"""The store contract: what every backend keeps, and the one atomic operation it offers."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..core.compare import Kind, Snapshot
from ..core.entities import Entity
from ..core.validators import HttpValidators

__all__ = ["HttpValidators", "LoggedChange", "Outcome", "Store", "StoreError", "StoredState", "snapshot_from_columns",
           "snapshot_to_columns"]


class StoreError(Exception):
    """The store cannot be opened or used; the message says which file and why."""


@dataclass(slots=True)
class StoredState:
    """Everything the store keeps for one key."""

    key: str
    url: str
    snapshot: Snapshot
    counters: dict[str, int] = field(default_factory=dict)
    first_seen: str | None = None
    last_seen: str | None = None
    last_good: str | None = None
    last_changed: str | None = None
    last_error: str | None = None
    error_streak: int = 0


@dataclass(slots=True)
class Outcome:
    """What one observation does to the store, decided from the previous state."""

    kind: Kind
    url: str
    observed_at: str
    snapshot: Snapshot | None = None  # the new baseline; None keeps the previous one
    record: dict[str, Any] | None = None  # appended to the change log when set
    error: str | None = None
    #: the validators of the full response this observation came from: they replace the key's
    #: stored ones in the same transaction (so a crash before the commit never leaves validators
    #: for a page whose observation was lost). None leaves them as they are.
    http: HttpValidators | None = None
    #: a 304 answered the conditional request for ``url``: count it against the safety net
    not_modified: bool = False
    change_id: int | None = None  # set by the store once the record is logged


@dataclass(frozen=True, slots=True)
class LoggedChange:
    id: int
    spider: str
    key: str
    kind: str
    observed_at: str
    record: dict[str, Any]


Decide = Callable[[StoredState | None], Outcome]


@runtime_checkable
class Store(Protocol):
    """A keyed store, namespaced per spider. Implementations are used from one thread at a time."""

    @property
    def fast_commits(self) -> bool:
        """True when a commit never waits on the disk or the network (no fsync, local file):
        the crawl then commits on the reactor thread instead of handing off to a thread."""
        ...

    def open(self) -> None: ...

    def close(self) -> None: ...

    def get(self, spider: str, key: str) -> StoredState | None: ...

    def apply(self, spider: str, key: str, decide: Decide) -> Outcome:
        """Atomically: read the key's state, call *decide* with it, write the new state and
        the change record (if any). Two writers of one key never interleave."""
        ...

    def changes(self, spider: str | None = None, after_id: int = 0) -> Iterator[LoggedChange]: ...

    def undelivered(self, spider: str) -> list[LoggedChange]:
        """Logged changes of *spider* not yet confirmed as exported, oldest first."""
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

    def keys(self, spider: str) -> list[str]: ...


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


def snapshot_to_columns(s: Snapshot) -> dict[str, Any]:
    return {
        "fields": None if s.norm_fields is None else _dumps({"raw": s.fields or {}, "norm": s.norm_fields}),
        "entities": None if s.entities is None else _dumps({k: e.to_json() for k, e in s.entities.items()}),
        "text": None if s.text is None else zlib.compress(s.text.encode("utf-8", "surrogatepass"), 6),
        "raw_hash": s.raw_hash,
        "content_hash": s.content_hash,
        # two's complement: SQLite and PostgreSQL integers are signed 64-bit
        "fingerprint": None if s.fingerprint is None else s.fingerprint - (1 << 64) * (s.fingerprint >> 63),
    }


def snapshot_from_columns(row: dict[str, Any]) -> Snapshot:
    fields = json.loads(row["fields"]) if row["fields"] else None
    entities = json.loads(row["entities"]) if row["entities"] else None
    fp = row["fingerprint"]
    return Snapshot(
        fields=fields["raw"] if fields is not None else None,
        norm_fields=fields["norm"] if fields is not None else None,
        text=zlib.decompress(row["text"]).decode("utf-8", "surrogatepass") if row["text"] is not None else None,
        raw_hash=row["raw_hash"],
        content_hash=row["content_hash"],
        fingerprint=None if fp is None else fp & ((1 << 64) - 1),
        entities=None if entities is None else {k: Entity.from_json(k, v) for k, v in entities.items()},
    )


dumps = _dumps
