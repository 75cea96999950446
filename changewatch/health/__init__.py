"""Watching the watcher (docs/health.md): the health history each commit counts in the store,
the conditions judged from it at the end of a crawl (:mod:`.check`, pure), and the extension
that runs the check and logs what it finds through the change log (:mod:`.monitor`)."""

from __future__ import annotations

from .activity import Activity
from .check import Canary, Finding, HealthThresholds

__all__ = ["Activity", "Canary", "Finding", "HealthMonitor", "HealthThresholds"]


def __getattr__(name: str) -> object:
    if name == "HealthMonitor":  # imports Scrapy: only when a crawl asks for it
        from .monitor import HealthMonitor

        return HealthMonitor
    raise AttributeError(name)
