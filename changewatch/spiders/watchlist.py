"""The watchlist of the generic ``watch`` spider (docs/watchlist.md): load and validate."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from ..core.normalise import RegionError, check_region
from ..core.reprs import short_repr
from ..core.urls import canonical_url
from ..core.values import FIELD_KINDS
from ..extract.selectors import SelectorError, check_selector
from ..middlewares.vantage import VANTAGE_OPTIONS, Vantage, parse_vantage

__all__ = ["INLINE", "EntitySpec", "JsonLdSpec", "Watch", "WatchlistError", "load_watchlist", "parse_watchlist",
           "parse_watchlist_text"]

WATCH_OPTIONS = frozenset(
    {"url", "key", "region", "threshold", "sort_lines", "jsonld", "fields", "entities", "keep_params", "drop_params",
     "kinds", "conditional", *VANTAGE_OPTIONS}
)
DEFAULT_OPTIONS = WATCH_OPTIONS - {"url", "key"}
#: how errors name a watchlist given inline (``-a watchlist='{"watches": [...]}'``)
INLINE = "(inline JSON)"


class WatchlistError(ValueError):
    """The watchlist cannot be used; the message names the file, the watch and the problem."""


@dataclass(frozen=True, slots=True)
class JsonLdSpec:
    types: tuple[str, ...]
    fields: tuple[str, ...]
    #: a path in each node: every node of the types is an entity under this key
    key: str | None = None


@dataclass(frozen=True, slots=True)
class EntitySpec:
    selector: str
    key: str
    fields: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Watch:
    url: str
    key: str
    region: str | None = None
    threshold: int | None = None
    sort_lines: bool = False
    jsonld: JsonLdSpec | None = None
    fields: dict[str, str] = field(default_factory=dict)
    entities: EntitySpec | None = None
    keep_params: tuple[str, ...] = ()
    drop_params: tuple[str, ...] = ()
    kinds: dict[str, str] = field(default_factory=dict)
    vantage: Vantage = field(default_factory=Vantage)
    conditional: bool = True

    def spec(self) -> str:
        """A digest of how this watch fetches and reads its page: when it changes (a new field,
        another region, another vantage point), an unchanged page must still be fetched in full
        once, not answered with a 304."""
        parts = (self.region, self.sort_lines, self.jsonld, sorted(self.fields.items()), self.entities,
                 self.keep_params, self.drop_params, sorted(self.kinds.items()), self.vantage)
        return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:16]

    @property
    def compares_text(self) -> bool:
        """A watch with jsonld, fields or entities is compared by those; otherwise by its text."""
        return self.jsonld is None and not self.fields and self.entities is None

    def options(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "sort_lines": self.sort_lines,
                "keep_params": list(self.keep_params), "drop_params": list(self.drop_params)}


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise ValueError(f"{what} must be a string or a non-empty list of strings, not {short_repr(value)}")


def _selectors(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not value:
        raise ValueError(f"{what} must be a mapping of name: selector, not {short_repr(value)}")
    for name, query in value.items():
        try:
            check_selector(query)
        except SelectorError as exc:
            raise ValueError(f"{what}.{name}: {exc}") from None
    return {str(k): v for k, v in value.items()}


def _jsonld(value: Any) -> JsonLdSpec:
    if not isinstance(value, Mapping) or set(value) - {"type", "fields", "key"} or "fields" not in value:
        raise ValueError(f"jsonld must be a mapping with 'type', 'fields' and optionally 'key', "
                         f"not {short_repr(value)}")
    types = _strings(value.get("type", []) or [], "jsonld.type") if value.get("type") else ()
    key = value.get("key")
    if key is not None and (not isinstance(key, str) or not key.strip()):
        raise ValueError(f"jsonld.key must be a dotted path such as 'sku' or 'url', not {short_repr(key)}")
    if key is not None and not types:
        raise ValueError("jsonld.key needs a jsonld.type: every node of that type is one entity")
    return JsonLdSpec(types, _strings(value["fields"], "jsonld.fields"), key)


def _kinds(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping) or not value:
        raise ValueError(f"kinds must be a mapping of field name: kind, not {short_repr(value)}")
    for name, kind in value.items():
        if kind not in FIELD_KINDS:
            raise ValueError(f"kinds.{name}: unknown kind {kind!r}; known: {', '.join(sorted(FIELD_KINDS))}")
    return {str(k): str(v) for k, v in value.items()}


def _entities(value: Any) -> EntitySpec:
    if not isinstance(value, Mapping) or set(value) - {"selector", "key", "fields"}:
        raise ValueError(f"entities must be a mapping with selector, key and fields, not {short_repr(value)}")
    for part in ("selector", "key"):
        if part not in value:
            raise ValueError(f"entities.{part} is required")
        try:
            check_selector(value[part])
        except SelectorError as exc:
            raise ValueError(f"entities.{part}: {exc}") from None
    fields = _selectors(value["fields"], "entities.fields") if value.get("fields") else {}
    return EntitySpec(value["selector"], value["key"], fields)


def _url(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("url is required")
    url = value.strip()
    if any(char.isspace() for char in url):  # it would fail only when fetched, if at all
        raise ValueError(f"url must not contain spaces (encode them as %20): {short_repr(value)}")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"url must be an absolute http(s) URL, not {short_repr(value)}")
    return url


def _watch(raw: Mapping[str, Any]) -> Watch:
    unknown = set(raw) - WATCH_OPTIONS
    if unknown:
        raise ValueError(f"unknown option(s) {', '.join(sorted(map(str, unknown)))}; "
                         f"known: {', '.join(sorted(WATCH_OPTIONS))}")
    url = _url(raw.get("url"))
    region = raw.get("region")
    if region is not None:
        if not isinstance(region, str) or not region.strip():
            raise ValueError(f"region must be a CSS selector string, not {short_repr(region)}")
        try:
            check_region(region)
        except RegionError as exc:
            raise ValueError(str(exc)) from None
    threshold = raw.get("threshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, int)
                                  or not 0 <= threshold <= 64):
        raise ValueError(f"threshold must be a whole number of bits from 0 to 64, not {short_repr(threshold)}")
    sort_lines = raw.get("sort_lines", False)
    if not isinstance(sort_lines, bool):
        raise ValueError(f"sort_lines must be true or false, not {short_repr(sort_lines)}")
    key = raw.get("key")
    if key is not None and (not isinstance(key, str | int) or isinstance(key, bool) or not str(key).strip()):
        raise ValueError(f"key must be a non-empty string, not {short_repr(key)}")
    conditional = raw.get("conditional", True)
    if not isinstance(conditional, bool):
        raise ValueError(f"conditional must be true or false, not {short_repr(conditional)}")
    keep = _strings(raw["keep_params"], "keep_params") if raw.get("keep_params") else ()
    drop = _strings(raw["drop_params"], "drop_params") if raw.get("drop_params") else ()
    kinds = _kinds(raw["kinds"]) if raw.get("kinds") is not None else {}
    return Watch(
        url=url,
        key=str(key).strip() if key is not None else canonical_url(url, keep=keep, drop=drop),
        region=region, threshold=threshold, sort_lines=sort_lines,
        jsonld=_jsonld(raw["jsonld"]) if raw.get("jsonld") is not None else None,
        fields=_selectors(raw["fields"], "fields") if raw.get("fields") is not None else {},
        entities=_entities(raw["entities"]) if raw.get("entities") is not None else None,
        keep_params=keep, drop_params=drop, kinds=kinds, vantage=parse_vantage(raw), conditional=conditional,
    )


def _describe(index: int, raw: Any) -> str:
    label = raw.get("key") or raw.get("url") if isinstance(raw, Mapping) else None
    if label is not None and not isinstance(label, str):
        label = short_repr(label)
    return f"watch #{index + 1}" + (f" ({label})" if label else "")


def parse_watchlist(data: Any, source: str = "watchlist") -> list[Watch]:
    """Validate a loaded watchlist document (any value) into watches. Raises
    :class:`WatchlistError` naming the problem, and nothing else."""
    if not isinstance(data, Mapping):
        raise WatchlistError(f"{source}: a watchlist must be a mapping with a 'watches' list, "
                             f"not {type(data).__name__}")
    unknown = set(data) - {"defaults", "watches"}
    if unknown:
        raise WatchlistError(f"{source}: unknown top-level option(s) {', '.join(sorted(map(str, unknown)))}")
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, Mapping) or set(defaults) - DEFAULT_OPTIONS:
        raise WatchlistError(f"{source}: defaults must be a mapping of watch options other than url and key")
    watches_raw = data.get("watches")
    if not isinstance(watches_raw, list) or not watches_raw:
        raise WatchlistError(f"{source}: 'watches' must be a non-empty list")
    watches: list[Watch] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(watches_raw):
        if not isinstance(raw, Mapping):
            raise WatchlistError(f"{source}: {_describe(i, raw)}: must be a mapping, not {type(raw).__name__}")
        try:
            watch = _watch({**defaults, **raw})
        except ValueError as exc:
            raise WatchlistError(f"{source}: {_describe(i, raw)}: {exc}") from None
        if watch.key in seen:
            raise WatchlistError(f"{source}: {_describe(i, raw)}: duplicate key {watch.key!r} "
                                 f"(also watch #{seen[watch.key] + 1}); give one of them its own key")
        seen[watch.key] = i
        watches.append(watch)
    return watches


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a mapping that names a key twice: the last one silently won
    (a watch's second `fields:` replaced its first)."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # "<<: *defaults": keys given next to it override merged ones, as YAML means
        key = loader.construct_object(key_node, deep=deep)
        try:
            duplicate = key in seen
        except TypeError:  # an unhashable key: the constructor below says so
            duplicate = False
        if duplicate:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark, f"found duplicate key {key!r}", key_node.start_mark)
        if not isinstance(key, list | dict):
            seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


def _unique_json(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def load_watchlist(path: str | Path) -> list[Watch]:
    """Read a YAML or JSON watchlist file (JSON when its name ends in ``.json``). Raises
    :class:`WatchlistError` (unreadable, not YAML/JSON, nested too deeply, or invalid) and
    nothing else."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WatchlistError(f"cannot read watchlist {p}: {exc}") from exc
    return parse_watchlist_text(text, str(p), is_json=p.suffix.lower() == ".json")


def parse_watchlist_text(text: str, source: str, *, is_json: bool) -> list[Watch]:
    """A watchlist document's text, JSON or YAML, validated; *source* names it in errors.
    Raises :class:`WatchlistError` and nothing else."""
    try:
        data = (json.loads(text, object_pairs_hook=_unique_json) if is_json
                else yaml.load(text, Loader=_UniqueKeyLoader))  # a SafeLoader that refuses duplicate keys
    except (ValueError, yaml.YAMLError) as exc:
        raise WatchlistError(f"watchlist {source} is not valid {'JSON' if is_json else 'YAML'}: {exc}") from exc
    except RecursionError:
        raise WatchlistError(f"watchlist {source} is nested too deeply to be a watchlist") from None
    if is_json and isinstance(data, list) and source == INLINE:
        data = {"watches": data}  # -a watchlist='[{"url": ...}]': the watches alone
    return parse_watchlist(data, source)
