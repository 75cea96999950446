"""The comparisons, registered by name (as Scrapy's FEED_EXPORTERS map names to classes).

A new kind of comparison is one module with a class implementing
:class:`~changewatch.core.comparisons.base.Comparison`, registered here or in the
``CHANGEWATCH_COMPARISONS`` setting (name → dotted path, merged over these; None removes one).
The order of the table is the order in which comparisons digest and check an observation.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from importlib import import_module
from typing import Any

from .base import CompareContext, Comparison, Difference, Kind, Status, Unobservable, respecified, spec_digest

__all__ = ["BUILTIN_COMPARISONS", "CompareContext", "Comparison", "ComparisonError", "Difference", "Kind", "Status",
           "Unobservable", "load_comparisons", "respecified", "spec_digest"]

BUILTIN_COMPARISONS: dict[str, str] = {
    "content": "changewatch.core.comparisons.content.ContentComparison",
    "fields": "changewatch.core.comparisons.fields.FieldsComparison",
    "entities": "changewatch.core.comparisons.entities.EntitiesComparison",
    "bytes": "changewatch.core.comparisons.bytes.BytesComparison",
}

_REQUIRED = ("digest", "check", "compare", "counters", "encode", "decode")


class ComparisonError(ValueError):
    """A registered comparison cannot be loaded or does not implement the interface."""


@lru_cache(maxsize=64)
def _load(name: str, path: str) -> Comparison:
    module, _, attr = path.rpartition(".")
    try:
        cls: Any = getattr(import_module(module), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ComparisonError(f"comparison {name!r}: cannot import {path!r}: {exc}") from exc
    missing = [m for m in _REQUIRED if not callable(getattr(cls, m, None))]
    if missing:
        raise ComparisonError(f"comparison {name!r} ({path}) lacks {', '.join(missing)}")
    if getattr(cls, "name", None) != name:
        raise ComparisonError(f"comparison {path} is named {getattr(cls, 'name', None)!r}, registered as {name!r}")
    if not isinstance(getattr(cls, "kind", None), Kind) or not isinstance(getattr(cls, "rank", None), int):
        raise ComparisonError(f"comparison {name!r} ({path}) needs a Kind `kind` and an int `rank`")
    instance: Comparison = cls()
    return instance


def load_comparisons(table: Mapping[str, str | None] | None = None, *, merge: bool = True) -> tuple[Comparison, ...]:
    """The comparisons of *table* merged over the built-in one (with *merge* False: of *table*
    alone, a table already merged, as the crawl's settings give it), imported lazily and checked,
    in table order. Raises :class:`ComparisonError` naming the one that cannot be used."""
    merged: Mapping[str, str | None] = {**BUILTIN_COMPARISONS, **(table or {})} if merge else dict(table or {})
    return tuple(_load(name, path) for name, path in merged.items() if path)
