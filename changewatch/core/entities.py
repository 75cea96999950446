"""Entity sets: the things listed on a page, keyed by canonical URL."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from hashlib import blake2b
from typing import Any

from .fields import compare_fields, normalise_value, normalised_text
from .urls import canonical_url
from .values import normalise_fields

__all__ = ["Entity", "build_entities", "compare_entities", "duplicate_key"]


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


def duplicate_key(canon: str, norm: Mapping[str, Any]) -> str:
    """The key of one of several different entities that share the key *canon* on one page: the
    key with a hash of the entity's text (its normalised fields), so that each keeps its own
    identity from run to run. ``dup:<hash>:<key>``."""
    body = repr((canon, sorted((k, repr(v)) for k, v in norm.items())))
    return f"dup:{blake2b(body.encode('utf-8', 'surrogatepass'), digest_size=8).hexdigest()}:{canon}"


def _canonical_key(key: Any, fields: Mapping[str, Any], base_url: str | None, keep: tuple[str, ...],
                   drop: tuple[str, ...]) -> str:
    from urllib.parse import urljoin

    if key is None or not str(key).strip():
        return _fallback_key(fields)
    text = str(key).strip()
    try:
        if base_url and "://" not in text and not text.startswith(("urn:", "sku:", "id:")) and "/" in text:
            text = urljoin(base_url, text)
        return canonical_url(text, keep=keep, drop=drop) if "://" in text else text
    except ValueError:  # unparseable ("http://[oops"): one bad link must not sink the page
        return text


_SHAPE = 'a list of entities, each {"key": …, "fields": {…}}'


def _check_shape(raw: Any) -> list[Mapping[str, Any]]:
    """*raw* as a list, or ValueError unless it is a list (any iterable but a string or a
    mapping) of mappings whose ``fields`` is a mapping (or missing)."""
    if isinstance(raw, Mapping | str | bytes) or not isinstance(raw, Iterable):
        raise ValueError(f"expected {_SHAPE}, not a {type(raw).__name__}")
    items = list(raw)
    for item in items:
        if not isinstance(item, Mapping):
            raise ValueError(f"expected {_SHAPE}, not a list holding a {type(item).__name__} ({str(item)[:60]!r})")
        if item.get("fields") is not None and not isinstance(item["fields"], Mapping):
            raise ValueError(f"expected {_SHAPE}: the fields of {str(item.get('key'))[:60]!r} are a "
                             f"{type(item['fields']).__name__}, not a mapping of name → value")
    return items


def build_entities(raw: Iterable[Mapping[str, Any]], *, base_url: str | None = None,
                   keep_params: Iterable[str] = (), drop_params: Iterable[str] = (),
                   kinds: Mapping[str, str] | None = None) -> dict[str, Entity]:
    """Entities keyed by canonical URL (relative keys joined to *base_url*), in page order.
    Fields are normalised by their *kinds*.

    Several entities with one key (a sponsored copy of a listing at the top of the list, the same
    link twice) are told apart by their text: the same entity repeated is one (the others are
    duplicates, counted by the comparison); different ones are each keyed by the key and their
    normalised fields (:func:`duplicate_key`), so a new one is ``added``, never a ``changed`` of
    the entity that had the key. Linear in the number of entities. ValueError for *raw* of
    another shape (a spider's mistake: a dict of entities by key, an entity that is a string)."""
    raw = _check_shape(raw)
    keep, drop = tuple(keep_params), tuple(drop_params)
    read: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    seen: dict[str, set[str] | None] = {}  # key → the texts of its entities (None: one so far)
    canonical: dict[str, str] = {}  # a key written again (a repeated entity) is canonicalised once
    for item in raw:
        fields = dict(item.get("fields") or {})
        key = item.get("key")
        if key is None or not str(key).strip():
            canon = _canonical_key(None, fields, base_url, keep, drop)
        else:
            known = canonical.get(str(key))
            canon = known if known is not None else _canonical_key(key, fields, base_url, keep, drop)
            canonical[str(key)] = canon
        norm = {name: normalised_text(value) for name, value in normalise_fields(fields, kinds).items()}
        read.append((canon, fields, norm))
        seen[canon] = None if canon not in seen else (seen[canon] or set())
    out: dict[str, Entity] = {}
    shared = {canon for canon, texts in seen.items() if texts is not None}
    texts: dict[str, set[str]] = {canon: set() for canon in shared}
    for canon, _, norm in read:
        if canon in shared:
            texts[canon].add(duplicate_key(canon, norm))
    for canon, fields, norm in read:
        key = canon if canon not in shared or len(texts[canon]) == 1 else duplicate_key(canon, norm)
        if key not in out:
            out[key] = Entity(key, fields, norm)
    return out


def _matched(old: Mapping[str, Entity], new: Mapping[str, Entity]) -> dict[str, str]:
    """Keys of *new* that are, in *old*, the same entity under its plain key: an entity that
    shares its key now (or did, and no longer does) is the one whose text is the same."""
    renamed: dict[str, str] = {}
    for key, entity in old.items():
        if key not in new and not key.startswith(("dup:", "content:")):
            dup = duplicate_key(key, entity.norm)
            if dup in new and dup not in old:
                renamed[dup] = key
    return renamed


def _renamed(entities: Mapping[str, Entity], names: Mapping[str, str]) -> dict[str, Entity]:
    if not names:
        return dict(entities)
    return {names.get(k, k): Entity(names[k], e.fields, e.norm) if k in names else e for k, e in entities.items()}


def compare_entities(old: Mapping[str, Entity], new: Mapping[str, Entity]) -> tuple[
        list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(added, removed, changed) between two entity sets, in page order. An entity kept under a
    plain key on one side and under its :func:`duplicate_key` on the other (another entity came
    to share its key, or stopped) is the same entity."""
    new = _renamed(new, _matched(old, new))
    old = _renamed(old, _matched(new, old))
    added = [{"key": k, "fields": e.fields} for k, e in new.items() if k not in old]
    removed = [{"key": k, "fields": e.fields} for k, e in old.items() if k not in new]
    changed = []
    for k, e in new.items():
        if k in old:
            diff = compare_fields(old[k].norm, e.norm, old[k].fields, e.fields)
            if diff:
                changed.append({"key": k, "changes": diff})
    return added, removed, changed
