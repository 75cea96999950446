"""Settings, read once per crawler into a frozen dataclass (docs/settings.md documents each)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from scrapy.settings import BaseSettings

from ..store import DEFAULT_STORE_URI

__all__ = ["ChangewatchConfig", "ConfigError", "default_workers"]


class ConfigError(ValueError):
    """A changewatch setting has a value it cannot work with. Not ``NotConfigured``: Scrapy
    would quietly disable the component (the store, the commit step) and go on crawling."""


def default_workers() -> int:
    # Scrapy runs on one core: with a second core, one worker process takes the comparison work.
    return 1 if (os.cpu_count() or 1) > 1 else 0


@dataclass(frozen=True, slots=True)
class ChangewatchConfig:
    store: str = DEFAULT_STORE_URI
    store_synchronous: str = "NORMAL"
    workers: int = 0
    threshold: int | None = None
    report_repeated_errors: bool = False
    diff_max_lines: int = 60
    diff_context: int = 1
    conditional_enabled: bool = True
    conditional_full_fetch_runs: int = 24
    conditional_full_fetch_days: float = 7.0

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> ChangewatchConfig:
        threshold: Any = settings.get("CHANGEWATCH_THRESHOLD")
        workers = settings.get("CHANGEWATCH_WORKERS")
        config = cls(
            store=settings.get("CHANGEWATCH_STORE") or DEFAULT_STORE_URI,
            store_synchronous=str(settings.get("CHANGEWATCH_STORE_SYNCHRONOUS", "NORMAL")).upper(),
            workers=default_workers() if workers in (None, "") else settings.getint("CHANGEWATCH_WORKERS"),
            threshold=None if threshold in (None, "") else int(threshold),
            report_repeated_errors=settings.getbool("CHANGEWATCH_REPORT_REPEATED_ERRORS", False),
            diff_max_lines=settings.getint("CHANGEWATCH_DIFF_MAX_LINES", 60),
            diff_context=settings.getint("CHANGEWATCH_DIFF_CONTEXT", 1),
            conditional_enabled=settings.getbool("CHANGEWATCH_CONDITIONAL_ENABLED", True),
            conditional_full_fetch_runs=settings.getint("CHANGEWATCH_CONDITIONAL_FULL_FETCH_RUNS", 24),
            conditional_full_fetch_days=settings.getfloat("CHANGEWATCH_CONDITIONAL_FULL_FETCH_DAYS", 7.0),
        )
        config.validate()
        return config

    def validate(self) -> None:
        if self.store_synchronous not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ConfigError(f"CHANGEWATCH_STORE_SYNCHRONOUS must be OFF, NORMAL, FULL or EXTRA, "
                                f"not {self.store_synchronous!r}")
        if self.workers < 0:
            raise ConfigError(f"CHANGEWATCH_WORKERS must be >= 0, not {self.workers}")
        if self.conditional_full_fetch_runs < 0 or self.conditional_full_fetch_days < 0:
            raise ConfigError("CHANGEWATCH_CONDITIONAL_FULL_FETCH_RUNS and _DAYS must be >= 0 (0: every fetch "
                                "is a full one)")
        if self.threshold is not None and not 0 <= self.threshold <= 64:
            raise ConfigError(f"CHANGEWATCH_THRESHOLD must be between 0 and 64 bits, not {self.threshold}")
