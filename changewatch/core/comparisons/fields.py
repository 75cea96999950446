"""Fields: tracked values compared value by value ("offers.price: 89.00 → 79.00")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..fields import compare_fields
from ..observation import Observation
from ..values import normalise_fields
from .base import CompareContext, Difference, Kind, Status, Unobservable

__all__ = ["FieldsComparison", "FieldsPart"]


@dataclass(frozen=True, slots=True)
class FieldsPart:
    """The raw values as the page showed them (for the record) and their normalised forms
    (for the comparison: ``89.00`` = ``89``)."""

    raw: dict[str, Any]
    norm: dict[str, Any]


class FieldsComparison:
    name: ClassVar[str] = "fields"
    kind: ClassVar[Kind] = Kind.FIELD
    rank: ClassVar[int] = 10
    part_version: ClassVar[int] = 1

    def digest(self, obs: Observation) -> FieldsPart | None:
        if obs.fields is None:
            return None
        try:
            norm = normalise_fields(obs.fields, obs.options.get("kinds"))
        except ValueError as exc:  # an unknown kind: the spider's mistake, reported as an error
            raise Unobservable(f"fields: {exc}") from None
        return FieldsPart(dict(obs.fields), norm)

    def check(self, old: FieldsPart | None, new: FieldsPart) -> str | None:
        if old is None:
            return None
        for name, before in old.norm.items():
            if before is not None and name in new.norm and new.norm[name] is None:
                return f"field {name!r} is missing (was {old.raw.get(name, before)!r})"
        return None

    def compare(self, old: FieldsPart, new: FieldsPart, context: CompareContext) -> Difference:
        changes = compare_fields(old.norm, new.norm, old.raw, new.raw)
        return Difference(Status.CHANGED, {"changes": changes}) if changes else Difference(Status.NONE)

    def counters(self, part: FieldsPart) -> Mapping[str, int]:
        return {}

    def encode(self, part: FieldsPart) -> tuple[Any, bytes | None]:
        return {"raw": part.raw, "norm": part.norm}, None

    def decode(self, data: Any, blob: bytes | None, version: int) -> FieldsPart | None:
        if version != self.part_version or not isinstance(data, dict):
            return None
        return FieldsPart(dict(data.get("raw") or {}), dict(data.get("norm") or {}))
