"""Entity sets: the things listed on a page, keyed by canonical URL."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from hashlib import blake2b
from typing import Any

from .fields import compare_fields, normalise_value
from .urls import canonical_url
from .values import normalise_fields

__all__ = ["Entity", "build_entities", "compare_entities"]


@dataclass(frozen=True, slots=True)
class Entity:
    key: str
    fields: dict[str, Any]
    norm: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"fields": self.fields, "norm": self.norm}

    @classmethod
    def from_json(cls, key: str, data: Mapping[str, Any]) -> Entity:
        return cls(key, dict(data.get("fields") or {}), dict(data.get("norm") or {}))


def _fallback_key(fields: Mapping[str, Any]) -> str:
    # No URL: identify by content. A changed entity then shows as removed + added: a duplicate
    # alert, which we prefer to a missed one.
    body = repr(sorted((k, repr(normalise_value(v))) for k, v in fields.items()))
    return "content:" + blake2b(body.encode(), digest_size=8).hexdigest()


def build_entities(raw: Iterable[Mapping[str, Any]], *, base_url: str | None = None,
                   keep_params: Iterable[str] = (), drop_params: Iterable[str] = (),
                   kinds: Mapping[str, str] | None = None) -> dict[str, Entity]:
    """Entities keyed by canonical URL (relative keys joined to *base_url*); the first of
    several entities with one key wins. Fields are normalised by their *kinds*."""
    from urllib.parse import urljoin

    keep, drop = tuple(keep_params), tuple(drop_params)
    out: dict[str, Entity] = {}
    for item in raw:
        fields = dict(item.get("fields") or {})
        key = item.get("key")
        if key is None or not str(key).strip():
            canon = _fallback_key(fields)
        else:
            text = str(key).strip()
            try:
                if base_url and "://" not in text and not text.startswith(("urn:", "sku:", "id:")) and "/" in text:
                    text = urljoin(base_url, text)
                canon = canonical_url(text, keep=keep, drop=drop) if "://" in text else text
            except ValueError:  # unparseable ("http://[oops"): one bad link must not sink the page
                canon = text
        if canon not in out:
            out[canon] = Entity(canon, fields, normalise_fields(fields, kinds))
    return out


def compare_entities(old: Mapping[str, Entity], new: Mapping[str, Entity]) -> tuple[
        list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(added, removed, changed) between two entity sets, in page order."""
    added = [{"key": k, "fields": e.fields} for k, e in new.items() if k not in old]
    removed = [{"key": k, "fields": e.fields} for k, e in old.items() if k not in new]
    changed = []
    for k, e in new.items():
        if k in old:
            diff = compare_fields(old[k].norm, e.norm, old[k].fields, e.fields)
            if diff:
                changed.append({"key": k, "changes": diff})
    return added, removed, changed
