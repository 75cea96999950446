"""Every changewatch setting parsed into one frozen :class:`ChangewatchConfig`, in one place
(:meth:`ChangewatchConfig.from_settings`): a bad value stops the crawl at start whichever
components are enabled. The defaults are the table's (:data:`changewatch.config.table.SETTINGS`),
nowhere else.

A bad value raises :class:`ConfigError`, one line: ``NAME = <value>: expected <what is
accepted>``. Never ``NotConfigured``: Scrapy would drop the component with a warning and crawl on
(a guard that does that fails open). Only ``CHANGEWATCH_*_ENABLED = False`` turns a component off.
Checks that need a feature's own code (an Apprise URL, a vantage, the store's schemes) are that
feature's, in its ``from_crawler``, through :meth:`Setting.refine`, in the same one-line form.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings
from scrapy.utils.misc import load_object
from scrapy.utils.reactor import is_asyncio_reactor_installed, is_reactor_installed

from ..core.addresses import AddressPolicy, GuardConfig
from ..core.durations import format_duration
from ..core.schedule import Bounds
from .errors import ConfigError, error_message
from .table import SETTINGS, check_names

__all__ = ["ASYNCIO_REACTOR", "GUARDED_RESOLVER", "ChangewatchConfig", "check_reactor", "check_resolver",
           "default_workers"]

ASYNCIO_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
#: the SSRF guard's resolver, as TWISTED_DNS_RESOLVER names it (changewatch.guard.resolver)
GUARDED_RESOLVER = "changewatch.guard.GuardedResolver"
_GUARDED_RESOLVER_CLASS = "changewatch.guard.resolver.GuardedResolver"
_GUARD_FIELDS = ("allow_private", "ssrf_enabled", "ssrf_allowed_hosts", "ssrf_allowed_networks", "ssrf_nameservers")


def default_workers() -> int:
    """Worker processes when CHANGEWATCH_WORKERS is not set: none on one core (a thread), else
    one per core but the crawl's, at least two and at most four. Two on two cores: the crawl
    process waits on its network as much as on its core, and one worker left the other core a
    third idle (bench/bench_crawl.py --real: 0.46x of plain Scrapy with one, 0.56x with two, on a
    first crawl). Four keep up with any crawl one Scrapy process can make (a worker judges
    ~200-400 real pages a second)."""
    cpus = os.cpu_count() or 1
    return 0 if cpus == 1 else min(4, max(2, cpus - 1))


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangewatchConfig:
    """Every changewatch setting, parsed. A member is named after its setting (without
    ``CHANGEWATCH_``, lower case), except the SSRF settings, which make up :attr:`guard`. No
    member has a default of its own: :meth:`from_settings` fills each from the table."""

    store: str
    store_schemes: Mapping[str, str]  # the project's, over the built-in ones (changewatch.store)
    store_synchronous: str
    store_timeout: float  # seconds
    store_retry_time: float  # seconds
    workers: int
    worker_timeout: float  # seconds
    threshold: int | None
    report_repeated_errors: bool
    gone_after: int  # consecutive 404/410 runs before the error is of class gone
    confirm_changes: bool  # a candidate change is loaded once more, and reported only as both loads show it
    diff_max_lines: int
    diff_context: int
    comparisons: Mapping[str, str]
    conditional_enabled: bool
    conditional_full_fetch_runs: int
    conditional_full_fetch_days: float
    delivery_lease: float  # seconds
    round: str | None
    round_every: float | None  # seconds
    round_ttl: float  # seconds
    round_prefix: str
    round_retry_time: float  # seconds
    vantage: Mapping[str, Any]  # as given: changewatch.middlewares.vantage parses it
    watchlist_dir: str | None  # None: the working directory
    watchlist_timeout: float  # seconds
    watchlist_maxsize: int  # bytes
    health_enabled: bool
    health_recent: float  # seconds
    health_baseline: float  # seconds
    health_stale_after: float  # seconds
    health_min_observations: int
    render_browser: str | None  # None: found (changewatch.render.browser.find_browser)
    render_timeout: float  # seconds, a whole render
    render_full_runs: int  # skipped renders in a row before one is rendered anyway
    render_concurrency: int  # pages (each in its own context) at once
    notify: Any  # its shape checked: changewatch.notify.destinations reads the URLs
    notify_timeout: float  # seconds, each attempt to send one message
    notify_retries: int  # attempts after the first, per destination and run
    notify_retry_time: float  # seconds, all attempts to one destination in one run
    notify_max_chars: int  # characters of one message
    summary_url: str | None  # None: no summaries
    summary_model: str | None
    summary_timeout: float  # seconds
    summary_concurrency: int
    summary_daily_budget: float | None  # None: no limit
    summary_price_per_1k: float
    summary_allow_private: bool
    schedule_enabled: bool
    schedule_min_interval: float  # seconds
    schedule_max_interval: float  # seconds
    evidence_enabled: bool
    evidence_retention: float | None  # seconds; None: kept for ever
    changes_retention: float | None  # seconds; None: kept for ever
    forget_after: float | None  # seconds; None: never forgotten
    progress_interval: float  # seconds; 0: no progress line
    contact: str | None  # in the User-Agent the add-on sets
    guard: GuardConfig

    @property
    def summaries(self) -> bool:
        """Whether records are to be summarised."""
        return self.summary_url is not None

    @property
    def schedule_bounds(self) -> Bounds:
        return Bounds(self.schedule_min_interval, self.schedule_max_interval)

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> ChangewatchConfig:
        """Parse every changewatch setting; raise ConfigError for a name that is not one, for
        the first bad value, or when the crawl runs on a reactor changewatch cannot use
        (:func:`check_reactor`). Reads *settings* only: cheap enough for every component to call."""
        check_names(settings)
        values = {spec.member: spec.read(settings) for spec in SETTINGS}
        _check_summary(values)
        _check_bounds(values["schedule_min_interval"], values["schedule_max_interval"])
        if values["workers"] is None:
            values["workers"] = default_workers()
        allow_private, enabled, hosts, networks, nameservers = (values.pop(f) for f in _GUARD_FIELDS)
        guard = GuardConfig(AddressPolicy.build(enabled=enabled, allow_private=allow_private, allowed_hosts=hosts,
                                                allowed_networks=networks), nameservers)
        check_reactor(settings)
        check_resolver(settings, guard.policy.enabled)
        return cls(**values, guard=guard)

    @classmethod
    def members(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))


def _check_summary(values: dict[str, Any]) -> None:
    """The summary settings that only make sense together."""
    if values["summary_url"] is not None and values["summary_model"] is None:
        raise ConfigError("CHANGEWATCH_SUMMARY_MODEL = None: expected the model to ask (gpt-4o-mini, llama3.2…) "
                          "when CHANGEWATCH_SUMMARY_URL is set")
    budget, price = values["summary_daily_budget"], values["summary_price_per_1k"]
    if budget is not None and budget > 0 and not price:
        raise ConfigError(f"CHANGEWATCH_SUMMARY_PRICE_PER_1K = {price!r}: expected a price > 0 per 1,000 tokens when "
                          f"CHANGEWATCH_SUMMARY_DAILY_BUDGET is set ({budget:g}): a budget cannot be counted without "
                          "one")


def _check_bounds(minimum: float, maximum: float) -> None:
    if minimum > maximum:
        raise ConfigError(error_message("CHANGEWATCH_SCHEDULE_MIN_INTERVAL", format_duration(minimum),
                                        f"a duration no longer than CHANGEWATCH_SCHEDULE_MAX_INTERVAL "
                                        f"({format_duration(maximum)})"))


def check_reactor(settings: BaseSettings) -> None:
    """Raise ConfigError unless the crawl runs without a Twisted reactor (asyncio only,
    ``TWISTED_REACTOR_ENABLED = False``) or on the asyncio reactor: the store, the worker pool and
    the middlewares await asyncio code, which another reactor cannot run. Before any reactor is
    installed (a unit test's bare settings) there is nothing to check yet; Scrapy installs the
    reactor before it builds any component."""
    if not settings.getbool("TWISTED_REACTOR_ENABLED", True) or not is_reactor_installed():
        return
    if is_asyncio_reactor_installed():
        return
    from twisted.internet import reactor  # installed already: this only looks it up

    installed = f"{type(reactor).__module__}.{type(reactor).__qualname__}"
    raise ConfigError(f"TWISTED_REACTOR = {settings.get('TWISTED_REACTOR')!r}: expected {ASYNCIO_REACTOR} (Scrapy's "
                      f"default) or TWISTED_REACTOR_ENABLED = False; changewatch cannot run on {installed}")


def check_resolver(settings: BaseSettings, guard_enabled: bool = True) -> None:
    """Raise ConfigError when the project names another DNS resolver than the SSRF guard's: the
    guard checks every DNS answer (redirects, DNS rebinding) in its own resolver, which the
    process installs from ``TWISTED_DNS_RESOLVER`` (changewatch.Addon sets it). Scrapy's own
    default, left unset, is no choice of the project's: the guard's middleware puts its resolver
    in front of it (a script that runs a crawl without the add-on's process settings)."""
    if not guard_enabled or not settings.getbool("TWISTED_REACTOR_ENABLED", True):
        return
    for name in ("TWISTED_DNS_RESOLVER", "DNS_RESOLVER"):  # DNS_RESOLVER: Scrapy's deprecated name
        if (settings.getpriority(name) or 0) <= SETTINGS_PRIORITIES["default"] or _guarded(settings.get(name)):
            continue
        raise ConfigError(f"{name} = {settings.get(name)!r}: expected {GUARDED_RESOLVER}: the SSRF guard needs its "
                          "own resolver to check every DNS answer; remove the setting (changewatch.Addon sets it), "
                          "or turn the guard off with CHANGEWATCH_SSRF_ENABLED = False")


def _guarded(resolver: Any) -> bool:
    """*resolver* (a dotted path or a class) is the guard's resolver or a subclass of it."""
    try:
        cls = load_object(resolver) if isinstance(resolver, str) else resolver
    except (ImportError, AttributeError, ValueError, NameError):
        return False
    return isinstance(cls, type) and any(f"{c.__module__}.{c.__qualname__}" == _GUARDED_RESOLVER_CLASS
                                         for c in cls.__mro__)
