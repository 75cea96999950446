"""CommitPipeline: one store transaction per observation; only changes leave the crawl."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem

from ..core.compare import DiffOptions, Kind, Snapshot, Verdict, classify
from ..core.validators import HttpValidators
from ..items import ChangeRecord, Observation
from ..runtime.config import ChangewatchConfig
from ..runtime.stats import Stats
from ..store import Outcome, StoredState
from ..store.runner import StoreRunner, spider_name
from .adopt import Adopter

logger = logging.getLogger(__name__)


def _error_class(error: str | None) -> str:
    return (error or "").split(":", 1)[0]


def snapshot_of(obs: Observation) -> Snapshot:
    text: Snapshot | None = obs.digest.get("text")
    norm_fields = obs.digest.get("norm_fields")
    return Snapshot(
        fields=obs.fields if norm_fields is not None else None,
        norm_fields=norm_fields,
        text=text.text if text else None,
        raw_hash=text.raw_hash if text else None,
        content_hash=text.content_hash if text else None,
        fingerprint=text.fingerprint if text else None,
        entities=obs.digest.get("entities"),
    )


def change_record(spider: str, obs: Observation, verdict: Verdict, state: StoredState | None) -> ChangeRecord:
    record: ChangeRecord = {"key": obs.key, "url": obs.url, "kind": verdict.kind.value,
                            "observed_at": obs.observed_at, "spider": spider}
    if state is not None and state.last_good:
        record["previous_observed_at"] = state.last_good
    if verdict.error is not None:
        record["error"] = verdict.error
        return record
    if verdict.changes:
        record["changes"] = verdict.changes
    for member in ("added", "removed", "changed"):
        if getattr(verdict, member):
            record[member] = getattr(verdict, member)  # type: ignore[literal-required,unused-ignore]
    if verdict.diff is not None:
        record["diff"] = verdict.diff
    if verdict.distance is not None and verdict.kind is not Kind.NOISE:
        record["distance"] = verdict.distance
    return record


class CommitPipeline:
    """Compares each observation with the last good one and, in one store transaction, moves
    the state and appends the change log. Returns a :class:`ChangeRecord` for a change or an
    error; drops everything else (baselines, noise, none), counting each kind in the stats."""

    def __init__(self, crawler: Crawler, config: ChangewatchConfig):
        self.crawler = crawler
        self.config = config
        self.runner = StoreRunner.of(crawler, config)
        self.stats = Stats(crawler, "commit")
        self.kinds: Counter[str] = Counter()
        self.adopt = Adopter.of(crawler)
        self._opened = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CommitPipeline:
        pipeline = cls(crawler, ChangewatchConfig.from_settings(crawler.settings))
        crawler.signals.connect(pipeline._log_summary, signal=signals.spider_closed)
        return pipeline

    async def open_spider(self) -> None:
        await self.runner.acquire()
        self._opened = True

    async def close_spider(self) -> None:
        if self._opened:
            self._opened = False
            await self.runner.release()

    def _decide(self, spider: str, obs: Observation, threshold: int | None) -> Any:
        config = self.config
        diff_options = DiffOptions(context=config.diff_context, max_lines=config.diff_max_lines)

        def decide(state: StoredState | None) -> Outcome:
            if obs.not_modified:
                # The server vouches the page is as it was at the full fetch the validators came from.
                return Outcome(Kind.NONE, obs.url, obs.observed_at, not_modified=True)
            new = snapshot_of(obs)
            # A key seen only through errors has no baseline yet.
            old = state.snapshot if state is not None and state.last_good is not None else None
            verdict = classify(old, new, threshold=threshold, error=obs.error, diff=diff_options)
            record: dict[str, Any] | None = None
            if verdict.kind is Kind.ERROR:
                repeated = (state is not None and state.error_streak > 0
                            and _error_class(state.last_error) == _error_class(verdict.error))
                if not repeated or config.report_repeated_errors:
                    record = dict(change_record(spider, obs, verdict, state))
            elif verdict.kind.reported:
                record = dict(change_record(spider, obs, verdict, state))
            keep = verdict.keep if verdict.kind is not Kind.ERROR else None
            if verdict.kind is Kind.NONE and keep == old:
                keep = None  # nothing to rewrite
            return Outcome(verdict.kind, obs.url, obs.observed_at, snapshot=keep, record=record,
                           error=verdict.error, http=self._validators(obs, verdict.kind))

        return decide

    @staticmethod
    def _validators(obs: Observation, kind: Kind) -> HttpValidators | None:
        """The validators to keep with this observation: those of its full response, unless it
        is an error (the page's validators must keep pointing at the last good one)."""
        origin: HttpValidators | None = obs.digest.get("origin")
        if origin is None or kind is Kind.ERROR:
            return None
        return HttpValidators(url=origin.url, key=obs.key, etag=origin.etag, last_modified=origin.last_modified,
                              size=origin.size, full_at=obs.observed_at, spec=origin.spec)

    async def process_item(self, item: Any) -> Any:
        obs = self.adopt(item)
        if obs is None:
            return item
        spider = spider_name(self.crawler)
        threshold = obs.options.get("threshold")
        if threshold is None:  # the watch sets none: the project-wide default applies
            threshold = self.config.threshold
        outcome = await self.runner.call(self.runner.store.apply, spider, obs.key,
                                         self._decide(spider, obs, threshold))
        kind = outcome.kind.value
        self.kinds[kind] += 1
        self.stats.inc(kind)
        logger.debug("changewatch %s %s: %s", spider, obs.key, kind)
        if outcome.record is None:
            if outcome.kind is Kind.ERROR:
                self.stats.inc("error_repeated")
            raise DropItem(f"changewatch: {kind}", log_level="DEBUG")
        self.stats.inc("exported")
        # the change log's id: stable across a redelivery, so consumers can drop duplicates
        return {**outcome.record, "change_id": outcome.change_id}

    def _log_summary(self) -> None:
        if self.kinds:
            summary = ", ".join(f"{k}={v}" for k, v in sorted(self.kinds.items()))
            logger.info("changewatch: %s observations: %s (store %s)", sum(self.kinds.values()), summary,
                        self.runner.store)
