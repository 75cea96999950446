"""What a commit writes, whatever the backend: the fetch-time rules (clamping, staleness) and
the key's next state (counters, times, error streak). A backend runs these inside its commit's
transaction and writes the result; the contract suite checks that it did."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ..core.comparisons import Kind
from .errors import StaleObservation, StoreError, VersionConflict
from .protocol import CLOCK_TOLERANCE
from .records import Outcome, StoredState

__all__ = ["APP_ID", "FIRST_SCHEMA", "check_committable", "check_schema_version", "clamp", "dumps", "format_time",
           "is_stale", "logged_record", "next_state", "parse_time", "record_json", "report_clamp"]

#: what every store writes in its metadata table: its application and its schema version
APP_ID = "changewatch"

#: the first released store schema, both backends'. Development builds numbered theirs from 1
#: (SQLite up to 8, PostgreSQL up to 5) and upgraded them in place; the release squashed those
#: steps into one create statement and numbered it above them all, so that a development store
#: can never pass as current. The application id stays: a development store is ours, and the line
#: that refuses it can say what to do, where a new id could only say "another application's".
FIRST_SCHEMA = 100


def dumps(value: Any) -> str:
    """JSON as the store keeps it: compact, keys sorted, non-ASCII as is."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


def record_json(record: Any) -> str:
    """A change record as the change log keeps it: compact, non-ASCII as is, its members (and
    theirs) in the order of the record as it was exported, so that a redelivery reads as the
    first delivery did on every backend."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)


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
    version: ``url``, ``counters`` (JSON), ``last_seen``, ``last_error``, ``error_streak``,
    ``last_observed`` when the page was observed (anything but an error, or a noisy page's error,
    whose text was read), ``snapshot`` + ``last_good`` when it has a new snapshot,
    ``content_since`` when that snapshot holds new content (a first one, or a change of the page),
    ``last_changed`` when it logs a change of the page (not an error, a move or a recovery),
    ``first_seen`` for a new key."""
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
    if not error or outcome.snapshot is not None:
        values["last_observed"] = observed_at
    if outcome.snapshot is not None:
        values["snapshot"] = outcome.snapshot
        values["last_good"] = observed_at
        # noise and learned state rewrite the snapshot too: its content is as old as before
        if outcome.kind.changes_page or previous is None or previous.snapshot is None:
            values["content_since"] = observed_at
    if outcome.record is not None and outcome.kind.changes_page:  # not a move or a recovery: the page is as it was
        values["last_changed"] = observed_at
    if previous is None:
        values["first_seen"] = observed_at
    if outcome.schedule is not None:  # from the fetch time as stored: a clamped one cannot push a key ahead
        values["schedule"], values["due_at"], values["due_interval"] = outcome.schedule.columns(
            previous.schedule if previous else None, observed_at)
    return values


def logged_record(outcome: Outcome, observed_at: str, clamped: bool) -> dict[str, Any] | None:
    """The record the change log keeps: the outcome's, with its ``observed_at`` clamped too."""
    if outcome.record is None or not clamped or "observed_at" not in outcome.record:
        return outcome.record
    return {**outcome.record, "observed_at": observed_at}


def check_committable(previous: StoredState | None, expected_version: int | None, observed_at: str,
                      spider: str, key: str) -> None:
    """Raise VersionConflict when the key is not at *expected_version*, StaleObservation when the
    observation was fetched before the stored one (every backend, inside its transaction)."""
    found = previous.version if previous else None
    if found != expected_version:
        raise VersionConflict(f"key {key!r} of spider {spider!r} is at version {found}, not {expected_version}")
    if previous is not None and is_stale(observed_at, previous.last_seen):
        raise StaleObservation(f"key {key!r} of spider {spider!r}: fetched at {observed_at}, before "
                               f"the stored observation ({previous.last_seen})")


def report_clamp(logger: logging.Logger, reported: bool, spider: str, key: str, fetched: str, now: datetime,
                 stored: str) -> None:
    """Log a fetch time clamped to the store's clock: a skewed clock skews every fetch, so one
    WARNING per store (*reported*: it had one), then DEBUG (the crawl counts them all in
    changewatch/commit/clamped)."""
    logger.log(logging.DEBUG if reported else logging.WARNING,
               "key %r of spider %r was fetched at %s, ahead of the store's clock (%s): stored as "
               "fetched at %s; check the clock of the machine that fetched it",
               key, spider, fetched, now.isoformat(timespec="seconds"), stored)


def check_schema_version(meta: Mapping[str, str], subject: str, supported: int) -> int:
    """The store schema version in a store's metadata (``app``, ``schema_version``); StoreError
    for another application's data, a newer schema than *supported*, a development build's
    (below :data:`FIRST_SCHEMA`), or none readable. *subject* names the store in the messages (a
    file, a PostgreSQL schema)."""
    if meta.get("app") != APP_ID:
        raise StoreError(f"{subject} is not a changewatch store (app={meta.get('app')!r}); it was left untouched")
    try:
        version = int(meta.get("schema_version", ""))
    except ValueError:
        version = 0
    if version > supported:
        raise StoreError(f"{subject} has store schema {version}, newer than this changewatch understands "
                         f"({supported}): upgrade changewatch; the store was left untouched")
    if version < 1:
        raise StoreError(f"{subject} has no readable store schema version ({meta.get('schema_version')!r}); "
                         "it was left untouched")
    if version < FIRST_SCHEMA:
        # never upgraded: the steps from it were squashed away, and rebuilding it would be a guess
        raise StoreError(f"{subject} was written by a development build of changewatch (store schema {version}) "
                         "and is not read by this one; it was left untouched: point CHANGEWATCH_STORE (or --store) "
                         "at a new store path, where baselines are taken again silently")
    return version
