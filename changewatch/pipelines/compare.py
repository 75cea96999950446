"""``ChangewatchPipeline``: the one comparison step. Only changes leave the crawl.

For each observation (any item with ``key``, ``url`` and something to compare): read the key's
stored state and version; judge the observation against the stored snapshot in a worker process
(digest with every comparison, check, compare, diff); commit the new state and the change-log
row in one short transaction if the key is still at the version read, else judge again against
the newer state. A change or an error leaves as a change record; a baseline, noise or nothing
is dropped and counted. It cannot be split or reordered into a chain that turns a change into
``none``: it is one step.

Subclasses may override the hooks, as with Scrapy's FilesPipeline:

- :meth:`observation`: which items are observations, and how they read (default: any item
  with key, url and fields/text/html/entities/error; the item itself is never modified);
- :meth:`comparisons_for`: the comparisons an observation is judged with;
- :meth:`compare_context`: their options (threshold, diff size…);
- :meth:`reclassified`: the judgement as the key's life makes it (gone, moved, recovered:
  :mod:`changewatch.pipelines.lifecycle`);
- :meth:`change_record`: the record of a reported observation (None: not reported);
- :meth:`exported`: the item that leaves the crawl for a logged change.

A change's notification destinations are decided before its commit and written with it
(:mod:`changewatch.notify`); the optional AI summary (:mod:`changewatch.summary`) is the last step
before a record leaves, for this run's records and for redeliveries that have none yet.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem
from scrapy.http import Response

from ..core.comparisons import CompareContext, Comparison, Kind
from ..core.evidence import headers_json, without_credentials
from ..core.learned_state import FLIPPING_AFTER, FLIPPING_WINDOW
from ..core.observation import Observation
from ..core.schedule import ScheduleUpdate
from ..core.siteset import page_set_verdict
from ..core.validators import HttpValidators
from ..health.keyed import FLIPPING, KeyHealth
from ..items import ChangeRecord, as_observation
from ..runtime.offload import ConfirmTask, Judged, ObserveTask, judge
from ..runtime.origins import ServedHeaders
from ..runtime.services import CrawlServices
from ..runtime.stats import Stats
from ..store import Evidence, Outcome, PageSetChange, StoredState, StoreError
from ..store.semantics import is_stale
from ..summary.crawl import CrawlSummaries
from .calibration import Calibration
from .confirm import Confirmation, Loaded
from .lifecycle import moved, reclassified
from .records import change_record, repeated_error

__all__ = ["ChangewatchPipeline"]

logger = logging.getLogger(__name__)


class ChangewatchPipeline:
    """Item pipeline; ``changewatch.Addon`` enables it at 790."""

    def __init__(self, crawler: Crawler, runtime: CrawlServices):
        self.crawler = crawler
        self.runtime = runtime
        self.stats = Stats(crawler, "commit")
        self.kinds: Counter[str] = Counter()
        #: of those, errors that say the page was not observed (all but noisy:); and observations
        #: dropped as older than the stored one (a page was observed: another process had a newer one)
        self.unobserved = 0
        self.stale = 0
        #: site watches' page sets read this run: a sitemap read is no page observed (their failed
        #: discoveries count as failed watches, in unobserved)
        self.page_sets = 0
        #: None when summaries are off: nothing of them on the way of an item then
        self.summaries = CrawlSummaries.from_crawler(crawler, runtime)
        #: -a calibrate=N and -a forget=KEY (read when the spider opens)
        self.calibration: Calibration | None = None
        #: confirm before reporting (CHANGEWATCH_CONFIRM_CHANGES)
        self.confirmation = Confirmation(crawler, runtime)
        #: a watch that keeps flipping (health: flipping:)
        self.health = KeyHealth(crawler)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ChangewatchPipeline:
        pipeline = cls(crawler, CrawlServices.of(crawler))
        crawler.signals.connect(pipeline._log_summary, signal=signals.spider_closed)
        crawler.signals.connect(pipeline._check_observed, signal=signals.spider_closed)
        if pipeline.summaries is not None:  # its connections, once no record can want a summary any more
            crawler.signals.connect(pipeline.summaries.close, signal=signals.spider_closed)
        return pipeline

    async def open_spider(self) -> None:
        await self.runtime.open()
        self.runtime.pool.start(wait=False)
        self.calibration = Calibration.from_crawler(self.crawler, self.runtime)
        await self.calibration.forget_keys()

    def close_spider(self) -> None:
        self.runtime.pool.stop()

    # -- hooks ------------------------------------------------------------------------------------

    def observation(self, item: Any) -> Observation | None:
        """*item* as an observation, or None to let it pass through untouched."""
        return as_observation(item)

    def comparisons_for(self, obs: Observation) -> Sequence[Comparison]:
        """The comparisons *obs* is judged with (in a worker: they are named there by their class's
        dotted path, so they must be importable module-level classes)."""
        return self.runtime.comparisons

    def compare_context(self, obs: Observation) -> CompareContext:
        return CompareContext(options=obs.options, threshold=self.runtime.config.threshold, diff=self.runtime.diff)

    def reclassified(self, obs: Observation, judged: Judged, state: StoredState | None) -> Judged:
        """*judged* with what the key's stored state adds: a 404/410 counted towards ``gone:``
        (CHANGEWATCH_GONE_AFTER), a permanent move (``moved``), the end of a failure streak
        (``recovered``)."""
        return reclassified(obs, judged, state, self.runtime.config.gone_after)

    def change_record(self, obs: Observation, judged: Judged, state: StoredState | None) -> ChangeRecord | None:
        """The record of a judged observation, or None when it is not reported: baselines, noise
        and nothing are not, and an error only when the key starts failing or fails differently."""
        if judged.kind is Kind.ERROR:
            if repeated_error(state, judged.error) and not self.runtime.config.report_repeated_errors:
                return None
        elif not judged.kind.reported:
            return None
        return change_record(self.runtime.spider, obs, judged.kind, judged.members, judged.error, state)

    def exported(self, record: ChangeRecord, change_id: int) -> Any:
        # the change log's id: stable across a redelivery, so consumers can drop duplicates
        return {**record, "change_id": change_id}

    # -- the step ---------------------------------------------------------------------------------

    async def process_item(self, item: Any) -> Any:
        # for every item: the others need no origin either
        origin, response = self.runtime.origins.take(item) or (None, None)
        obs = self.observation(item)
        if obs is None:
            if self.summaries is not None and isinstance(item, dict) and isinstance(item.get("change_id"), int):
                return await self.summaries.summarised(item, item["change_id"])  # a redelivery not summarised yet
            return item
        if self.runtime.failure is not None:
            raise DropItem(f"changewatch: not compared, the crawl is stopping ({self.runtime.failure})",
                           log_level="DEBUG")
        request = self.runtime.requests.take(item)
        calibration = self.calibration
        if calibration is not None and calibration.is_load(obs, request):
            return await calibration.learn(obs, response, self._judge)
        judgement: dict[str, Judged] = {}
        seen: dict[str, Observation] = {}
        confirmed: dict[str, bool | None] = {}

        async def compute(state: StoredState | None) -> Outcome | None:
            if state is not None and is_stale(obs.observed_at, state.last_seen):
                return None  # fetched before the stored observation: it changes nothing
            judged = await self._judge(obs, state, response)
            used, used_origin, used_response, confirmed["last"] = obs, origin, response, None
            moving = moved(obs, state)
            if self.confirmation.wanted_baseline(obs, request, judged.kind):
                assert request is not None
                loaded = await self.confirmation.load(item, obs, request, baseline=True)
                pair = await self._judge_loads(obs, loaded, state, response)
                if pair is not None and pair.kind is Kind.BASELINE:
                    judged = pair  # the first load's baseline, with what the second taught
                else:
                    logger.debug("changewatch: %s: the baseline's second load failed (%s): the first is the "
                                 "baseline", obs.key, loaded.failure or (pair.error if pair else "refused"))
            elif request is not None and self.confirmation.wanted(obs, request, judged.kind, moving):
                loaded = await self.confirmation.load(item, obs, request, moving)
                pair = await self._judge_loads(obs, loaded, state)
                confirmed["last"] = pair is not None and loaded.obs is not None
                if pair is None or loaded.obs is None:
                    judged.members["confirmed"] = False  # reported as one load showed it
                    logger.info("changewatch: %s: the change could not be confirmed (%s): reported as one load "
                                "showed it", obs.key, loaded.failure or "the second page was refused")
                else:
                    # made at the URL the first load ended at: the redirects that led there are the first's
                    used = dataclasses.replace(loaded.obs, moved_from=loaded.obs.moved_from or obs.moved_from)
                    if moving and loaded.obs.url != obs.url:
                        # the two loads were led to different places: redirects that vary per load
                        used = dataclasses.replace(used, moved_from=None)
                    judged, used_origin, used_response = pair, loaded.origin, loaded.response
                    if judged.kind.changes_page or moved(used, state):
                        judged.members["confirmed"] = True
            judged = self.reclassified(used, judged, state)
            judgement["last"], seen["last"] = judged, used
            return self._outcome(used, judged, state, used_origin, used_response)

        try:
            update = await self.runtime.runner.update(self.runtime.spider, obs.key, compute, lease=self.runtime.lease)
        except StoreError as exc:
            self.runtime.fail(f"the store cannot be written: {exc}")
            raise DropItem(f"changewatch: {obs.key}: not committed: {exc}", log_level="DEBUG") from None
        self.stats.inc("conflicts", update.conflicts)
        self.confirmation.forget(obs.key)
        if update.outcome is not None:
            self.confirmation.counted(confirmed.get("last"), update.outcome.kind)
        if update.stale or update.outcome is None or update.committed is None:
            self.stats.inc("stale")
            self.stale += 1
            raise DropItem(f"changewatch: {obs.key}: fetched before the stored observation", log_level="DEBUG")
        self.runtime.activity.committed(obs.key, update.outcome.url, update.committed.observed_at,
                                        obs.options.get("canary"))
        if calibration is not None:
            calibration.schedule(obs, request)
        self._flipping(seen["last"], judgement["last"], update.outcome.url)
        record, change_id = self._result(seen["last"], judgement["last"], update.outcome,
                                         update.committed.change_id, update.committed.clamped)
        if self.summaries is not None:
            record = await self.summaries.summarised(record, change_id)  # type: ignore[arg-type,assignment]
        return self.exported(record, change_id)

    async def _judge(self, obs: Observation, state: StoredState | None, response: Response | None) -> Judged:
        if obs.page_set is not None and not obs.error:  # judged against its rows, in the crawl: nothing to digest
            return Judged(*page_set_verdict(obs.page_set))
        # A key seen only through errors has no snapshot: no baseline yet.
        old = state.snapshot if state is not None else None
        comparisons = self.comparisons_for(obs)
        table = (self.runtime.comparison_table if comparisons is self.runtime.comparisons
                 else comparison_table(comparisons))
        # the body to keep should the verdict make it evidence (the worker compresses it then)
        body = response.body if response is not None and not obs.error and not obs.not_modified else None
        task = ObserveTask(obs, old, table, self.compare_context(obs), body)
        return await judge(self.runtime.pool, task)

    async def _judge_loads(self, first: Observation, loaded: Loaded, state: StoredState | None,
                           first_response: Response | None = None) -> Judged | None:
        """A candidate (*first*) and its confirmation judged together against the stored snapshot
        (in a worker); with none stored, a baseline's two loads (the first's body is the evidence
        then: *first_response*). None when the confirmation failed or confirms nothing (a block
        page: an error, but a ``noisy:`` one, which says the page varies in every line)."""
        if loaded.obs is None:
            return None
        comparisons = self.comparisons_for(loaded.obs)
        table = (self.runtime.comparison_table if comparisons is self.runtime.comparisons
                 else comparison_table(comparisons))
        old = state.snapshot if state is not None else None  # none: a baseline's two loads
        response = loaded.response if old is not None else first_response
        body = response.body if response is not None and not first.error else None
        task = ConfirmTask(first, loaded.obs, old, table, self.compare_context(loaded.obs), body)
        judged = await judge(self.runtime.pool, task)
        if judged.kind is Kind.ERROR and not (judged.error or "").startswith("noisy:"):
            logger.debug("changewatch: %s: the confirmation confirms nothing: %s", first.key, judged.error)
            return None
        return judged

    def _outcome(self, obs: Observation, judged: Judged, state: StoredState | None,
                 origin: HttpValidators | None, response: Response | None) -> Outcome:
        record = self.change_record(obs, judged, state)
        error = judged.kind is Kind.ERROR
        # A failure says nothing about where the page is: the key keeps the URL it was last seen
        # at, which tells the next good observation whether it moved (and was reported moved).
        url = state.url if error and state is not None else obs.url
        logged = dict(record) if record is not None else None
        config = self.runtime.config
        schedule = ScheduleUpdate(None if error else judged.kind.changes_page, config.schedule_bounds) \
            if config.schedule_enabled else None
        # A noisy: error keeps what was learned (that it was said): its text was observed.
        snapshot = judged.snapshot if not error or (judged.error or "").startswith("noisy:") else None
        return Outcome(judged.kind, url, obs.observed_at, snapshot=snapshot,
                       record=logged, error=judged.error, http=None if error else _validators(obs, origin),
                       not_modified=obs.not_modified, notify=self.runtime.notifications.targets(obs, logged),
                       distance=_distance(judged), schedule=schedule,
                       evidence=None if error else _evidence(judged, response, self.runtime.served_headers),
                       pages=None if error or obs.page_set is None else PageSetChange(obs.page_set.added,
                                                                                      obs.page_set.deleted,
                                                                                      obs.page_set.spec))

    def _result(self, obs: Observation, judged: Judged, outcome: Outcome, change_id: int | None,
                clamped: bool) -> tuple[ChangeRecord, int]:
        """The record of a logged change, and its id; DropItem for an observation not reported."""
        kind = outcome.kind.value
        self.kinds[kind] += 1
        self.stats.inc(kind)
        if obs.not_modified:
            self.stats.inc("not_modified")
        if clamped:
            self.stats.inc("clamped")
        if outcome.kind is Kind.ERROR and (outcome.error or "").startswith("noisy:"):
            self.stats.inc("noisy")
            logger.warning("changewatch %s %s: %s", self.runtime.spider, obs.key, outcome.error)
        elif outcome.kind is Kind.ERROR:
            self.unobserved += 1
        elif obs.options.get("site_pages"):
            self.page_sets += 1
        for event, count in judged.counters.items():
            component, _, name = event.partition("/")
            Stats(self.crawler, component).inc(name, count)
        if outcome.record is None or change_id is None:
            if outcome.kind is Kind.ERROR:
                self.stats.inc("error_repeated")
            raise DropItem(f"changewatch: {kind}", log_level="DEBUG")
        self.stats.inc("exported")
        self.runtime.notifications.committed(outcome.notify)
        record: ChangeRecord = dict(outcome.record)  # type: ignore[assignment]  # as logged (a clamped time too)
        return record, change_id

    def _flipping(self, obs: Observation, judged: Judged, url: str) -> None:
        """A watch whose text keeps returning to earlier ones (core/learned_flips.py): its
        ``flipping:KEY`` health condition begins or ends (said once each)."""
        if judged.counters.get(f"content/{FLIPPING}_began"):
            if self.health.begin(obs.key, url, FLIPPING,
                                 f"flipping: watch {obs.key!r} returned to an earlier text in {FLIPPING_AFTER} of its "
                                 f"last {FLIPPING_WINDOW} changes: an A/B test, or servers out of step; each return is "
                                 "held one run, and reported then if it stays", {"watch": obs.key}):
                logger.warning("changewatch: health: %s keeps flipping between texts", obs.key)
        elif judged.counters.get(f"content/{FLIPPING}_over") and self.health.end(obs.key, url, FLIPPING,
                                                                               {"watch": obs.key}):
            logger.info("changewatch: health: %s flips no more", obs.key)

    def _check_observed(self, reason: str) -> None:
        """A crawl that finished with watches due and not one page observed (every one ended in
        an error record: refused, unreachable, an error status, a timeout, a block page, a page
        that could not be judged; no page judged, no 304) is a failure cron and Scrapyd must
        see: one ERROR line, and exit status 1. A site watch's discovery that failed is a watch
        that failed; one that succeeded observed no page (its pages are judged on their own).
        Each watch's own error record has been exported and notified as usual; a crawl stopped
        early (a SIGTERM, CLOSESPIDER_*) is not judged. So is a crawl that judged nothing because
        none of its requests reached the spider (a spider of one's own makes no error record of a
        failed request): the line says why they failed."""
        if reason != "finished" or self.runtime.failure is not None \
                or os.environ.get("SCRAPY_CHECK"):  # scrapy check: its contracts judge the pages
            return
        judged = sum(self.kinds.values()) + self.stale - self.page_sets
        if judged:
            if self.unobserved < judged:
                return
            why = (f"not one page was observed: all {judged} due watch(es) ended in an error (refused, unreachable, "
                   "an error status, a timeout…: see their error records)")
        else:
            lost = self.runtime.fetches.nothing_reached()
            if lost is None:
                return
            why = f"not one page was observed: {lost}"
        logger.error("changewatch: %s", why)
        self.runtime.failed_at_end(why)

    def _log_summary(self) -> None:
        if self.kinds:
            summary = ", ".join(f"{k}={v}" for k, v in sorted(self.kinds.items()))
            logger.info("changewatch: %s observations: %s (store %s)", sum(self.kinds.values()), summary,
                        self.runtime.runner.store)


def comparison_table(comparisons: Sequence[Comparison]) -> dict[str, str]:
    """*comparisons* as a worker loads them: name → dotted path of the class."""
    return {c.name: f"{type(c).__module__}.{type(c).__qualname__}" for c in comparisons}


def _distance(judged: Judged) -> int | None:
    """The simhash distance a noise or content verdict measured, for the health history."""
    value = judged.members.get("distance")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _evidence(judged: Judged, response: Response | None, served: ServedHeaders) -> Evidence | None:
    """The response as served, to keep with its observation (the worker compressed its body): its
    header lines as served where the download handler noted them, else as Scrapy holds them."""
    if judged.kept is None or response is None:
        return None
    pairs = served.of(response)
    if pairs is None:
        pairs = tuple((name.decode("latin-1"), value.decode("latin-1"))
                      for name, values in response.headers.items() for value in values)
    return Evidence(without_credentials(response.url), response.status, headers_json(pairs), judged.kept)


def _validators(obs: Observation, origin: HttpValidators | None) -> HttpValidators | None:
    """The validators to keep with this observation: those of the full response it came from."""
    if origin is None:
        return None
    return HttpValidators(url=origin.url, key=obs.key, etag=origin.etag, last_modified=origin.last_modified,
                          size=origin.size, full_at=obs.observed_at, spec=origin.spec, render=origin.render,
                          links=origin.links)
