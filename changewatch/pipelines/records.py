"""Change records: what leaves the crawl for a change or an error (the contract: README.md,
"Five-minute tour")."""

from __future__ import annotations

from typing import Any

from ..core.comparisons import Kind
from ..core.observation import Observation
from ..items import ChangeRecord
from ..store import StoredState

__all__ = ["change_record", "error_class", "repeated_error"]


def error_class(error: str | None) -> str:
    """``blocked`` of ``blocked: HTTP 403``: errors of one class are one failure streak."""
    return (error or "").split(":", 1)[0]


def repeated_error(state: StoredState | None, error: str | None) -> bool:
    """The key was already failing, and the same way: not worth another record."""
    return state is not None and state.error_streak > 0 and error_class(state.last_error) == error_class(error)


def change_record(spider: str, obs: Observation, kind: Kind, members: dict[str, Any], error: str | None,
                  state: StoredState | None) -> ChangeRecord:
    """The record of a reported observation: every member that applies, whatever its kind."""
    record: ChangeRecord = {"key": obs.key, "url": obs.url, "kind": kind.value, "observed_at": obs.observed_at,
                            "spider": spider}
    if obs.site_watch is not None:
        record["site_watch"] = obs.site_watch
    if state is not None and state.last_observed:
        record["previous_observed_at"] = state.last_observed
    if state is not None and state.content_since and kind.changes_page:
        record["baseline_since"] = state.content_since
    if kind is Kind.ERROR:
        record["error"] = error or "error"
        return record
    record.update(members)  # type: ignore[typeddict-item]
    if obs.options.get("site_pages"):  # a site's page set: each page added or removed by its URL
        for name in ("added", "removed"):
            if name in record:
                record[name] = [{"key": entry["key"], "url": entry["key"]} for entry in record[name]]
    return record
