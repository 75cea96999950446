"""Components a test plugs into a real crawl through settings, as a user would plug their own."""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping
from typing import Any, ClassVar

from scrapy import signals
from scrapy.crawler import Crawler

from changewatch.core.comparisons import CompareContext, Difference, Kind, Status
from changewatch.core.observation import Observation

KILL_MARKER = "KILL-THE-WORKER"


class WorkerKiller:
    """A comparison (``CHANGEWATCH_COMPARISONS``) whose digest kills the process it runs in when
    the page carries :data:`KILL_MARKER`: a page that crashes a worker, on demand."""

    name: ClassVar[str] = "worker_killer"
    kind: ClassVar[Kind] = Kind.CONTENT
    rank: ClassVar[int] = 99
    part_version: ClassVar[int] = 1

    def digest(self, obs: Observation) -> None:
        html = obs.html.decode("latin-1") if isinstance(obs.html, bytes) else obs.html or ""
        if KILL_MARKER in html:
            os.kill(os.getpid(), signal.SIGKILL)
        return None

    def check(self, old: Any, new: Any) -> str | None:
        return None

    def compare(self, old: Any, new: Any, context: CompareContext) -> Difference:
        return Difference(Status.NONE)

    def counters(self, part: Any) -> Mapping[str, int]:
        return {}

    def encode(self, part: Any) -> tuple[Any, bytes | None]:
        return None, None

    def decode(self, data: Any, blob: bytes | None, version: int) -> Any:
        return None


class StoreGoesReadOnly:
    """An extension that makes the crawl's store read-only (SQLite's ``query_only``, so every
    write fails as on a read-only file) right after its ``TESTS_READONLY_AFTER``-th
    committed observation (0: as the spider opens, before its undelivered changes are claimed).

    Counted at the store's commit, in the same call: counting items as they leave the pipeline
    raced with the next item's commit, which a loaded machine let through."""

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self.after = crawler.settings.getint("TESTS_READONLY_AFTER", 1)
        self.committed = 0
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StoreGoesReadOnly:
        return cls(crawler)

    def spider_opened(self) -> None:
        from changewatch.runtime.services import CrawlServices

        store: Any = CrawlServices.of(self.crawler).runner.store
        if self.after == 0:
            store.db.execute("PRAGMA query_only=1")
            return
        commit = store.commit

        def counted_commit(*args: Any, **kwargs: Any) -> Any:
            result = commit(*args, **kwargs)
            self.committed += 1
            if self.committed == self.after:
                store.db.execute("PRAGMA query_only=1")
            return result

        store.commit = counted_commit


class SimulatedClock:
    """An item pipeline (before changewatch's, at 100) that dates every observation at the
    setting ``TESTS_NOW`` (an ISO 8601 time), as a per-site spider that dates its own
    observations does: a crawl "on" a simulated day, for the health tests' months in minutes."""

    def __init__(self, now: str):
        self.now = now

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SimulatedClock:
        return cls(str(crawler.settings.get("TESTS_NOW")))

    def process_item(self, item: Any) -> Any:
        if isinstance(item, Observation):
            item.observed_at = self.now
        return item


class Peaks:
    """An extension (``EXTENSIONS``): at each response, the most requests Scrapy's scheduler held
    (``test/scheduler_peak``) and the most timed calls Twisted's reactor held, cancelled ones
    included (``test/timed_calls_peak``; its private heap: this is what the test is about)."""

    def __init__(self, crawler: Crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Peaks:
        peaks = cls(crawler)
        crawler.signals.connect(peaks.response, signal=signals.response_received)
        return peaks

    def response(self, response: Any, request: Any, spider: Any) -> None:
        from twisted.internet import reactor

        stats, engine = self.crawler.stats, self.crawler.engine
        assert stats is not None and engine is not None
        scheduler = getattr(engine, "scheduler", None) or engine._slot.scheduler  # type: ignore[union-attr]
        stats.max_value("test/scheduler_peak", len(scheduler))
        pending = getattr(reactor, "_pendingTimedCalls", None)
        if pending is not None:
            stats.max_value("test/timed_calls_peak", len(pending))
