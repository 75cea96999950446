"""Items: what spiders yield (Observation) and what leaves the crawl (ChangeRecord)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, NotRequired, TypedDict

from itemadapter import ItemAdapter

from .core.observation import Observation, canonical_time, utc_now

__all__ = ["ChangeRecord", "Observation", "as_observation", "utc_now"]


_OBSERVATION_FIELDS = ("fields", "text", "html", "entities", "error")


_CANONICAL_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def _timed(obs: Observation) -> Observation:
    """*obs*, or a copy whose fetch time is in the one format the store compares."""
    if _CANONICAL_TIME.fullmatch(obs.observed_at):
        return obs
    try:
        return dataclasses.replace(obs, observed_at=canonical_time(obs.observed_at))
    except ValueError:
        return dataclasses.replace(obs, observed_at=utc_now(),
                                   error=f"observed_at: {obs.observed_at[:80]!r} is not an ISO 8601 time")


def as_observation(item: Any) -> Observation | None:
    """*item* as an Observation, or None when it is not one: any item kind (dict, dataclass,
    attrs, scrapy.Item) with ``key``, ``url`` and at least one of fields/text/html/entities/error.
    An optional ``kinds`` ({field: kind}) says how field values compare (price, date…)."""
    if isinstance(item, Observation):
        return _timed(item)
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
                      options=dict(adapter.get("options") or {}), encoding=adapter.get("encoding"),
                      moved_from=str(adapter["moved_from"]) if adapter.get("moved_from") else None,
                      site_watch=str(adapter["site_watch"]) if adapter.get("site_watch") else None)
    if adapter.get("kinds"):
        obs.options["kinds"] = {**obs.options.get("kinds", {}), **dict(adapter["kinds"])}
    if adapter.get("observed_at"):
        try:
            obs.observed_at = canonical_time(str(adapter["observed_at"]))
        except ValueError:
            obs.error = f"observed_at: {str(adapter['observed_at'])[:80]!r} is not an ISO 8601 time"
    return obs


class ChangeRecord(TypedDict):
    """One exported change (the contract: README.md, "Five-minute tour"). Only the members that
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
    baseline_since: NotRequired[str]
    change_id: NotRequired[int]
    redelivery: NotRequired[bool]
    moved_to: NotRequired[str]
    confirmed: NotRequired[bool]
    summary: NotRequired[str]
    conditions: NotRequired[list[dict[str, Any]]]
    site_watch: NotRequired[str]
