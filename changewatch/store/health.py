"""What a store keeps to watch the watcher (docs/health.md): a compact history of observations per
spider, site, day and kind (counts, and the noise distances summed), written by every commit in
its own transaction, and the health conditions that are open (so that each is logged once per
streak, and its end once). Both backends share the SQL written here; the tables come in as one
migration step (``HEALTH_TABLES``).

A *site* is a URL's host, lower case, with its port when it is not the scheme's default
(``shop.example``, ``127.0.0.1:8080``): one server, one set of templates. ``www.`` is kept: a
``www`` host and the bare domain are often served by different machines.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

from ..core.comparisons import Kind
from .records import ChangeQuery, Lease, Outcome
from .semantics import format_time, parse_time

__all__ = ["HEALTH_TABLES", "HISTORY_KINDS", "FailingWatch", "HealthStore", "HistoryQuery", "HistoryRow",
           "OpenCondition", "history_entry", "history_upsert", "site_of", "site_root", "spiders_where"]

#: the kinds the history counts: the change kinds, with ``blocked`` (an error of class blocked:
#: a captcha or an access-denied page) apart from the other errors
HISTORY_KINDS = ("baseline", "none", "noise", "field", "entities", "content", "error", "blocked", "moved", "recovered")

# ---- health: schema step (one block; both backends include it: {s} is the PostgreSQL schema prefix,
# {without_rowid} SQLite's " WITHOUT ROWID": the primary key is the table, one b-tree written per commit) ----
HEALTH_TABLES = """
CREATE TABLE {s}health_history (
    spider TEXT NOT NULL,
    site TEXT NOT NULL,
    day TEXT NOT NULL,
    kind TEXT NOT NULL,
    count INTEGER NOT NULL DEFAULT 0,
    distances INTEGER NOT NULL DEFAULT 0,
    distance_sum INTEGER NOT NULL DEFAULT 0,
    distance_max INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (spider, site, day, kind)
){without_rowid};
CREATE TABLE {s}health_conditions (
    spider TEXT NOT NULL,
    site TEXT NOT NULL,
    condition TEXT NOT NULL,
    since TEXT NOT NULL,
    error TEXT NOT NULL,
    change_id BIGINT,
    PRIMARY KEY (spider, site, condition)
)
"""
# ---- end of the health schema step ----

_DEFAULT_PORTS = {"http": 80, "https": 443}


@lru_cache(maxsize=4096)  # a commit asks for every observation's: a crawl has few sites and many URLs
def site_of(url: str) -> str:
    """The site a URL belongs to.

    >>> site_of("https://Shop.Example/p/1?x=2"), site_of("http://127.0.0.1:8080/a"), site_of("https://a.b:443/")
    ('shop.example', '127.0.0.1:8080', 'a.b')
    >>> site_of("not a url")
    'unknown'
    """
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return "unknown"
    if not host:
        return "unknown"
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS.get(parts.scheme.lower()):
        return f"{host}:{port}"
    return host


def site_root(site: str, url: str | None = None) -> str:
    """The root URL of *site*, with *url*'s scheme (https when unknown).

    >>> site_root("shop.example"), site_root("127.0.0.1:8080", "http://127.0.0.1:8080/a")
    ('https://shop.example/', 'http://127.0.0.1:8080/')
    """
    scheme = urlsplit(url).scheme.lower() if url else ""
    return f"{scheme if scheme in _DEFAULT_PORTS else 'https'}://{site}/"


def history_entry(outcome: Outcome, observed_at: str) -> tuple[str, str, str, int | None]:
    """(site, day, kind, noise or change distance) of an observation committed at *observed_at*
    (the stored, clamped time: a skewed clock cannot date history in the future)."""
    kind = outcome.kind.value
    if outcome.kind is Kind.ERROR and (outcome.error or "").split(":", 1)[0].strip() == "blocked":
        kind = "blocked"
    canonical = len(observed_at) == 20 and observed_at[10] == "T" and observed_at[19] == "Z"  # as commits store it
    day = observed_at[:10] if canonical else format_time(parse_time(observed_at))[:10]
    return site_of(outcome.url), day, kind, outcome.distance


def history_upsert(prefix: str, mark: str, greatest: str) -> str:
    """The one statement a commit adds: count the observation in its day's row. *prefix* is the
    table's schema prefix, *mark* the driver's placeholder, *greatest* the SQL function of the
    larger of two values (``max`` in SQLite, ``GREATEST`` in PostgreSQL)."""
    t = f"{prefix}health_history"
    return (f"INSERT INTO {t} (spider, site, day, kind, count, distances, distance_sum, distance_max) "
            f"VALUES ({mark}, {mark}, {mark}, {mark}, 1, {mark}, {mark}, {mark}) "
            "ON CONFLICT (spider, site, day, kind) DO UPDATE SET count = health_history.count + 1, "
            "distances = health_history.distances + excluded.distances, "
            "distance_sum = health_history.distance_sum + excluded.distance_sum, "
            f"distance_max = {greatest}(health_history.distance_max, excluded.distance_max)")


def history_args(spider: str, entry: tuple[str, str, str, int | None]) -> tuple[Any, ...]:
    site, day, kind, distance = entry
    return (spider, site, day, kind, 0 if distance is None else 1, distance or 0, distance or 0)


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """How many observations of *kind* a spider made of a site on a day (UTC), and the sum and
    largest of their distances (noise and content observations carry one)."""

    spider: str
    site: str
    day: str
    kind: str
    count: int
    distances: int = 0
    distance_sum: int = 0
    distance_max: int = 0


@dataclass(frozen=True, slots=True)
class HistoryQuery:
    """Which history rows :meth:`HealthStore.history` lists (empty members: any)."""

    spiders: tuple[str, ...] = ()
    #: a day (``2026-11-30``): rows of that day or later
    since: str | None = None


@dataclass(frozen=True, slots=True)
class OpenCondition:
    """A health condition logged and not yet over: since when, its error, its change-log id."""

    spider: str
    site: str
    condition: str
    since: str
    error: str
    change_id: int | None


@dataclass(frozen=True, slots=True)
class FailingWatch:
    """A key whose latest observations failed: how many in a row, the last error, its last good one."""

    spider: str
    key: str
    url: str
    error_streak: int
    last_error: str | None
    last_good: str | None


def spiders_where(spiders: tuple[str, ...], mark: str) -> tuple[str, list[Any]]:
    """``spider IN (…)`` for *spiders*, or ``1=1``."""
    if not spiders:
        return "1=1", []
    return f"spider IN ({', '.join([mark] * len(spiders))})", list(spiders)


def history_where(query: HistoryQuery, mark: str) -> tuple[str, list[Any]]:
    """The WHERE clause of *query* (``1=1`` when it selects everything).

    >>> history_where(HistoryQuery(("watch",), "2026-11-01"), "?")
    ('spider IN (?) AND day >= ?', ['watch', '2026-11-01'])
    """
    clauses, args = [], []
    if query.spiders:
        clauses.append(f"spider IN ({', '.join([mark] * len(query.spiders))})")
        args += list(query.spiders)
    if query.since is not None:
        clauses.append(f"day >= {mark}")
        args.append(query.since)
    return " AND ".join(clauses) or "1=1", args


@runtime_checkable
class HealthStore(Protocol):
    """Optional: what the health check and the report read and write besides :class:`Store`. A
    store without it crawls, without health warnings (the crawl says so once)."""

    def history(self, query: HistoryQuery) -> Iterator[HistoryRow]:
        """The history rows *query* selects, by spider, site, day and kind."""
        ...

    def conditions(self, spider: str | None) -> list[OpenCondition]:
        """The open health conditions of *spider* (None: of every spider)."""
        ...

    def change_counts(self, query: ChangeQuery) -> dict[tuple[str, str], int]:
        """How many logged changes *query* selects, per (spider, kind): counted in the database."""
        ...

    def failing(self, spiders: tuple[str, ...], limit: int) -> tuple[int, list[FailingWatch]]:
        """How many keys of *spiders* (empty: all) are failing now, and up to *limit* of them,
        the longest streaks first."""
        ...

    def open_condition(self, spider: str, site: str, condition: str, since: str, record: dict[str, Any],
                       lease: Lease | None = None) -> int | None:
        """In one transaction, if *condition* of *site* is not open: open it and append *record*
        (kind ``error``) to the change log; its change id. None (nothing written) when it was
        open already, by this process or another."""
        ...

    def close_condition(self, spider: str, site: str, condition: str, record: dict[str, Any],
                        lease: Lease | None = None) -> int | None:
        """In one transaction, if *condition* of *site* is open: close it and append *record*
        (kind ``recovered``); its change id, or None when it was not open."""
        ...
