"""Watching the watcher: which health conditions hold, judged from the stored history (pure
functions; no Scrapy, no store). docs/health.md says what each condition means.

- ``noise``: a site's templates are changing. Its noise rate (noise among the pages read) over
  the recent window is at least ``noise_rise`` times the rate over the baseline window before it,
  and at least ``noise_min_rate``; each window holds ``min_observations`` or more.
- ``stale``: for ``stale_after`` a site gave only identical, noisy or blocked pages (no change,
  no other error), at least ``min_observations`` of them, though it changed in the baseline window
  before (stale), or most of them were block pages while it was readable before (blocked).
- ``canary:KEY``: a watch declared ``canary: {expect: change, within: 2d}`` has not changed for
  longer than ``within``; or one with ``expect: no_change`` changed less than ``within`` ago.

Days are UTC days of the stored fetch times; a day after the check's own (a clock ahead) counts
as the check's day. A condition is only closed (recovered) when there is enough to judge it by.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..core.durations import format_duration
from ..store.health import HistoryRow
from ..store.semantics import parse_time

__all__ = ["CHANGES", "Canary", "CanaryState", "Finding", "HealthThresholds", "judge_canary", "judge_sites",
           "window_start"]

#: the kinds of a change of what a page says
CHANGES = ("field", "entities", "content")
_READ = ("none", "noise", *CHANGES)  # a page read and compared
_QUIET = ("none", "noise", "blocked")


#: the recent window's noise rate against the baseline's that counts as a rise
NOISE_RISE = 2.0
#: and the least noise rate that counts at all (a fifth of the observations)
NOISE_MIN_RATE = 0.2


@dataclass(frozen=True, slots=True)
class HealthThresholds:
    """The health settings (docs/settings.md, CHANGEWATCH_HEALTH_RECENT and the others), durations in
    seconds; their defaults are the settings table's. The noise rule's two numbers are not settings:
    no one tuned them, and CHANGEWATCH_HEALTH_ENABLED turns the whole check off."""

    recent: float
    baseline: float
    min_observations: int
    stale_after: float
    noise_rise: float = NOISE_RISE
    noise_min_rate: float = NOISE_MIN_RATE

    @property
    def reach(self) -> float:
        """How far back the history is read."""
        return max(self.recent, self.stale_after) + self.baseline


@dataclass(frozen=True, slots=True)
class Finding:
    """A condition that holds (``holds``) or was judged not to (``holds=False``): its message
    (the error, after ``health: ``) and what it was judged from."""

    site: str
    condition: str
    holds: bool
    message: str = ""
    detail: Mapping[str, object] | None = None


@dataclass(frozen=True, slots=True)
class Canary:
    """A watch's ``canary`` declaration."""

    key: str
    expect: str  # "change" or "no_change"
    within: float  # seconds


@dataclass(frozen=True, slots=True)
class CanaryState:
    """What the store knows of a canary's key (its stored times)."""

    first_seen: str | None
    last_seen: str | None
    last_changed: str | None


def window_start(now: datetime, seconds: float) -> str:
    """The first day (UTC) of a window of *seconds* ending on *now*'s day.

    >>> window_start(parse_time("2026-12-01T10:00:00Z"), 7 * 86400)
    '2026-11-25'
    """
    days = max(1, round(seconds / 86400))
    return (now - timedelta(days=days - 1)).strftime("%Y-%m-%d")


def _totals(rows: Iterable[HistoryRow], first: str, last: str | None = None) -> Counter[str]:
    """Observations per kind on the days from *first* to before *last* (to the end when None)."""
    out: Counter[str] = Counter()
    for row in rows:
        if row.day >= first and (last is None or row.day < last):
            out[row.kind] += row.count
            out["distance_sum"] += row.distance_sum if row.kind == "noise" else 0
    return out


def _noise_rate(totals: Counter[str]) -> tuple[float, int]:
    read = sum(totals[k] for k in _READ)
    return (totals["noise"] / read if read else 0.0), read


def _by_site(rows: Iterable[HistoryRow], today: str) -> dict[str, list[HistoryRow]]:
    sites: dict[str, list[HistoryRow]] = defaultdict(list)
    for row in rows:
        if row.day > today:  # dated ahead of the check's clock: counted as today
            row = HistoryRow(row.spider, row.site, today, row.kind, row.count, row.distances, row.distance_sum,
                             row.distance_max)
        sites[row.site].append(row)
    return sites


def judge_sites(rows: Iterable[HistoryRow], now: datetime, limits: HealthThresholds) -> list[Finding]:
    """The ``noise`` and ``stale`` findings of every site in *rows* that has enough history to
    judge (a site without enough says nothing either way)."""
    today = now.strftime("%Y-%m-%d")
    findings: list[Finding] = []
    for site, site_rows in sorted(_by_site(rows, today).items()):
        for judge in (_noise, _stale):
            finding = judge(site, site_rows, now, limits)
            if finding is not None:
                findings.append(finding)
    return findings


def _noise(site: str, rows: list[HistoryRow], now: datetime, limits: HealthThresholds) -> Finding | None:
    recent_from = window_start(now, limits.recent)
    baseline_from = window_start(now, limits.recent + limits.baseline)
    recent, before = _totals(rows, recent_from), _totals(rows, baseline_from, recent_from)
    (rate, read), (base_rate, base_read) = _noise_rate(recent), _noise_rate(before)
    if min(read, base_read) < limits.min_observations:
        return None
    holds = rate >= limits.noise_min_rate and rate >= limits.noise_rise * base_rate and rate > base_rate
    mean = recent["distance_sum"] / recent["noise"] if recent["noise"] else 0.0
    message = (f"noise: {site}'s pages vary more than they did ({rate:.0%} noisy over the last "
               f"{format_duration(limits.recent)}, {base_rate:.0%} in the {format_duration(limits.baseline)} before; "
               f"mean noise distance {mean:.1f} bits): its templates are changing; recalibrate (-a calibrate=N) "
               "or check its region and ignore options")
    return Finding(site, "noise", holds, message if holds else "",
                   {"recent_rate": round(rate, 4), "baseline_rate": round(base_rate, 4), "observations": read,
                    "mean_distance": round(mean, 2)})


def _stale(site: str, rows: list[HistoryRow], now: datetime, limits: HealthThresholds) -> Finding | None:
    window_from = window_start(now, limits.stale_after)
    before_from = window_start(now, limits.stale_after + limits.baseline)
    window, before = _totals(rows, window_from), _totals(rows, before_from, window_from)
    seen = sum(window[k] for k in (*_READ, "blocked", "error"))
    if seen < limits.min_observations:
        return None
    quiet = sum(window[k] for k in _QUIET) == seen
    changed_before = sum(before[k] for k in CHANGES)
    readable_before = sum(before[k] for k in _READ)
    span = format_duration(limits.stale_after)
    if quiet and window["blocked"] * 2 >= seen and readable_before:
        return Finding(site, "stale", True,
                       f"blocked: {site} answered block pages (captcha, access denied) to {window['blocked']} of "
                       f"{seen} fetches over the last {span}, and nothing changed: the watcher is locked out",
                       {"blocked": window["blocked"], "observations": seen})
    if quiet and changed_before:
        return Finding(site, "stale", True,
                       f"stale: {site} gave only identical pages ({seen} fetches) over the last {span}, though it "
                       f"changed {changed_before} time(s) in the {format_duration(limits.baseline)} before: check "
                       "that the watcher still sees the live pages (a cache, a frozen mirror, a block page)",
                       {"observations": seen, "changes_before": changed_before, "blocked": window["blocked"]})
    return Finding(site, "stale", False)


def judge_canary(canary: Canary, site: str, state: CanaryState | None, now: datetime) -> Finding | None:
    """Whether *canary* behaves as declared, as of *now* (None: not yet observed)."""
    if state is None or state.first_seen is None:
        return None
    condition, within = f"canary:{canary.key}", format_duration(canary.within)
    if canary.expect == "change":
        since = state.last_changed or state.first_seen
        age = (now - parse_time(since)).total_seconds()
        if age > canary.within:
            what = f"last changed at {since}" if state.last_changed else f"never changed since {since}"
            return Finding(site, condition, True,
                           f"canary: watch {canary.key!r} was expected to change within {within} and has not "
                           f"({what}): the watcher may no longer see its changes",
                           {"watch": canary.key, "expect": "change", "since": since})
        return Finding(site, condition, False, detail={"watch": canary.key})
    if state.last_changed is not None and (now - parse_time(state.last_changed)).total_seconds() <= canary.within:
        return Finding(site, condition, True,
                       f"canary: watch {canary.key!r} was expected not to change and changed at "
                       f"{state.last_changed}: its changes are noise the watcher reports",
                       {"watch": canary.key, "expect": "no_change", "since": state.last_changed})
    return Finding(site, condition, False, detail={"watch": canary.key})

