"""A report from a store: counts from SQL, the health history per site, and the change log read
by id a batch at a time, keeping only the newest *limit* changes (memory is bounded by the limit,
not by the log: 100,000 changes in the period cost no more than 500)."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import IO, Any

from ..core.site_watches import by_site_watch, site_changes
from ..store import ChangeQuery, LogEntry
from ..store.health import HealthStore, HistoryQuery
from ..store.options import redact, uri_argument
from .charts import SiteHistory
from .page import ReportSummary, changes_header, closing, opening, site_watch_opening, sites_html, summary_html
from .render import change_html

__all__ = ["ReportOptions", "write_report"]

#: the most sites charted, the most failing watches listed, the most days a chart spans
SITES_LIMIT = 60
FAILING_LIMIT = 50
DAYS_LIMIT = 120


@dataclass(frozen=True, slots=True)
class ReportOptions:
    store_uri: str
    query: ChangeQuery
    limit: int
    now: datetime
    kinds: Sequence[str]


def _days(since: str, now: datetime) -> list[str]:
    first = datetime.fromisoformat(since[:10]).date()
    last = now.date()
    count = min((last - first).days + 1, DAYS_LIMIT)
    return [(last - timedelta(days=n)).isoformat() for n in range(max(count, 1) - 1, -1, -1)]


def _sites(store: HealthStore, options: ReportOptions, days: list[str]) -> tuple[list[SiteHistory], int]:
    sites: dict[str, SiteHistory] = {}
    for row in store.history(HistoryQuery(options.query.spiders, days[0])):
        day = min(row.day, days[-1])  # a day after today (a clock ahead) is charted as today
        history = sites.setdefault(row.site, SiteHistory(row.site))
        history.add(day, row.kind, row.count, row.distances, row.distance_sum, row.distance_max)

    def weight(s: SiteHistory) -> tuple[int, int, str]:
        changed = sum(c[k] for c in s.kinds.values() for k in ("field", "entities", "content", "error", "blocked"))
        return (-changed, -s.observations, s.site)
    ordered = sorted(sites.values(), key=weight)
    return ordered[:SITES_LIMIT], max(len(ordered) - SITES_LIMIT, 0)


def summarise(store: HealthStore, options: ReportOptions) -> ReportSummary:
    query = options.query
    failing_total, failing = store.failing(query.spiders, FAILING_LIMIT)
    conditions = [c for c in store.conditions(None) if not query.spiders or c.spider in query.spiders]
    filters = [f"spider {', '.join(query.spiders)}"] if query.spiders else []
    filters += [f"kind {', '.join(query.kinds)}"] if query.kinds else []
    return ReportSummary(since=query.since or "the beginning", until=options.now.strftime("%Y-%m-%dT%H:%M:%SZ"),
                         store=redact(options.store_uri), counts=store.change_counts(query),
                         failing_total=failing_total, failing=failing, conditions=conditions, filters=filters)


def newest(entries: Any, limit: int) -> list[LogEntry]:
    """The newest *limit* of *entries* (oldest first as they come), newest first."""
    kept: deque[LogEntry] = deque(maxlen=limit)
    if limit:
        kept.extend(entries)
    return list(reversed(kept))


def write_report(store: Any, options: ReportOptions, out: IO[str]) -> tuple[int, int]:
    """Write the report of *options* from *store* (a ChangeLogStore and a HealthStore) to *out*;
    (changes in the period, changes shown)."""
    summary = summarise(store, options)
    days = _days(options.query.since or "1970-01-01", options.now)
    sites, more_sites = _sites(store, options, days)
    out.write(opening(summary))
    out.write(summary_html(summary, options.kinds))
    out.write(sites_html(sites, days, more_sites, summary.conditions))
    shown = newest(store.query_changes(options.query), options.limit) if summary.total else []
    out.write(changes_header(summary.total, len(shown)))
    evidence = f"changewatch evidence {{}} --store {uri_argument(options.store_uri)} -o evidence-{{}}"
    for site, group in by_site_watch(shown, lambda e: e.record):  # a site watch's pages under it
        if site is not None:
            out.write(site_watch_opening(site_changes(site, [e.record for e in group])))
        for entry in group:
            out.write(change_html(entry.id, entry.spider, entry.record, evidence.format(entry.id, entry.id)))
        if site is not None:
            out.write("</section>")
    out.write(closing(summary.total, len(shown)))
    return summary.total, len(shown)
