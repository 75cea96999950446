"""``ChangewatchSpider``: the base of a per-site spider (docs/adding-a-site.md).

A per-site spider finds the pages, names each watched thing with a stable key and says which
fields and entities to compare; the pipelines do the rest (normalising, comparing with the
last good observation, the store, the change feed). Nothing here is required: any spider that
yields observation-like items works. This class only makes the conventions the easy path.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar
from urllib.parse import urljoin, urlsplit

import scrapy
from scrapy.crawler import Crawler
from scrapy.http import Request, Response
from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object
from twisted.python.failure import Failure

from . import meta as meta_keys
from .config import ConfigError, said_at_start
from .core.durations import parse_duration
from .core.render_options import parse_render
from .core.text.normalise import NORMALISER_VERSION
from .core.urls import canonical_url
from .extract.observe import ReceivedBytes, describe_failure, failed_url
from .extract.page import Page, count_undecodable_page
from .extract.specs import Entities, FieldSpec, as_fields
from .guard import reports_refusals
from .items import Observation
from .middlewares.vantage import VantageError, vantage_from_setting
from .runtime.learning import LearningError, parse_calibrate, parse_forget
from .runtime.spider import Canaries
from .runtime.stats import Stats

logger = logging.getLogger(__name__)

__all__ = ["ChangewatchSpider"]


class ChangewatchSpider(scrapy.Spider):
    """Base of per-site spiders.

    - ``fields`` / ``entities`` (class attributes, optional): the default specs of
      :meth:`observe`, checked when the spider starts (a bad selector stops the run naming the
      spider and the field).
    - ``-a site=URL``: the site's base URL (staging, a local copy); :meth:`url` joins paths to it.
    - :meth:`watch` builds the request of a watched page: never filtered as a duplicate, its
      failures become ``error`` observations under the same key.
    - ``vantage`` (class attribute): the spider's fixed vantage point (``CHANGEWATCH_VANTAGE`` at
      spider priority) for every request; ``vantage=`` on :meth:`watch` for one request.
    - ``spec_version`` (class attribute): bump it when the parsing changes; re-visits are
      conditional requests (docs/conditional.md), and a new version fetches each page in full once.
    - ``-a calibrate=N``: each watched page is loaded N extra times after its normal load, to learn
      its normal variation (nothing is exported of them); ``-a forget=KEY`` forgets what was
      learned of a key (docs/watchlist.md, "Learned noise").
    - ``render`` (class attribute): render every watched page in a browser (``True``, or a mapping
      of ``wait_for``, ``timeout``, ``block``: docs/rendering.md); ``render=`` on :meth:`watch`
      for one request (``False``: this one is not).
    - ``changewatch_canaries()`` (optional): the canaries the spider declares (docs/health.md).

    What the runtime reads of it is :class:`changewatch.runtime.spider.SpiderOptions`.
    """

    #: default field specs of :meth:`observe` (name: FieldSpec or selector string)
    fields: ClassVar[Mapping[str, FieldSpec | str]] = {}
    #: default entity spec of :meth:`observe`
    entities: ClassVar[Entities | None] = None
    #: the site's base URL when ``-a site=`` is not given
    default_site: ClassVar[str | None] = None
    #: why the crawl cannot start (a bad ``-a calibrate=``): the runtime stops it as it opens
    changewatch_cannot_start: str | None = None
    #: the stats' component: ``changewatch/<stats_component>/observed``, ``…/failed``
    stats_component: ClassVar[str] = "spider"
    #: what :meth:`refuse_start` was told, raised from from_crawler when no runtime will stop the crawl
    _start_problem: Exception | None = None
    #: the spider's vantage point (proxy, accept_language, cookies, headers): CHANGEWATCH_VANTAGE
    vantage: ClassVar[Mapping[str, Any] | None] = None
    #: a fixture site of ``changewatch/examples/fixtures`` that ``scrapy check`` serves on
    #: 127.0.0.1 when no ``-a site=`` is given (the example spiders set it)
    fixture_site: ClassVar[str | None] = None
    #: bump when the spider's parsing changes: the next run fetches every page in full once,
    #: instead of being told "304 Not Modified" about pages it would now read differently
    spec_version: ClassVar[str | None] = None
    #: render watched pages in a browser: True, or {"wait_for": CSS, "timeout": s, "block": [types]}
    render: ClassVar[bool | Mapping[str, Any] | None] = None

    cw_stats: Stats
    #: body bytes each download received: a truncated answer's error says how many arrived
    received_bytes: ReceivedBytes | None = None

    @property
    def changewatch_renders(self) -> bool:
        """Whether this spider renders pages (RenderMiddleware stops the crawl at start when there
        is no browser)."""
        return bool(self.render)

    @property
    def changewatch_listed(self) -> int | None:
        """How many pages the spider watches, when it knows (the progress line's total)."""
        return None

    def __init__(self, *args: Any, site: str | None = None, calibrate: Any = None, forget: Any = None,
                 **kwargs: Any):
        super().__init__(*args, **kwargs)
        # -a calibrate=N, -a forget=KEY: checked now, so that a bad value stops the run before it starts
        try:
            self.changewatch_calibrate = parse_calibrate(calibrate)
        except LearningError as exc:
            self.changewatch_calibrate = 0
            self.refuse_start(exc)
        self.changewatch_forget = parse_forget(forget)
        self.site = (site or self.default_site or "").strip() or None
        if self.site is not None:
            parts = urlsplit(self.site)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"spider {self.name!r}: site must be an absolute http(s) URL, not {site!r}")
        # Checked now, not on the first page: a typo stops the run naming the spider and field.
        self._fields = as_fields(self.fields, owner=f"spider {self.name!r}")
        try:
            self._render = parse_render(self.render)
        except ValueError as exc:
            raise ValueError(f"spider {self.name!r}: {exc}") from None

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        if cls.vantage is not None:
            with said_at_start():
                try:
                    vantage_from_setting(dict(cls.vantage))
                except VantageError as exc:
                    raise VantageError(f"spider {cls.name!r}: vantage: {exc}") from None
            settings.set("CHANGEWATCH_VANTAGE", dict(cls.vantage), priority="spider")

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> ChangewatchSpider:
        if not _runtime_expected(crawler):
            # Without it nothing compares or stores: every observation would leave the crawl as
            # if it were a change, on every run, and the crawl exit 0.
            with said_at_start():
                raise ConfigError(f"spider {cls.name!r} needs changewatch enabled: add ADDONS = "
                                  '{"changewatch.Addon": 0} to the project\'s settings.py')
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.cw_stats = Stats(crawler, cls.stats_component)
        spider.received_bytes = ReceivedBytes.of_crawler(crawler)
        if spider.changewatch_cannot_start is None:
            with said_at_start():  # a bad setting met here is one line in any project, not a traceback
                spider.prepare(crawler)
        if spider._start_problem is not None and not _runtime_expected(crawler):
            raise spider._start_problem  # nothing would stop the crawl: fail loudly rather than run wrong
        return spider

    def prepare(self, crawler: Crawler) -> None:
        """What the spider reads before the engine starts (the watch spider: its watchlist); a
        problem goes to :meth:`refuse_start`. Nothing here."""

    def refuse_start(self, problem: Exception) -> None:
        """Say once why the spider cannot start; the runtime stops the crawl as the spider opens
        (exit status 1), before anything is fetched or stored. Raised from the spider's
        construction instead, it came out as a 25-line asyncio "Task exception was never
        retrieved" traceback."""
        logger.error("The spider %r cannot start: %s", self.name, problem)
        self._start_problem = problem
        self.changewatch_cannot_start = f"spider {self.name!r}: {problem}"

    def changewatch_canaries(self) -> Canaries:
        """The canaries the spider declares: key → (url, {"expect": …, "within": …}) (docs/health.md)."""
        return {}

    def url(self, path: str) -> str:
        """*path* joined with the site's base URL (``-a site=``)."""
        if self.site is None:
            raise ValueError(f"spider {self.name!r} needs a site: scrapy crawl {self.name} -a site=URL")
        return urljoin(self.site if self.site.endswith("/") else self.site + "/", path.lstrip("/"))

    def page(self, response: Response) -> Page:
        """The response as a :class:`~changewatch.page.Page`, its errors naming this spider."""
        return Page(response, owner=f"spider {self.name!r}")

    def watch(self, url: str, callback: Any, *, key: str | None = None, vantage: Mapping[str, Any] | None = None,
              conditional: bool = True, render: bool | Mapping[str, Any] | None = None,
              every: str | float | None = None, scheduled: bool | None = None, confirm: bool = True,
              meta: Mapping[str, Any] | None = None, **kwargs: Any) -> Request:
        """The request of a watched page. *key*: the key its observation will have, when it is
        known before the fetch (a SKU from the category page); a failed fetch is then an error
        of that key. Without it, failures are keyed by the page's canonical URL.

        *conditional* False: always fetch in full. For pages that lead to others (a category
        page yields its products and next page: a 304 would skip them) and for pages that are
        one part of an observation assembled over several (a 304 would drop the other parts).

        *render*: render the page in a browser (True, or a mapping of ``wait_for``, ``timeout``,
        ``block``); None: as the class's ``render`` says; False: not rendered.
        *every*: a duration (``"6h"``, seconds): the request is made only when the key's last
        observation is at least this old (it needs *key*; docs/schedule.md). With
        ``CHANGEWATCH_SCHEDULE_ENABLED``, a keyed request without it is made when its key is due.
        *confirm* False: a change of the page is reported from this one load, not confirmed by a
        second (``CHANGEWATCH_CONFIRM_CHANGES``).
        *scheduled* False: made on every run, due or not; by default, it is False with
        *conditional* False (a page fetched in full because it leads to others must be fetched)."""
        request_meta = dict(meta or {})
        options = self._render if render is None else parse_render(render)
        if options is not None:
            request_meta[meta_keys.RENDER] = options
        if not (conditional if scheduled is None else scheduled):
            request_meta[meta_keys.SCHEDULE] = False
        if every is not None:
            if key is None:
                raise ValueError(f"spider {self.name!r}: watch({url!r}, every=...) needs key=: the schedule is per key")
            try:
                request_meta[meta_keys.EVERY] = parse_duration(every)
            except ValueError as exc:
                raise ValueError(f"spider {self.name!r}: watch({url!r}, every={every!r}): {exc}") from None
        if not conditional:
            request_meta[meta_keys.CONDITIONAL] = False
        if not confirm:
            request_meta[meta_keys.CONFIRM] = False
        # a new spec_version, or a version of changewatch that reads pages differently, forces one
        # full fetch: the first comparison after either must see the page, not a 304
        request_meta.setdefault(meta_keys.SPEC, f"{self.name}:{self.spec_version or ''}:n{NORMALISER_VERSION}")
        if key is not None:
            request_meta[meta_keys.KEY] = key
        if vantage is not None:
            request_meta[meta_keys.VANTAGE] = vantage
        kwargs.setdefault("errback", self.observation_failed)
        return Request(url, callback=callback, dont_filter=True, meta=request_meta, **kwargs)

    def observe(self, response: Response | Page, key: str, fields: Mapping[str, FieldSpec | str] | None = None, *,
                entities: Entities | None = None, text: bool = False, region: str | None = None,
                kinds: Mapping[str, str] | None = None, options: Mapping[str, Any] | None = None) -> Observation:
        """An Observation of *response* under *key*: *fields* (default: the class's ``fields``)
        and *entities* (default: the class's ``entities``) extracted; with *text* or *region*
        the page's text compared too. Extraction that matches nothing is an ``error``."""
        page = response if isinstance(response, Page) else self.page(response)
        specs = self._fields if fields is None else fields
        obs = page.observe(key, specs or None, entities=entities if entities is not None else self.entities,
                           text=text, region=region, kinds=kinds, options=options)
        self.cw_stats.inc("error" if obs.error else "observed")
        self.cw_stats.inc("jsonld_invalid_blocks", page.invalid_jsonld_blocks)
        count_undecodable_page(self.crawler, page)
        return obs

    @reports_refusals  # as a `refused:` error record
    def observation_failed(self, failure: Failure) -> Iterator[Observation]:
        """Errback of :meth:`watch`: the failed fetch as an ``error`` observation."""
        request: Request = failure.request  # type: ignore[attr-defined]
        self.cw_stats.inc("failed")
        yield self.failed_observation(request, failed_url(request.url), self.describe_failure(failure))

    def describe_failure(self, failure: Failure) -> str:
        """The ``error`` of a failed fetch, in words (``fetch: the server closed the connection
        without answering``; an answer cut short says how many of how many bytes arrived)."""
        request: Request | None = getattr(failure, "request", None)
        counter = self.received_bytes
        return describe_failure(failure, received=counter.received(request) if counter and request else None,
                                maxsize=self.crawler.settings.getint("DOWNLOAD_MAXSIZE"))

    def failed_observation(self, request: Request, url: str, error: str) -> Observation:
        """The ``error`` observation of *request*'s failed fetch: keyed as :meth:`watch` was told
        (else by the page's canonical URL)."""
        key = request.meta.get(meta_keys.KEY) or canonical_url(url)
        return Observation(key=str(key), url=url, error=error)


def _runtime_expected(crawler: Crawler) -> bool:
    """Whether the crawl will have the CrawlServices extension, which stops it with exit
    status 1 when the spider cannot start. Asked while the spider is built, before add-ons have
    updated the settings: so by the add-on (or the extension) being named in them."""
    from .addon import Addon
    from .runtime.services import CrawlServices

    for setting, wanted in (("ADDONS", Addon), ("EXTENSIONS", CrawlServices)):
        for component, priority in crawler.settings.getwithbase(setting).items():
            if priority is None:
                continue
            try:
                cls = load_object(component) if isinstance(component, str) else component
            except (ImportError, AttributeError, ValueError, NameError):
                continue
            if isinstance(cls, type) and issubclass(cls, wanted):
                return True
    return False

