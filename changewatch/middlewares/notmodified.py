"""The notice a 304 to changewatch's validators leaves in ``response.meta["changewatch_not_modified"]``,
and the unchanged observations it stands for."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from scrapy.http import Response

from .. import meta
from ..core.comparisons import Comparison
from ..core.snapshot import Snapshot, SnapshotError
from ..items import Observation
from ..store import StoredState

__all__ = ["KnownState", "NotModified", "not_modified_callback", "site_watch_of"]


@dataclass(frozen=True, slots=True)
class KnownState:
    """A key's stored state as a spider's 304 callback sees it: ``snapshot`` decoded
    (``snapshot.entities``, ``snapshot.fields``, ``snapshot.text``), the rest as stored."""

    key: str
    url: str
    snapshot: Snapshot
    counters: dict[str, int]
    first_seen: str | None
    last_seen: str | None
    last_good: str | None
    last_changed: str | None
    last_error: str | None
    error_streak: int

    @classmethod
    def of(cls, state: StoredState, comparisons: tuple[Comparison, ...]) -> KnownState:
        # Always a Snapshot (empty when there is none, or it cannot be read), so that a callback's
        # ``state.snapshot.entities or {}`` never trips over None.
        try:
            snapshot = Snapshot.decode(state.snapshot, comparisons) if state.snapshot is not None else Snapshot()
        except SnapshotError:
            snapshot = Snapshot()
        return cls(state.key, state.url, snapshot, dict(state.counters), state.first_seen, state.last_seen,
                   state.last_good, state.last_changed, state.last_error, state.error_streak)


@dataclass(slots=True)
class NotModified:
    """``response.meta["changewatch_not_modified"]`` on a 304 that answered our validators:
    the URL, the keys whose last good observation came from it, and (for callbacks that asked
    for the 304 with ``handle_httpstatus_list``) their stored states, e.g. to re-visit the
    entities a listing page had."""

    url: str
    keys: tuple[str, ...]
    states: dict[str, KnownState] = field(default_factory=dict)
    #: a link-mode site page's links, as kept with its validators (None: not kept)
    links: str | None = None


def not_modified_callback(response: Response, **_cb_kwargs: Any) -> Iterator[Observation]:
    """Stands in for the spider's callback on a 304 the spider did not ask for."""
    notice: NotModified = response.meta[meta.NOT_MODIFIED]
    for key in notice.keys:
        yield Observation(key=key, url=notice.url, not_modified=True, site_watch=site_watch_of(response))


def site_watch_of(response: Response) -> str | None:
    """The site watch whose page *response* is (a request of the ``watch`` spider's), or None."""
    return getattr(response.meta.get(meta.WATCH), "site_watch", None)
