"""Confirm before reporting (``CHANGEWATCH_CONFIRM_CHANGES``), for the pipeline.

An observation whose verdict is a change of what the page says (text, fields, entities) is a
candidate: before anything is committed, the page is loaded once more and the two loads are
judged together (:mod:`changewatch.core.confirm`). The second load is the request the
candidate's response answered, made again: the watch's vantage point and cookies, never
conditional, ``dont_filter``, rendered again when the watch renders. It is made with
``engine.download_async``: through the downloader middlewares (guard, vantage, render, retry,
redirects), not the scheduler (a round queue, the schedule's spider middleware never hold it
back). It is awaited in the pipeline while the candidate's response is held, and it does not
wait for the scraper: a downloaded response is never queued behind the items that wait for it,
so many candidates at once cannot deadlock the crawl. Its page is read by the request's own
callback; the items it yields for the candidate's key are the confirmation (other items, and
requests, are not this load's to make).

A move (permanent redirects that lead away from where the key was last seen) is a candidate
too: it is reported only where the second load lands at the same place; redirects that lead
elsewhere on every load (a balancer, an A/B split) are where the page varies, not a move.

A key's first observation (its baseline) is loaded twice the same way, so that where the page
varies between loads is learned before any run could alert on it
(``changewatch/confirm/baseline``); not a site watch's pages, whose first crawl would double. At
most one confirmation per key and run; calibration loads and confirmations are never confirmed.
A confirmation that fails (an error, a non-2xx answer, a block page, a timeout) leaves the
candidate reported as without confirmation, ``"confirmed": false``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from scrapy.crawler import Crawler
from scrapy.http import Request, Response
from scrapy.utils.request import fingerprint

from .. import meta
from ..core.comparisons import Kind
from ..core.observation import Observation
from ..core.validators import HttpValidators
from ..items import as_observation
from ..middlewares.conditional import response_origin
from ..runtime.services import CrawlServices
from ..runtime.stats import Stats

__all__ = ["Confirmation", "Loaded", "confirmation_request"]

logger = logging.getLogger(__name__)

#: request meta not carried to the confirmation: the first load's own bookkeeping
_NOT_CARRIED = ("redirect_", "retry_", "download_", "depth", "_changewatch", "_playwright")
_CONDITIONAL_HEADERS = (b"If-None-Match", b"If-Modified-Since", b"If-Match", b"If-Range", b"If-Unmodified-Since")


@dataclass(frozen=True, slots=True)
class Loaded:
    """The confirmation of one key: its observation, response and validators, or why it failed."""

    obs: Observation | None = None
    response: Response | None = None
    origin: HttpValidators | None = None
    failure: str | None = None


def confirmation_request(request: Request, from_start: bool = False) -> Request:
    """*request* made again to confirm what its page showed: the same URL (with *from_start*, the
    URL its redirects started from), callback, vantage point, cookies and render options; no
    validators, never filtered, never skipped."""
    request = request.meta.get(meta._ANSWERED, request)  # a 304's stand-in: the spider's request
    started = (request.meta.get("redirect_urls") or [request.url]) if from_start else [request.url]
    carried = {k: v for k, v in request.meta.items() if not k.startswith(_NOT_CARRIED) and k != meta.NOT_MODIFIED}
    headers = request.headers.copy()
    for name in _CONDITIONAL_HEADERS:
        headers.pop(name, None)
    return request.replace(url=started[0], dont_filter=True, headers=headers,
                           meta={**carried, meta.CONDITIONAL: False, meta.SCHEDULE: False, meta.CONFIRMATION: True})


class Confirmation:
    """The confirmations of one crawl: which keys were confirmed (one each), and how."""

    def __init__(self, crawler: Crawler, runtime: CrawlServices):
        self.crawler, self.runtime = crawler, runtime
        self.enabled = runtime.config.confirm_changes
        self.stats = Stats(crawler, "confirm")
        #: key → the item whose candidate was confirmed, and its confirmation (a conflict's
        #: judgement again reuses it: one request per key and run)
        self.done: dict[str, tuple[int, Loaded]] = {}
        #: second loads by the first load's request, then by their own request's fingerprint: the
        #: keys one response yielded share one second load, never a later one's, however many
        #: other responses' keys are judged in between (a crawl judges CONCURRENT_ITEMS at once);
        #: each goes with the first load's request once nothing holds it any more
        self.shared: weakref.WeakKeyDictionary[Request, dict[bytes, asyncio.Future[Response]]] = \
            weakref.WeakKeyDictionary()

    def wanted(self, obs: Observation, request: Request | None, kind: Kind, moving: bool = False) -> bool:
        """Whether the candidate *obs* (of verdict *kind*, answered to *request*; *moving*: led by
        permanent redirects away from where the key was last seen) is confirmed."""
        if not self.enabled or not (kind.changes_page or moving) or request is None or obs.not_modified:
            return False
        if obs.options.get("site_pages"):  # a site's page set: its own checks (a loss is fetched again)
            return False
        request = request.meta.get(meta._ANSWERED, request)
        return not (request.meta.get(meta.CONFIRM) is False or request.meta.get(meta.CALIBRATION)
                    or request.meta.get(meta.CONFIRMATION) or obs.options.get("confirm") is False)

    def wanted_baseline(self, obs: Observation, request: Request | None, kind: Kind) -> bool:
        """Whether the baseline *obs* (of verdict *kind*) is loaded a second time: a page's text
        (what a second load teaches is where the text varies: fields and entities alone learn
        nothing of it), as a candidate would be confirmed, except a site watch's page (its site's
        first crawl would double)."""
        return kind is Kind.BASELINE and obs.site_watch is None and obs.has_text \
            and self.wanted(obs, request, Kind.CONTENT)

    async def load(self, item: Any, obs: Observation, request: Request, moving: bool = False,
                   baseline: bool = False) -> Loaded:
        """The confirmation of *obs*'s key (made once per key and run); of a move (*moving*), made
        from where the redirects started, to see where they lead this time; of a *baseline*, its
        second load."""
        done = self.done.get(obs.key)
        if done is not None:
            if done[0] == id(item):
                return done[1]
            return Loaded(failure="confirmed once already this run")
        self.stats.inc("baseline" if baseline else "sent")
        loaded = await self._load(obs, request, moving, baseline)
        self.done[obs.key] = (id(item), loaded)
        return loaded

    def forget(self, key: str) -> None:
        """Drop *key*'s confirmation (its response) once its candidate is committed; the key stays
        confirmed for the run."""
        done = self.done.get(key)
        if done is not None:
            self.done[key] = (done[0], Loaded(failure="confirmed once already this run"))

    async def _load(self, obs: Observation, request: Request, moving: bool, baseline: bool) -> Loaded:
        engine = self.crawler.engine
        if engine is None or self.runtime.failure is not None:
            return Loaded(failure="the crawl is stopping")
        try:
            response = await self._download(engine, request, moving)
        except Exception as exc:
            return Loaded(failure=f"{type(exc).__name__}: {exc}".strip(": "))
        if not 200 <= response.status < 300:
            return Loaded(failure=f"HTTP {response.status}")
        try:
            second = await self._observe(obs.key, response)
        except Exception as exc:
            logger.debug("changewatch: %s: the confirmation could not be read", obs.key, exc_info=True)
            return Loaded(failure=f"the page could not be read: {type(exc).__name__}: {exc}")
        if second is None:
            return Loaded(failure="the confirmation yielded no observation of the key")
        if second.error:
            return Loaded(failure=second.error)
        if baseline:  # it only teaches: the first load's validators and evidence are kept
            return Loaded(second)
        return Loaded(second, response if self.runtime.config.evidence_enabled else None,
                      response_origin(response, Stats(self.crawler, "conditional")))

    async def _download(self, engine: Any, request: Request, moving: bool) -> Response:
        """The second load of *request*'s page: one for all the keys one response yielded (each
        reads its own observation of it), made while they are judged."""
        again = confirmation_request(request, moving)
        loads = self.shared.setdefault(request, {})
        mark = fingerprint(again)
        load = loads.get(mark)
        if load is None:
            load = loads[mark] = asyncio.ensure_future(engine.download_async(again))
        else:
            self.stats.inc("shared")
        return await asyncio.shield(load)

    async def _observe(self, key: str, response: Response) -> Observation | None:
        """The observation of *key* that the request's callback makes of *response*."""
        request = response.request
        spider = self.crawler.spider
        if request is None or spider is None:
            return None
        callback = request.callback or getattr(spider, "_parse", None) or spider.parse
        result = callback(response, **request.cb_kwargs)
        if inspect.isawaitable(result):
            result = await result
        items: list[Any] = []
        if hasattr(result, "__aiter__"):
            items = [item async for item in result]
        elif isinstance(result, Iterable) and not isinstance(result, dict | str | bytes):
            items = list(result)
        elif result is not None:
            items = [result]
        for item in items:
            if isinstance(item, Request):
                continue
            obs = as_observation(item)
            if obs is not None and obs.key == key:
                return obs
        return None

    def counted(self, confirmed: bool | None, kind: Kind) -> None:
        """Count what became of one candidate once committed."""
        if confirmed is None:
            return
        if not confirmed:
            self.stats.inc("failed")
        elif kind.changes_page or kind is Kind.MOVED:
            self.stats.inc("held")
        else:
            self.stats.inc("dropped")
