"""What a commit writes, whatever the backend: the fetch-time rules (clamping, staleness) and
the key's next state (counters, times, error streak). A backend runs these inside its commit's
transaction and writes the result; the contract suite checks that it did."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from ..core.comparisons import Kind
from .base import CLOCK_TOLERANCE, Outcome, StoredState

__all__ = ["clamp", "dumps", "format_time", "is_stale", "logged_record", "next_state", "parse_time"]


def dumps(value: Any) -> str:
    """JSON as the store keeps it: compact, keys sorted, non-ASCII as is."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


def parse_time(value: str) -> datetime:
    """An ISO 8601 time as an aware datetime (a time without an offset is UTC).

    >>> parse_time("2026-11-30T12:00:00Z").isoformat()
    '2026-11-30T12:00:00+00:00'
    """
    try:
        parsed = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ValueError(f"fetch time {value!r} is not an ISO 8601 time") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def format_time(moment: datetime) -> str:
    """The form :func:`changewatch.core.observation.utc_now` gives (UTC, seconds)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def clamp(observed_at: str, now: datetime) -> tuple[str, bool]:
    """*observed_at*, or the store's clock *now* when it is more than CLOCK_TOLERANCE ahead of it
    (and whether it was clamped).

    >>> now = parse_time("2026-11-30T12:00:00Z")
    >>> clamp("2026-11-30T12:00:30Z", now), clamp("2026-11-30T13:00:00Z", now)
    (('2026-11-30T12:00:30Z', False), ('2026-11-30T12:00:00Z', True))
    """
    if parse_time(observed_at) - now > CLOCK_TOLERANCE:
        return format_time(now), True
    return observed_at, False


def is_stale(observed_at: str, last_seen: str | None) -> bool:
    """Whether an observation fetched at *observed_at* was fetched before the stored one. A
    stored time that cannot be read orders nothing (it cannot freeze the key).

    >>> is_stale("2026-11-30T11:59:59Z", "2026-11-30T12:00:00+00:00"), is_stale("2026-11-30T12:00:00Z",
    ...                                                                         "2026-11-30T12:00:00Z")
    (True, False)
    """
    if last_seen is None:
        return False
    try:
        stored = parse_time(last_seen)
    except ValueError:
        return False
    return parse_time(observed_at) < stored


def next_state(previous: StoredState | None, outcome: Outcome, observed_at: str) -> dict[str, Any]:
    """The key's columns after *outcome* (fetched at *observed_at*, already clamped), except its
    version: ``url``, ``counters`` (JSON), ``last_seen``, ``last_error``, ``error_streak``, and
    ``snapshot`` + ``last_good`` when it has a new snapshot, ``last_changed`` when it logs a
    change that is not an error, ``first_seen`` for a new key."""
    counters = dict(previous.counters) if previous else {}
    counters[outcome.kind.value] = counters.get(outcome.kind.value, 0) + 1
    if outcome.not_modified:
        counters["not_modified"] = counters.get("not_modified", 0) + 1
    error = outcome.kind is Kind.ERROR
    values: dict[str, Any] = {
        "url": outcome.url,
        "counters": dumps(counters),
        "last_seen": observed_at,
        "last_error": outcome.error if error else None,
        "error_streak": ((previous.error_streak if previous else 0) + 1) if error else 0,
    }
    if outcome.snapshot is not None:
        values["snapshot"] = outcome.snapshot
        values["last_good"] = observed_at
    if outcome.record is not None and not error:
        values["last_changed"] = observed_at
    if previous is None:
        values["first_seen"] = observed_at
    return values


def logged_record(outcome: Outcome, observed_at: str, clamped: bool) -> dict[str, Any] | None:
    """The record the change log keeps: the outcome's, with its ``observed_at`` clamped too."""
    if outcome.record is None or not clamped or "observed_at" not in outcome.record:
        return outcome.record
    return {**outcome.record, "observed_at": observed_at}
