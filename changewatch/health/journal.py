"""The health check against a store: read the history of the windows it judges (one query,
bounded by sites, days and kinds), the open conditions and the canaries' states; log each
condition that begins (an ``error`` record, ``health: …``) and each that ends (``recovered``)
through the store's change log, once, whichever crawl gets there first. No Scrapy."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..store.health import HealthStore, HistoryQuery, OpenCondition, site_root
from ..store.protocol import Store
from ..store.records import Lease
from ..store.semantics import format_time
from .check import Canary, CanaryState, Finding, HealthThresholds, judge_canary, judge_sites, window_start

__all__ = ["CheckResult", "Logged", "health_record", "run_check"]


@dataclass(frozen=True, slots=True)
class Logged:
    """A health record written to the change log: its id and the record."""

    change_id: int
    record: dict[str, Any]


@dataclass
class CheckResult:
    logged: list[Logged] = field(default_factory=list)
    #: conditions that hold (newly logged or already open), by their class (noise, stale, blocked, canary)
    holding: list[Finding] = field(default_factory=list)
    #: history rows read (0: the store has no history to judge by yet)
    rows: int = 0


def condition_class(finding: Finding) -> str:
    """``noise``, ``stale``, ``blocked`` or ``canary``: what a finding's message starts with."""
    return finding.message.split(":", 1)[0] if finding.message else finding.condition.split(":", 1)[0]


def health_record(spider: str, finding: Finding, now: str, url: str | None) -> dict[str, Any]:
    """The ``error`` record of a condition that begins: ``key`` the site, ``url`` its root."""
    return {"key": finding.site, "url": site_root(finding.site, url), "kind": "error", "observed_at": now,
            "spider": spider, "error": f"health: {finding.message}",
            "health": {"condition": finding.condition, "site": finding.site, **(finding.detail or {})}}


def recovery_record(spider: str, condition: OpenCondition, now: str, url: str | None) -> dict[str, Any]:
    """The ``recovered`` record of a condition that ended."""
    return {"key": condition.site, "url": site_root(condition.site, url), "kind": "recovered", "observed_at": now,
            "spider": spider, "health": {"condition": condition.condition, "site": condition.site,
                                         "recovered_from": condition.error, "since": condition.since}}


def run_check(store: Store, spider: str, now: datetime, limits: HealthThresholds, sites: dict[str, str],
              canaries: dict[str, tuple[Canary, str]], lease: Lease | None) -> CheckResult:
    """Judge *spider*'s sites and *canaries* as of *now*, and log what begins and what ends."""
    assert isinstance(store, HealthStore)
    result = CheckResult()
    rows = list(store.history(HistoryQuery((spider,), window_start(now, limits.reach))))
    result.rows = len(rows)
    findings = judge_sites(rows, now, limits)
    for key, (canary, site) in sorted(canaries.items()):
        state = store.read(spider, key)
        known = CanaryState(state.first_seen, state.last_seen, state.last_changed) if state else None
        if (finding := judge_canary(canary, site, known, now)) is not None:
            findings.append(finding)
    stamp = format_time(now)
    open_ = {(c.site, c.condition): c for c in store.conditions(spider)}
    for finding in findings:
        current = open_.get((finding.site, finding.condition))
        url = sites.get(finding.site)
        if finding.holds:
            result.holding.append(finding)
            if current is None:
                record = health_record(spider, finding, stamp, url)
                change_id = store.open_condition(spider, finding.site, finding.condition, stamp, record, lease)
                if change_id is not None:
                    result.logged.append(Logged(change_id, record))
        elif current is not None:
            record = recovery_record(spider, current, stamp, url)
            change_id = store.close_condition(spider, finding.site, finding.condition, record, lease)
            if change_id is not None:
                result.logged.append(Logged(change_id, record))
    return result
