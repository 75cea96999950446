"""Entity sets: the things listed on a page, keyed by canonical URL (added, removed, changed)."""

from __future__ import annotations

import dataclasses
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
    #: learned by ``changewatch noise`` of an entities change: where entities come and go (key
    #: prefixes: their churn is noise) and which of their fields vary (never a change)
    churn: tuple[str, ...] = ()
    volatile: frozenset[str] = frozenset()


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
        keep = dataclasses.replace(new, churn=old.churn, volatile=old.volatile) if old.churn or old.volatile else None
        if not (added or removed or changed):
            return Difference(Status.NONE, keep=keep)
        if keep is not None:
            kept = _unlearned(old, added, removed, changed)
            if kept != (added, removed, changed):
                added, removed, changed = kept
                if not (added or removed or changed):
                    return Difference(Status.NOISE, keep=keep, counters={"learned_ignored": 1})
        members = {name: value for name, value in (("added", added), ("removed", removed), ("changed", changed))
                   if value}
        return Difference(Status.CHANGED, members, keep=keep)

    def counters(self, part: EntitiesPart) -> Mapping[str, int]:
        return {"duplicates": part.duplicates} if part.duplicates else {}

    def encode(self, part: EntitiesPart) -> tuple[Any, bytes | None]:
        data: dict[str, Any] = {"spec": part.spec,
                                "entities": {key: entity.to_json() for key, entity in part.entities.items()}}
        if part.churn:
            data["churn"] = list(part.churn)
        if part.volatile:
            data["volatile"] = sorted(part.volatile)
        return data, None

    def decode(self, data: Any, blob: bytes | None, version: int) -> EntitiesPart | None:
        if version != self.part_version or not isinstance(data, dict):
            return None
        spec, entities = data.get("spec"), data.get("entities")
        if not isinstance(entities, dict):
            return None
        churn, volatile = data.get("churn"), data.get("volatile")
        return EntitiesPart({key: Entity.from_json(key, value) for key, value in entities.items()},
                            spec if isinstance(spec, str) else None,
                            churn=tuple(map(str, churn)) if isinstance(churn, list) else (),
                            volatile=frozenset(map(str, volatile)) if isinstance(volatile, list) else frozenset())


Changes = list[dict[str, Any]]


def _unlearned(old: EntitiesPart, added: Changes, removed: Changes,
               changed: Changes) -> tuple[Changes, Changes, Changes]:
    """The changes of an entity set less what is learned to vary: entities coming and going
    where they churn, changes of their volatile fields."""
    def churns(entry: dict[str, Any]) -> bool:
        return any(str(entry["key"]).startswith(prefix) for prefix in old.churn)

    kept_changed = []
    for entry in changed:
        diff = {name: value for name, value in entry["changes"].items() if name not in old.volatile}
        if diff:
            kept_changed.append({**entry, "changes": diff} if diff != entry["changes"] else entry)
    return [e for e in added if not churns(e)], [e for e in removed if not churns(e)], kept_changed


def _spec(obs: Observation) -> str | None:
    """How *obs*'s entity set was read: the spider's spec, and the URL parameters its keys keep
    or drop (another choice gives every URL key another identity)."""
    spec = obs.options.get("entities_spec")
    if spec is None:
        return None
    params = (obs.options.get("keep_params") or [], obs.options.get("drop_params") or [])
    return str(spec) if not any(params) else f"{spec} {spec_digest(params)}"
