"""Store schema 2 kept a column per comparison; schema 3 keeps one snapshot value. This turns a
schema-2 row's columns into that value, for the migration (run once, when a store is opened)."""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from typing import Any

from ..core.comparisons import load_comparisons
from ..core.comparisons.content_part import ContentPart
from ..core.comparisons.entities import EntitiesPart
from ..core.comparisons.fields import FieldsPart
from ..core.entities import Entity
from ..core.snapshot import Snapshot

__all__ = ["snapshot_from_v2_columns"]


def snapshot_from_v2_columns(row: Mapping[str, Any]) -> bytes | None:
    """The encoded snapshot of a schema-2 ``observations`` row (columns ``fields``, ``entities``,
    ``text``, ``raw_hash``, ``content_hash``, ``fingerprint``); None when it kept none (a key
    seen only through errors)."""
    parts: dict[str, Any] = {}
    if row.get("fields"):
        fields = json.loads(row["fields"])
        parts["fields"] = FieldsPart(dict(fields.get("raw") or {}), dict(fields.get("norm") or {}))
    if row.get("entities"):
        entities = json.loads(row["entities"])
        parts["entities"] = EntitiesPart({k: Entity.from_json(k, v) for k, v in entities.items()})
    if row.get("text") is not None and row.get("content_hash") is not None:
        compressed = bytes(row["text"])
        text = zlib.decompress(compressed).decode("utf-8", "surrogatepass")
        parts["content"] = ContentPart(raw_hash=row["raw_hash"], content_hash=row["content_hash"],
                                       fingerprint=int(row["fingerprint"] or 0) & ((1 << 64) - 1),
                                       length=len(text), raw=text, raw_compressed=compressed)
    if not parts:
        return None
    return Snapshot(parts).encode(load_comparisons())
