"""Learned noise of a key's fields and entity set, from a reported change a user marks as noise
(``changewatch noise``): a field that changed is volatile from then on (a change of another
field is still reported); of an entity set, the fields of its entities that changed are volatile,
and where entities came and went (the folder of their keys, or the keys themselves when they
share no folder) their churn is noise, while an entity added or removed elsewhere is still a
change. Kept in the key's fields and entities parts. Nothing here imports Scrapy."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from .comparisons.entities import EntitiesPart
from .comparisons.fields import FieldsPart

__all__ = ["MAX_CHURN", "learn_entities", "learn_fields"]

MAX_CHURN = 50
MAX_VOLATILE = 200


def learn_fields(part: FieldsPart, record: Mapping[str, Any]) -> FieldsPart:
    """*part* with the fields a ``field`` change record changed learned as volatile."""
    changes = record.get("changes")
    names = set(changes) if isinstance(changes, Mapping) else set()
    return dataclasses.replace(part, volatile=frozenset(sorted(part.volatile | names)[:MAX_VOLATILE]))


def learn_entities(part: EntitiesPart, record: Mapping[str, Any]) -> EntitiesPart:
    """*part* with an ``entities`` change record's variation learned: the fields its changed
    entities changed, and where its added and removed entities came and went."""
    def entries(name: str) -> list[Mapping[str, Any]]:
        value = record.get(name)
        return [e for e in value if isinstance(e, Mapping)] if isinstance(value, list) else []

    names = {str(n) for e in entries("changed") if isinstance(e.get("changes"), Mapping) for n in e["changes"]}
    keys = [str(e["key"]) for e in entries("added") + entries("removed") if "key" in e]
    churn = tuple(dict.fromkeys((*part.churn, *_places(keys))))[-MAX_CHURN:]
    return dataclasses.replace(part, churn=churn,
                               volatile=frozenset(sorted(part.volatile | names)[:MAX_VOLATILE]))


def _places(keys: Sequence[str]) -> list[str]:
    """Where entities with these keys come and go: their common folder, if deeper than the
    site's root; else each key itself."""
    if not keys:
        return []
    folders = {key.rsplit("/", 1)[0] + "/" for key in keys}
    if len(folders) == 1:
        folder = folders.pop()
        path = urlsplit(folder).path if "://" in folder else folder
        if path.strip("/"):
            return [folder]
    return list(dict.fromkeys(keys))
