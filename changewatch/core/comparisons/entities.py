"""Entity sets: the things listed on a page, keyed by canonical URL (added, removed, changed)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..entities import Entity, build_entities, compare_entities
from ..observation import Observation
from .base import CompareContext, Difference, Kind, Status, Unobservable, respecified, spec_digest

__all__ = ["EntitiesComparison", "EntitiesPart"]


@dataclass(frozen=True, slots=True)
class EntitiesPart:
    entities: dict[str, Entity]
    #: how the set was read (``options["entities_spec"]`` and the key's URL parameters; None:
    #: not said, as in a part stored before specs were kept)
    spec: str | None = None
    #: entities of the page that repeated an earlier one (its key and its fields); not stored
    duplicates: int = field(default=0, compare=False)


class EntitiesComparison:
    name: ClassVar[str] = "entities"
    kind: ClassVar[Kind] = Kind.ENTITIES
    rank: ClassVar[int] = 20
    # {"spec", "entities"}, normalised values as text, several entities of one key kept apart: a
    # part of another version is not read, and the set starts again
    part_version: ClassVar[int] = 3

    def digest(self, obs: Observation) -> EntitiesPart | None:
        if obs.entities is None:
            return None
        try:
            entities = build_entities(obs.entities, base_url=obs.url,
                                      keep_params=obs.options.get("keep_params") or (),
                                      drop_params=obs.options.get("drop_params") or (),
                                      kinds=obs.options.get("kinds"))
        except ValueError as exc:  # an unknown kind: the spider's mistake, reported as an error
            raise Unobservable(f"entities: {exc}") from None
        return EntitiesPart(entities, _spec(obs), duplicates=len(obs.entities) - len(entities))

    def check(self, old: EntitiesPart | None, new: EntitiesPart) -> str | None:
        if old is not None and old.entities and not new.entities and not respecified(old.spec, new.spec):
            return f"entities: all {len(old.entities)} entities are missing"
        return None

    def compare(self, old: EntitiesPart, new: EntitiesPart, context: CompareContext) -> Difference:
        if respecified(old.spec, new.spec):  # the watch reads the set another way: it starts afresh
            return Difference(Status.NONE, counters={"rebaselined": 1})
        added, removed, changed = compare_entities(old.entities, new.entities)
        if not (added or removed or changed):
            return Difference(Status.NONE)
        members = {name: value for name, value in (("added", added), ("removed", removed), ("changed", changed))
                   if value}
        return Difference(Status.CHANGED, members)

    def counters(self, part: EntitiesPart) -> Mapping[str, int]:
        return {"duplicates": part.duplicates} if part.duplicates else {}

    def encode(self, part: EntitiesPart) -> tuple[Any, bytes | None]:
        return {"spec": part.spec, "entities": {key: entity.to_json() for key, entity in part.entities.items()}}, None

    def decode(self, data: Any, blob: bytes | None, version: int) -> EntitiesPart | None:
        if version != self.part_version or not isinstance(data, dict):
            return None
        spec, entities = data.get("spec"), data.get("entities")
        if not isinstance(entities, dict):
            return None
        return EntitiesPart({key: Entity.from_json(key, value) for key, value in entities.items()},
                            spec if isinstance(spec, str) else None)


def _spec(obs: Observation) -> str | None:
    """How *obs*'s entity set was read: the spider's spec, and the URL parameters its keys keep
    or drop (another choice gives every URL key another identity)."""
    spec = obs.options.get("entities_spec")
    if spec is None:
        return None
    params = (obs.options.get("keep_params") or [], obs.options.get("drop_params") or [])
    return str(spec) if not any(params) else f"{spec} {spec_digest(params)}"
