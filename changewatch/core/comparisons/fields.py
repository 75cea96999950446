"""Fields: tracked values compared value by value ("offers.price: 89.00 → 79.00")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..fields import compare_fields
from ..observation import Observation
from ..values import normalise_fields
from .base import CompareContext, Difference, Kind, Status, Unobservable, respecified

__all__ = ["FieldsComparison", "FieldsPart"]


@dataclass(frozen=True, slots=True)
class FieldsPart:
    """The raw values as the page showed them (for the record), their normalised forms (for
    the comparison: ``89.00`` = ``89``) and how each was read (``options["field_specs"]``:
    name → spec; None: not said, as in a part stored before specs were kept)."""

    raw: dict[str, Any]
    norm: dict[str, Any]
    specs: dict[str, str] | None = None

    def respecified(self, new: FieldsPart) -> frozenset[str]:
        """The fields *new* reads another way than this part did (the watch was edited)."""
        if self.specs is None or new.specs is None:
            return frozenset()
        return frozenset(name for name, spec in new.specs.items() if respecified(self.specs.get(name), spec))


class FieldsComparison:
    name: ClassVar[str] = "fields"
    kind: ClassVar[Kind] = Kind.FIELD
    rank: ClassVar[int] = 10
    # {"raw", "norm", "specs"}: a part of another version is not read, and the fields start again
    part_version: ClassVar[int] = 2

    def digest(self, obs: Observation) -> FieldsPart | None:
        if obs.fields is None:
            return None
        try:
            norm = normalise_fields(obs.fields, obs.options.get("kinds"))
        except ValueError as exc:  # an unknown kind: the spider's mistake, reported as an error
            raise Unobservable(f"fields: {exc}") from None
        specs = obs.options.get("field_specs")
        return FieldsPart(dict(obs.fields), norm, {str(k): str(v) for k, v in specs.items()} if specs else None)

    def check(self, old: FieldsPart | None, new: FieldsPart) -> str | None:
        if old is None:
            return None
        fresh = old.respecified(new)  # read another way: a new field, which nothing can be missing from
        for name, before in old.norm.items():
            if before is not None and name in new.norm and new.norm[name] is None and name not in fresh:
                return f"field {name!r} is missing (was {old.raw.get(name, before)!r})"
        return None

    def compare(self, old: FieldsPart, new: FieldsPart, context: CompareContext) -> Difference:
        # A field the watch now reads another way starts afresh; the others keep comparing.
        fresh = old.respecified(new)
        before = {name: value for name, value in old.norm.items() if name not in fresh}
        changes = compare_fields(before, new.norm, old.raw, new.raw)
        counters = {"rebaselined": len(fresh)} if fresh else {}
        if changes:
            return Difference(Status.CHANGED, {"changes": changes}, counters=counters)
        return Difference(Status.NONE, counters=counters)

    def counters(self, part: FieldsPart) -> Mapping[str, int]:
        return {}

    def encode(self, part: FieldsPart) -> tuple[Any, bytes | None]:
        data: dict[str, Any] = {"raw": part.raw, "norm": part.norm}
        if part.specs is not None:
            data["specs"] = part.specs
        return data, None

    def decode(self, data: Any, blob: bytes | None, version: int) -> FieldsPart | None:
        if version != self.part_version or not isinstance(data, dict):
            return None
        specs = data.get("specs")
        return FieldsPart(dict(data.get("raw") or {}), dict(data.get("norm") or {}),
                          dict(specs) if isinstance(specs, dict) else None)
