"""Items: what spiders yield (Observation) and what leaves the crawl (ChangeRecord)."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from itemadapter import ItemAdapter

from .core.observation import Observation, utc_now

__all__ = ["ChangeRecord", "Observation", "as_observation", "utc_now"]


_OBSERVATION_FIELDS = ("fields", "text", "html", "entities", "error")


def as_observation(item: Any) -> Observation | None:
    """*item* as an Observation, or None when it is not one: any item kind (dict, dataclass,
    attrs, scrapy.Item) with ``key``, ``url`` and at least one of fields/text/html/entities/error.
    An optional ``kinds`` ({field: kind}) says how field values compare (price, date…)."""
    if isinstance(item, Observation):
        return item
    if not ItemAdapter.is_item(item):
        return None
    adapter = ItemAdapter(item)
    if adapter.get("key") is None or adapter.get("url") is None:
        return None
    if adapter.get("change_id") is not None:  # a change record (a redelivery), not an observation
        return None
    if not any(adapter.get(name) is not None for name in _OBSERVATION_FIELDS):
        return None
    # Copied, never adopted: the user's item stays as the user made it.
    obs = Observation(key=str(adapter["key"]), url=str(adapter["url"]), fields=adapter.get("fields"),
                      text=adapter.get("text"), html=adapter.get("html"), region=adapter.get("region"),
                      entities=adapter.get("entities"), error=adapter.get("error"),
                      options=dict(adapter.get("options") or {}))
    if adapter.get("kinds"):
        obs.options["kinds"] = {**obs.options.get("kinds", {}), **dict(adapter["kinds"])}
    if adapter.get("observed_at"):
        obs.observed_at = str(adapter["observed_at"])
    return obs


class ChangeRecord(TypedDict):
    """One exported change (docs/DESIGN: the change-record contract). Only the members that
    apply to the kind are present."""

    key: str
    url: str
    kind: str
    observed_at: str
    spider: str
    changes: NotRequired[dict[str, dict[str, Any]]]
    added: NotRequired[list[dict[str, Any]]]
    removed: NotRequired[list[dict[str, Any]]]
    changed: NotRequired[list[dict[str, Any]]]
    distance: NotRequired[int]
    diff: NotRequired[str]
    error: NotRequired[str]
    previous_observed_at: NotRequired[str]
    change_id: NotRequired[int]
    redelivery: NotRequired[bool]
    moved_to: NotRequired[str]
    summary: NotRequired[str]
