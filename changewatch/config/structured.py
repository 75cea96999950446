"""Strict parsers for the settings whose values are lists or mappings (a list or a comma-separated
string, a dict or a JSON object in a string): each says in words what it accepts, or raises
:class:`~changewatch.config.parsers.BadValue`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from .parsers import DOTTED, BadValue

__all__ = ["DottedPathTable", "JsonObject", "ListOf", "Routes", "json_mapping"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ListOf(Generic[T]):
    """A list (or tuple) of strings, or one string split on commas (``-s NAME=a,b``); empty
    entries are dropped; *item* parses each entry (ValueError: the entry is wrong)."""

    item: Callable[[str], T]
    what: str

    @property
    def accepts(self) -> str:
        return f"{self.what}, as a list or a comma-separated string"

    def __call__(self, raw: Any) -> tuple[T, ...]:
        if isinstance(raw, str):
            entries: list[Any] = raw.split(",")
        elif isinstance(raw, list | tuple):
            entries = list(raw)
        else:
            raise BadValue()
        parsed = []
        for entry in entries:
            if not isinstance(entry, str):
                raise BadValue(f"{entry!r} is not a string")
            if entry.strip():
                try:
                    parsed.append(self.item(entry.strip()))
                except ValueError as exc:
                    raise BadValue(str(exc) or f"{entry.strip()!r} is not valid") from None
        return tuple(parsed)


def json_mapping(raw: Any) -> Mapping[str, Any]:
    """A mapping setting's value: a dict, or a JSON object in a string (``-s NAME='{...}'``);
    None and an empty string are an empty mapping."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            raise BadValue(f"not valid JSON: {exc}") from None
    if not isinstance(raw, Mapping):
        raise BadValue()
    return raw


@dataclass(frozen=True, slots=True)
class DottedPathTable:
    """Name → dotted path of a class, merged over *builtin* (as Scrapy's ``FEED_EXPORTERS``).
    Only the shape is checked here; the classes are imported when used. *removable*: a value
    of None removes a name."""

    builtin: Mapping[str, str]
    key_pattern: re.Pattern[str]
    key_what: str
    removable: bool = False
    lower_keys: bool = False

    @property
    def accepts(self) -> str:
        values = "a dotted path such as mypackage.module.Class" + (" (or null to remove a built-in)"
                                                                   if self.removable else "")
        return f"a dict (or a JSON object) of {self.key_what} to {values}"

    def __call__(self, raw: Any) -> Mapping[str, str]:
        table = dict(self.builtin)
        for key, value in json_mapping(raw).items():
            if not isinstance(key, str) or not self.key_pattern.fullmatch(key):
                raise BadValue(f"{key!r} is not {self.key_what}")
            name = key.lower() if self.lower_keys else key
            if value is None and self.removable:
                table.pop(name, None)
            elif isinstance(value, str) and DOTTED.fullmatch(value.strip()):
                table[name] = value.strip()
            else:
                raise BadValue(f"{key}: {value!r} is not a dotted path")
        return MappingProxyType(table)


@dataclass(frozen=True, slots=True)
class JsonObject:
    """A dict, or a JSON object in a string; None and an empty string are an empty one. What its
    members mean is checked by the feature that reads them (the vantage middleware)."""

    what: str

    @property
    def accepts(self) -> str:
        return f"a dict (or a JSON object) with {self.what}"

    def __call__(self, raw: Any) -> Mapping[str, Any]:
        return MappingProxyType(dict(json_mapping(raw)))


def _strings(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, list | tuple) and all(isinstance(v, str) for v in value))


@dataclass(frozen=True, slots=True)
class Routes:
    """Strings (a list, or one string), or a dict of names to strings; also as JSON. Its shape
    only: what each string and name must be is the feature's to check (notify: Apprise URLs)."""

    what: str

    @property
    def accepts(self) -> str:
        return self.what

    def __call__(self, raw: Any) -> Any:
        if isinstance(raw, str) and raw.strip()[:1] in ("[", "{"):
            try:
                raw = json.loads(raw)
            except ValueError as exc:
                raise BadValue(f"not valid JSON: {exc}") from None
        if raw is None or _strings(raw):
            return tuple(raw) if isinstance(raw, list) else raw
        if isinstance(raw, Mapping) and all(isinstance(k, str) and _strings(v) for k, v in raw.items()):
            return MappingProxyType({k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()})
        raise BadValue("not strings, nor a dict of them")
