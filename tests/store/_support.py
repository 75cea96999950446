"""Snapshots and outcomes the store tests commit."""

from __future__ import annotations

from typing import Any

from changewatch.core.comparisons import Kind, load_comparisons
from changewatch.core.comparisons.content import page_text
from changewatch.core.comparisons.content_part import ContentPart
from changewatch.core.comparisons.entities import EntitiesPart
from changewatch.core.comparisons.fields import FieldsPart
from changewatch.core.entities import build_entities
from changewatch.core.snapshot import Snapshot
from changewatch.store import HttpValidators, Lease, Outcome, Store

#: fetch times well before the test machine's clock: never clamped
T0, T1, T2, T3 = "2024-05-01T00:00:00Z", "2024-05-01T01:00:00Z", "2024-05-01T02:00:00Z", "2024-05-01T03:00:00Z"
URL = "https://s.example/p"
#: a fingerprint with the top bit set: stored as a signed 64-bit integer somewhere along the way
FINGERPRINT = (1 << 63) | 12345


def full_snapshot() -> Snapshot:
    """A snapshot with every built-in part: fields, entities and content (text non-ASCII)."""
    visible = page_text("<p>Hello   World</p><p>second line é</p>", None, None, False)
    part = ContentPart.of(visible)
    content = ContentPart(raw_hash=part.raw_hash, content_hash=part.content_hash, fingerprint=FINGERPRINT,
                          length=part.length, raw=part.raw)
    entities = build_entities([{"key": "/a?utm_source=x", "fields": {"t": "A"}}], base_url="https://s.example/")
    return Snapshot({"fields": FieldsPart({"price": "89.00"}, {"price": "89"}), "entities": EntitiesPart(entities),
                     "content": content})


def encoded(snapshot: Snapshot | None = None) -> bytes:
    return (snapshot or full_snapshot()).encode(load_comparisons())


def decoded(data: bytes) -> Snapshot:
    return Snapshot.decode(data, load_comparisons())


def outcome(kind: Kind, snapshot: bytes | None = None, record: dict[str, Any] | None = None, *, at: str = T0,
            error: str | None = None, url: str = URL) -> Outcome:
    return Outcome(kind, url, at, snapshot=snapshot, record=record, error=error)


def with_http(kind: Kind, url: str, etag: str | None, *, not_modified: bool = False, snapshot: bytes | None = None,
              at: str = T0, render: str | None = None, links: str | None = None) -> Outcome:
    http = None if not_modified else HttpValidators(url=url, key="", etag=etag, size=1234, spec="s1", render=render,
                                                    links=links)
    return Outcome(kind, url, at, snapshot=snapshot, http=http, not_modified=not_modified,
                   record={"kind": kind.value} if kind.reported else None)


#: (spider, key, kind, fetch time) of each change logged by :func:`log_changes`, in id order
LOGGED = [("shop", "a", Kind.FIELD, T0), ("shop", "b", Kind.CONTENT, T1), ("news", "a", Kind.ERROR, T1),
          ("shop", "a", Kind.ENTITIES, T2), ("news", "c", Kind.FIELD, T3), ("shop", "b", Kind.ERROR, T3)]


def log_changes(store: Store) -> list[int]:
    """Log :data:`LOGGED`; deliver the first two. The change ids."""
    versions: dict[tuple[str, str], int] = {}
    ids = []
    for n, (spider, key, kind, at) in enumerate(LOGGED):
        version = versions.get((spider, key))
        error = "blocked" if kind is Kind.ERROR else None
        committed = store.commit(spider, key, version, outcome(kind, None if error else encoded(), {"n": n}, at=at,
                                                               error=error), lease=Lease("owner", 60.0))
        versions[(spider, key)] = committed.version
        assert committed.change_id is not None
        ids.append(committed.change_id)
    store.mark_delivered("shop", ids[:2], "2024-06-01T00:00:00Z")
    return ids
