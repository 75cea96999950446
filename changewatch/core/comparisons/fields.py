"""Fields: tracked values compared value by value ("offers.price: 89.00 → 79.00")."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..fields import compare_fields, normalised_text
from ..observation import Observation
from ..values import normalise_fields
from .base import CompareContext, Difference, Kind, Status, Unobservable, respecified

__all__ = ["FIELD_TYPES", "MISSING_FIELDS", "FieldsComparison", "FieldsPart"]

#: the observation's option with each field's JSON type (a JSON document's fields: core/documents.py)
FIELD_TYPES = "field_types"
#: the observation's option naming the fields whose path matched nothing, and why (JSON documents)
MISSING_FIELDS = "missing_fields"


@dataclass(frozen=True, slots=True)
class FieldsPart:
    """The raw values as the page showed them (for the record), their normalised forms (for
    the comparison: ``89.00`` = ``89``; text, booleans as ``true``/``false``, a JSON null as
    ``null``), how each was read (``options["field_specs"]``: name → spec; None: not said),
    each value's JSON type (a JSON document's fields; None for a page's) and the fields found
    nowhere on this observation (name → why), whose values are the last good ones."""

    raw: dict[str, Any]
    norm: dict[str, Any]
    specs: dict[str, str] | None = None
    types: dict[str, str] | None = None
    missing: Mapping[str, str] = field(default_factory=dict)
    #: the fields learned to vary (``changewatch noise`` of a field change): never a change
    volatile: frozenset[str] = frozenset()

    def respecified(self, new: FieldsPart) -> frozenset[str]:
        """The fields *new* reads another way than this part did (the watch was edited)."""
        if self.specs is None or new.specs is None:
            return frozenset()
        return frozenset(name for name, spec in new.specs.items() if respecified(self.specs.get(name), spec))

    def present(self) -> dict[str, Any]:
        """The normalised values found on this observation."""
        return {name: value for name, value in self.norm.items() if name not in self.missing}


def _missing_of(obs: Observation, norm: Mapping[str, Any]) -> dict[str, str]:
    # A JSON document says which paths matched nothing (its null is a value); on a page, a field
    # that found nothing is None.
    if obs.options.get("content_type") == "json" and obs.fields is not None:
        given = obs.options.get(MISSING_FIELDS) or {}
        return {str(name): str(why) for name, why in given.items()}
    return {name: f"field {name!r} matched nothing" for name, value in norm.items() if value is None}


class FieldsComparison:
    name: ClassVar[str] = "fields"
    kind: ClassVar[Kind] = Kind.FIELD
    rank: ClassVar[int] = 10
    # {"raw", "norm", "specs", "types", "missing"}, normalised values as text: a part of another
    # version is not read, and the fields start again
    part_version: ClassVar[int] = 3

    def digest(self, obs: Observation) -> FieldsPart | None:
        if obs.fields is None:
            return None
        if not isinstance(obs.fields, Mapping):  # the spider's mistake, reported as an error
            raise Unobservable(f"fields: expected a mapping of name → value, not a {type(obs.fields).__name__}")
        try:
            norm = {name: normalised_text(value)
                    for name, value in normalise_fields(obs.fields, obs.options.get("kinds")).items()}
        except ValueError as exc:  # an unknown kind: the spider's mistake, reported as an error
            raise Unobservable(f"fields: {exc}") from None
        specs = obs.options.get("field_specs")
        given = obs.options.get(FIELD_TYPES)
        types = {str(k): str(v) for k, v in given.items()} if isinstance(given, Mapping) else None
        if types is not None:
            norm.update({name: "null" for name, kind in types.items() if kind == "null"})
        raw = dict(obs.fields)
        missing = _missing_of(obs, norm)
        for name in missing:
            raw.setdefault(name, None)
            norm.setdefault(name, None)
        return FieldsPart(raw, norm, {str(k): str(v) for k, v in specs.items()} if specs else None, types, missing)

    def check(self, old: FieldsPart | None, new: FieldsPart) -> str | None:
        # Fields found nowhere are an error when nothing else of the part changed: with a change
        # of another field, the change is reported and the error with it (compare).
        gone = self._gone(old, new)
        if gone and (old is None or not self._changes(old, new)):
            return self._error(old, new, gone)
        return None

    def compare(self, old: FieldsPart, new: FieldsPart, context: CompareContext) -> Difference:
        # A field the watch now reads another way starts afresh; the others keep comparing.
        fresh = old.respecified(new)
        changes = self._changes(old, new)
        counters = {"rebaselined": len(fresh)} if fresh else {}
        keep = self._carried(old, new)
        if old.volatile:
            keep = dataclasses.replace(keep or new, volatile=old.volatile)
            quiet = {name for name in changes if name in old.volatile}
            if quiet:
                changes = {name: value for name, value in changes.items() if name not in quiet}
                counters["learned_ignored"] = 1
                if not changes:
                    return Difference(Status.NOISE, keep=keep, counters=counters)
        if changes:
            members: dict[str, Any] = {"changes": changes}
            if gone := self._gone(old, new):
                members["error"] = self._error(old, new, gone)
            return Difference(Status.CHANGED, members, keep=keep, counters=counters)
        return Difference(Status.NONE, keep=keep, counters=counters)

    @staticmethod
    def _changes(old: FieldsPart, new: FieldsPart) -> dict[str, Any]:
        fresh = old.respecified(new)
        before = {name: value for name, value in old.norm.items() if name not in fresh}
        return compare_fields(before, new.present(), old.raw, new.raw, old.types, new.types)

    @staticmethod
    def _gone(old: FieldsPart | None, new: FieldsPart) -> list[str]:
        """The fields found nowhere now that are worth an error: a JSON path always (a document's
        fields have no "nothing"); a page's field that had a value (a page's field may be empty
        from the start: an optional one)."""
        if new.types is not None:
            return list(new.missing)
        if old is None:
            return []
        fresh = old.respecified(new)
        return [name for name in new.missing if old.norm.get(name) is not None and name not in fresh]

    @staticmethod
    def _error(old: FieldsPart | None, new: FieldsPart, gone: list[str]) -> str:
        def was(name: str) -> str:
            if old is None or old.norm.get(name) is None:
                return ""
            return f" (was {old.raw.get(name, old.norm[name])!r})"

        return "; ".join(f"extraction: {new.missing[name]}{was(name)}" for name in gone)

    @staticmethod
    def _carried(old: FieldsPart, new: FieldsPart) -> FieldsPart | None:
        """*new* with the last good values of the fields it did not find (None: it found all)."""
        if not new.missing:
            return None
        raw, norm = dict(new.raw), dict(new.norm)
        types = None if new.types is None else dict(new.types)
        for name in new.missing:
            if name in old.norm and name not in old.missing:
                raw[name], norm[name] = old.raw.get(name), old.norm[name]
                if types is not None and old.types is not None and name in old.types:
                    types[name] = old.types[name]
            elif name in old.missing:
                raw[name], norm[name] = old.raw.get(name), old.norm.get(name)
        still = {name: why for name, why in new.missing.items() if name not in old.norm or name in old.missing}
        return FieldsPart(raw, norm, new.specs, types, still)

    def counters(self, part: FieldsPart) -> Mapping[str, int]:
        return {}

    def encode(self, part: FieldsPart) -> tuple[Any, bytes | None]:
        data: dict[str, Any] = {"raw": part.raw, "norm": part.norm}
        if part.specs is not None:
            data["specs"] = part.specs
        if part.types is not None:
            data["types"] = part.types
        if part.missing:
            data["missing"] = dict(part.missing)
        if part.volatile:
            data["volatile"] = sorted(part.volatile)
        return data, None

    def decode(self, data: Any, blob: bytes | None, version: int) -> FieldsPart | None:
        if version != self.part_version or not isinstance(data, dict):
            return None
        specs, types, missing = data.get("specs"), data.get("types"), data.get("missing")
        volatile = data.get("volatile")
        return FieldsPart(dict(data.get("raw") or {}), dict(data.get("norm") or {}),
                          dict(specs) if isinstance(specs, dict) else None,
                          dict(types) if isinstance(types, dict) else None,
                          dict(missing) if isinstance(missing, dict) else {},
                          frozenset(map(str, volatile)) if isinstance(volatile, list) else frozenset())
