"""What one look at one watched thing says: the input of every comparison."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

__all__ = ["Observation", "utc_now"]


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Observation:
    """One look at one watched thing. ``key`` is its identity in the store (a SKU, a canonical
    URL, anything stable); ``fields``, ``text``/``html`` and ``entities`` are what is compared.
    ``error`` set means the thing could not be observed: reported, never a new baseline.
    ``options`` tune the comparisons (``kinds``, ``threshold``, ``sort_lines``,
    ``keep_params``/``drop_params``)."""

    key: str
    url: str
    fields: dict[str, Any] | None = None
    text: str | None = None
    html: str | bytes | None = None
    region: str | None = None
    entities: list[dict[str, Any]] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    #: when it was fetched (UTC, ISO 8601): an observation fetched before the stored one
    #: never replaces it
    observed_at: str = field(default_factory=utc_now)
    #: the server answered 304 Not Modified: the thing is as it was at its last full fetch
    not_modified: bool = False
