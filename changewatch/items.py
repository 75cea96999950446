"""Items: what spiders yield (Observation) and what leaves the crawl (ChangeRecord)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NotRequired, TypedDict

from itemadapter import ItemAdapter

__all__ = ["ChangeRecord", "Observation", "as_observation", "utc_now"]


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Observation:
    """One look at one watched thing. ``key`` is its identity in the store (a SKU, a canonical
    URL, anything stable); ``fields``, ``text``/``html`` and ``entities`` are what is compared.
    ``error`` set means the thing could not be observed: reported, never a new baseline."""

    key: str
    url: str
    fields: dict[str, Any] | None = None
    text: str | None = None
    html: str | None = None
    region: str | None = None
    entities: list[dict[str, Any]] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    observed_at: str = field(default_factory=utc_now)
    #: the server answered 304 Not Modified: the thing is as it was at its last full fetch
    not_modified: bool = False
    #: filled in by the changewatch pipelines; not part of the spider's contract
    digest: dict[str, Any] = field(default_factory=dict, repr=False)


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
