"""Every changewatch setting, parsed in one place: the table :data:`SETTINGS` names each setting's
parser, default and (through the parser) what it accepts; :meth:`ChangewatchConfig.from_settings`
reads all of them into one frozen dataclass, so a bad value stops the crawl at start whichever
components are enabled. docs/settings.md documents each; tests/runtime/test_settings.py feeds
every documented setting bad values through a real crawler.

A bad value raises :class:`ConfigError`, one line: ``NAME = <value>: expected <what is
accepted>``. Never ``NotConfigured``: Scrapy would drop the component with a warning and crawl on
(a guard that does that fails open). Only ``CHANGEWATCH_*_ENABLED = False`` turns a component off.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from scrapy.settings import BaseSettings
from scrapy.utils.reactor import is_asyncio_reactor_installed, is_reactor_installed

from ..core.comparisons import BUILTIN_COMPARISONS
from ..core.destinations import NotifyRoutes
from ..core.durations import format_duration
from ..core.schedule import Bounds
from ..guard.config import GuardConfig, parse_nameserver
from ..guard.policy import AddressPolicy, parse_host_entry, parse_network
from ..notify.setting import NotifySetting
from ..store import BUILTIN_STORE_SCHEMES, DEFAULT_STORE_URI
from .parsers import (
    SCHEME,
    BadValue,
    Bool,
    Choice,
    Directory,
    DottedPathTable,
    Duration,
    Executable,
    Float,
    HttpUrl,
    Int,
    ListOf,
    Name,
    StoreUri,
    Text,
    json_mapping,
)

if TYPE_CHECKING:
    from ..core.vantage import Vantage

__all__ = ["ASYNCIO_REACTOR", "DEFAULT_COMPARISONS", "DEFAULT_STORE_SCHEMES", "SETTINGS", "SETTINGS_BY_NAME",
           "ChangewatchConfig", "ConfigError", "Setting", "VantageError", "check_reactor", "default_workers",
           "error_message"]

ASYNCIO_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"

#: built-in store classes by URI scheme; CHANGEWATCH_STORE_SCHEMES is merged over it
DEFAULT_STORE_SCHEMES: Mapping[str, str] = MappingProxyType(BUILTIN_STORE_SCHEMES)
#: built-in comparisons by name; CHANGEWATCH_COMPARISONS is merged over it (None removes one)
DEFAULT_COMPARISONS: Mapping[str, str] = MappingProxyType(BUILTIN_COMPARISONS)

_SHOWN_CHARS = 200
_CREDENTIALS = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@'\"]*@")


class ConfigError(ValueError):
    """A changewatch setting has a value it cannot work with. Not ``NotConfigured``: Scrapy
    would quietly disable the component (the store, the commit step, the SSRF guard) and go on
    crawling."""


class VantageError(ConfigError):
    """CHANGEWATCH_VANTAGE is wrong: the crawl would go out from the wrong country or language."""


def default_workers() -> int:
    """Worker processes when CHANGEWATCH_WORKERS is not set: none on one core (a thread), else
    one per core but the crawl's, at least two and at most four. Two on two cores: the crawl
    process waits on its network as much as on its core, and one worker left the other core a
    third idle (bench/bench_crawl.py --real: 0.46x of plain Scrapy with one, 0.56x with two, on a
    first crawl). Four keep up with any crawl one Scrapy process can make (a worker judges
    ~200-400 real pages a second)."""
    cpus = os.cpu_count() or 1
    return 0 if cpus == 1 else min(4, max(2, cpus - 1))


def _shown(raw: Any) -> str:
    """*raw* as an error message may quote it: its repr, shortened, header and cookie values
    masked (the message also drops URL credentials: a proxy's or a store's password)."""
    if isinstance(raw, Mapping) and any(k in raw for k in ("headers", "cookies")):
        raw = {k: ({n: "***" for n in v} if k in ("headers", "cookies") and isinstance(v, Mapping) else v)
               for k, v in raw.items()}
    text = repr(raw)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS - 1] + "…"


def error_message(name: str, raw: Any, accepts: str, detail: str = "") -> str:
    """The one line a bad value stops the crawl with.

    >>> error_message("CHANGEWATCH_THRESHOLD", "abc", "an integer from 0 to 64")
    "CHANGEWATCH_THRESHOLD = 'abc': expected an integer from 0 to 64"
    >>> error_message("CHANGEWATCH_STORE", "postgresql://me:secret@db/x", "a URI", "unknown scheme")
    "CHANGEWATCH_STORE = 'postgresql://***@db/x': expected a URI (unknown scheme)"
    """
    line = f"{name} = {_shown(raw)}: expected {accepts}" + (f" ({detail})" if detail else "")
    return _CREDENTIALS.sub(r"\1***@", " ".join(line.splitlines()))


class Parser(Protocol):
    @property
    def accepts(self) -> str: ...

    def __call__(self, raw: Any) -> Any: ...


@dataclass(frozen=True, slots=True)
class VantageSetting:
    """CHANGEWATCH_VANTAGE: the vantage options as a dict or a JSON object."""

    @property
    def accepts(self) -> str:
        return "a dict (or a JSON object) with proxy, headers, cookies and accept_language"

    def __call__(self, raw: Any) -> Vantage:
        from ..core.vantage import VANTAGE_OPTIONS, parse_vantage

        value = json_mapping(raw)
        unknown = [k for k in value if k not in VANTAGE_OPTIONS]
        if unknown:
            raise BadValue(f"unknown option {unknown[0]!r}")
        try:
            return parse_vantage(value)
        except ValueError as exc:
            raise BadValue(str(exc)) from None


@dataclass(frozen=True, slots=True)
class Setting:
    """One changewatch setting: *default* is the raw value used when the setting is unset (or
    None), written as a user would write it and parsed like one."""

    name: str
    parse: Parser
    default: Any
    error: type[ConfigError] = ConfigError
    #: False: a bad value's message does not quote it (Apprise URLs hold tokens and passwords);
    #: the parser's detail names the part that is wrong, without its secrets
    quoted: bool = True

    @property
    def accepts(self) -> str:
        return self.parse.accepts

    @property
    def member(self) -> str:
        """The :class:`ChangewatchConfig` member it fills."""
        return self.name.removeprefix("CHANGEWATCH_").lower()

    def read(self, settings: BaseSettings) -> Any:
        raw = settings.get(self.name)
        return self.value(self.default if raw is None else raw)

    def value(self, raw: Any) -> Any:
        try:
            return self.parse(raw)
        except BadValue as exc:
            if not self.quoted:
                raise self.error(f"{self.name}: {exc}; expected {self.accepts}") from None
            raise self.error(error_message(self.name, raw, self.accepts, str(exc))) from None


_COMPARISON_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")

#: every changewatch setting (docs/settings.md), in the order they are checked
SETTINGS: tuple[Setting, ...] = (
    Setting("CHANGEWATCH_STORE", StoreUri(), DEFAULT_STORE_URI),
    Setting("CHANGEWATCH_STORE_SCHEMES", DottedPathTable(DEFAULT_STORE_SCHEMES, SCHEME, "URI schemes", lower_keys=True),
            {}),
    Setting("CHANGEWATCH_STORE_SYNCHRONOUS", Choice(("OFF", "NORMAL", "FULL", "EXTRA")), "NORMAL"),
    Setting("CHANGEWATCH_STORE_TIMEOUT", Float(minimum=0), 30),
    Setting("CHANGEWATCH_STORE_RETRY_TIME", Float(minimum=0), 60),
    Setting("CHANGEWATCH_WORKERS", Int(minimum=0, optional=True), None),  # None: default_workers()
    Setting("CHANGEWATCH_WORKER_TIMEOUT", Float(minimum=0, above=True), 60),
    Setting("CHANGEWATCH_THRESHOLD", Int(minimum=0, maximum=64, optional=True), None),
    Setting("CHANGEWATCH_REPORT_REPEATED_ERRORS", Bool(), False),
    Setting("CHANGEWATCH_GONE_AFTER", Int(minimum=1), 2),
    Setting("CHANGEWATCH_DIFF_MAX_LINES", Int(minimum=0), 60),
    Setting("CHANGEWATCH_DIFF_CONTEXT", Int(minimum=0), 1),
    Setting("CHANGEWATCH_COMPARISONS", DottedPathTable(DEFAULT_COMPARISONS, _COMPARISON_NAME, "comparison names",
                                                       removable=True), {}),
    Setting("CHANGEWATCH_CONDITIONAL_ENABLED", Bool(), True),
    Setting("CHANGEWATCH_CONDITIONAL_FULL_FETCH_RUNS", Int(minimum=0), 24),
    Setting("CHANGEWATCH_CONDITIONAL_FULL_FETCH_DAYS", Float(minimum=0), 7),
    # renewed every third of it: shorter than a second, a busy event loop could let it lapse
    Setting("CHANGEWATCH_DELIVERY_LEASE", Duration(minimum=1.0), "10m"),
    # the shared scheduler of several crawl processes (changewatch.distributed.RoundScheduler)
    Setting("CHANGEWATCH_ROUND", Name(optional=True), None),
    Setting("CHANGEWATCH_ROUND_EVERY", Duration(minimum=1.0, optional=True), None),
    Setting("CHANGEWATCH_ROUND_TTL", Duration(minimum=60.0), "1d"),
    Setting("CHANGEWATCH_ROUND_PREFIX", Name(), "changewatch"),
    Setting("CHANGEWATCH_ROUND_RETRY_TIME", Float(minimum=0), 60),
    Setting("CHANGEWATCH_VANTAGE", VantageSetting(), {}, error=VantageError),
    Setting("CHANGEWATCH_ALLOW_PRIVATE", Bool(), False),
    Setting("CHANGEWATCH_SSRF_ENABLED", Bool(), True),
    Setting("CHANGEWATCH_SSRF_ALLOWED_HOSTS", ListOf(parse_host_entry, "host names (intranet.example, "
                                                     ".corp.example for a domain) or IP addresses"), ()),
    Setting("CHANGEWATCH_SSRF_ALLOWED_NETWORKS", ListOf(parse_network, "IP networks such as 10.0.0.0/8"), ()),
    Setting("CHANGEWATCH_SSRF_NAMESERVERS", ListOf(parse_nameserver, "nameserver IP addresses with an optional "
                                                   "port (1.2.3.4, 1.2.3.4:5353, [::1]:53)"), ()),
    # where the watch spider's -a watchlist= comes from (docs/watchlist.md, "Where a watchlist comes from")
    Setting("CHANGEWATCH_WATCHLIST_DIR", Directory(), None),
    Setting("CHANGEWATCH_WATCHLIST_TIMEOUT", Float(minimum=0, above=True), 30),
    Setting("CHANGEWATCH_WATCHLIST_MAXSIZE", Int(minimum=1), 10 * 1024 * 1024),
    # ---- health: watching the watcher (docs/health.md); windows are whole days of the history ----
    Setting("CHANGEWATCH_HEALTH_ENABLED", Bool(), True),
    Setting("CHANGEWATCH_HEALTH_RECENT", Duration(minimum=86400.0), "7d"),
    Setting("CHANGEWATCH_HEALTH_BASELINE", Duration(minimum=86400.0), "28d"),
    Setting("CHANGEWATCH_HEALTH_STALE_AFTER", Duration(minimum=86400.0), "14d"),
    Setting("CHANGEWATCH_HEALTH_MIN_OBSERVATIONS", Int(minimum=1), 10),
    Setting("CHANGEWATCH_HEALTH_NOISE_RISE", Float(minimum=1.0, above=True), 2.0),
    Setting("CHANGEWATCH_HEALTH_NOISE_MIN_RATE", Float(minimum=0.0, above=True), 0.2),
    # rendering in a browser (docs/rendering.md)
    Setting("CHANGEWATCH_RENDER_BROWSER", Executable(), None),
    Setting("CHANGEWATCH_RENDER_TIMEOUT", Float(minimum=0, above=True), 30),
    Setting("CHANGEWATCH_RENDER_FULL_RUNS", Int(minimum=0), 24),
    Setting("CHANGEWATCH_RENDER_CONCURRENCY", Int(minimum=1, maximum=64), 4),
    # notifications after the crawl (changewatch.notify, docs/notifications.md)
    Setting("CHANGEWATCH_NOTIFY", NotifySetting(), None, quoted=False),
    Setting("CHANGEWATCH_NOTIFY_TIMEOUT", Float(minimum=0, above=True), 10),
    Setting("CHANGEWATCH_NOTIFY_RETRIES", Int(minimum=0, maximum=10), 3),
    Setting("CHANGEWATCH_NOTIFY_RETRY_TIME", Float(minimum=0), 60),
    Setting("CHANGEWATCH_NOTIFY_MAX_CHARS", Int(minimum=500), 4000),
    # the optional AI summary (changewatch.summary); its API key is the environment's CHANGEWATCH_SUMMARY_API_KEY
    Setting("CHANGEWATCH_SUMMARY_ENABLED", Bool(), True),
    Setting("CHANGEWATCH_SUMMARY_URL", HttpUrl(), None),
    Setting("CHANGEWATCH_SUMMARY_MODEL", Text(), None),
    Setting("CHANGEWATCH_SUMMARY_TIMEOUT", Float(minimum=0, above=True), 20),
    Setting("CHANGEWATCH_SUMMARY_CONCURRENCY", Int(minimum=1, maximum=64), 4),
    Setting("CHANGEWATCH_SUMMARY_DAILY_BUDGET", Float(minimum=0, optional=True), None),
    Setting("CHANGEWATCH_SUMMARY_PRICE_PER_1K", Float(minimum=0), 0),
    Setting("CHANGEWATCH_SUMMARY_ALLOW_PRIVATE", Bool(), False),
    # -- issue 15: running for months (docs/schedule.md, docs/evidence.md)
    Setting("CHANGEWATCH_SCHEDULE_ENABLED", Bool(), False),
    Setting("CHANGEWATCH_SCHEDULE_MIN_INTERVAL", Duration(minimum=1.0), "15m"),
    Setting("CHANGEWATCH_SCHEDULE_MAX_INTERVAL", Duration(minimum=1.0), "7d"),
    Setting("CHANGEWATCH_EVIDENCE_ENABLED", Bool(), True),
    Setting("CHANGEWATCH_EVIDENCE_RETENTION", Duration(minimum=1.0, optional=True), "90d"),
    Setting("CHANGEWATCH_CHANGES_RETENTION", Duration(minimum=1.0, optional=True), None),
    # at least a day: a typo (30 for 30d) would forget the keys of a watchlist crawled less often
    Setting("CHANGEWATCH_FORGET_AFTER", Duration(minimum=86400.0, optional=True), "90d"),
    Setting("CHANGEWATCH_PROGRESS_INTERVAL", Duration(minimum=1.0, zero=True), 60),
)
SETTINGS_BY_NAME: Mapping[str, Setting] = MappingProxyType({s.name: s for s in SETTINGS})
_GUARD_FIELDS = ("allow_private", "ssrf_enabled", "ssrf_allowed_hosts", "ssrf_allowed_networks", "ssrf_nameservers")


def _no_vantage() -> Vantage:
    from ..core.vantage import Vantage

    return Vantage()


@dataclass(frozen=True, slots=True)
class ChangewatchConfig:
    """Every changewatch setting, parsed. A member is named after its setting (without
    ``CHANGEWATCH_``, lower case), except the SSRF settings, which make up :attr:`guard`."""

    store: str = DEFAULT_STORE_URI
    store_schemes: Mapping[str, str] = field(default_factory=lambda: DEFAULT_STORE_SCHEMES)
    store_synchronous: str = "NORMAL"
    store_timeout: float = 30.0  # seconds
    store_retry_time: float = 60.0  # seconds
    workers: int = 0
    worker_timeout: float = 60.0  # seconds
    threshold: int | None = None
    report_repeated_errors: bool = False
    gone_after: int = 2  # consecutive 404/410 runs before the error is of class gone
    diff_max_lines: int = 60
    diff_context: int = 1
    comparisons: Mapping[str, str] = field(default_factory=lambda: DEFAULT_COMPARISONS)
    conditional_enabled: bool = True
    conditional_full_fetch_runs: int = 24
    conditional_full_fetch_days: float = 7.0
    delivery_lease: float = 600.0  # seconds
    round: str | None = None
    round_every: float | None = None  # seconds
    round_ttl: float = 86400.0  # seconds
    round_prefix: str = "changewatch"
    round_retry_time: float = 60.0  # seconds
    vantage: Vantage = field(default_factory=_no_vantage)
    watchlist_dir: str | None = None  # None: the working directory
    watchlist_timeout: float = 30.0  # seconds
    watchlist_maxsize: int = 10 * 1024 * 1024  # bytes
    health_enabled: bool = True
    health_recent: float = 7 * 86400.0  # seconds
    health_baseline: float = 28 * 86400.0  # seconds
    health_stale_after: float = 14 * 86400.0  # seconds
    health_min_observations: int = 10
    health_noise_rise: float = 2.0
    health_noise_min_rate: float = 0.2
    render_browser: str | None = None  # None: found (changewatch.render.browser.find_browser)
    render_timeout: float = 30.0  # seconds, a whole render
    render_full_runs: int = 24  # skipped renders in a row before one is rendered anyway
    render_concurrency: int = 4  # pages (each in its own context) at once
    notify: NotifyRoutes = field(default_factory=NotifyRoutes)
    notify_timeout: float = 10.0  # seconds, each attempt to send one message
    notify_retries: int = 3  # attempts after the first, per destination and run
    notify_retry_time: float = 60.0  # seconds, all attempts to one destination in one run
    notify_max_chars: int = 4000  # characters of one message
    summary_enabled: bool = True
    summary_url: str | None = None  # None: no summaries
    summary_model: str | None = None
    summary_timeout: float = 20.0  # seconds
    summary_concurrency: int = 4
    summary_daily_budget: float | None = None  # None: no limit
    summary_price_per_1k: float = 0.0
    summary_allow_private: bool = False
    schedule_enabled: bool = False
    schedule_min_interval: float = 900.0  # seconds
    schedule_max_interval: float = 7 * 86400.0  # seconds
    evidence_enabled: bool = True
    evidence_retention: float | None = 90 * 86400.0  # seconds; None: kept for ever
    changes_retention: float | None = None  # seconds; None: kept for ever
    forget_after: float | None = 90 * 86400.0  # seconds; None: never forgotten
    progress_interval: float = 60.0  # seconds; 0: no progress line
    guard: GuardConfig = field(default_factory=GuardConfig)

    @property
    def summaries(self) -> bool:
        """Whether records are to be summarised (the URL is set and the kill switch is not off)."""
        return self.summary_enabled and self.summary_url is not None

    @property
    def schedule_bounds(self) -> Bounds:
        return Bounds(self.schedule_min_interval, self.schedule_max_interval)

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> ChangewatchConfig:
        """Parse every changewatch setting; raise ConfigError for the first bad one, or when
        the crawl runs on a reactor changewatch cannot use (:func:`check_reactor`). Reads
        *settings* only: cheap enough for every component to call."""
        values = {spec.member: spec.read(settings) for spec in SETTINGS}
        _check_store_scheme(values["store"], values["store_schemes"])
        _check_summary(values)
        _check_bounds(values["schedule_min_interval"], values["schedule_max_interval"])
        if values["workers"] is None:
            values["workers"] = default_workers()
        allow_private, enabled, hosts, networks, nameservers = (values.pop(f) for f in _GUARD_FIELDS)
        guard = GuardConfig(AddressPolicy.build(enabled=enabled, allow_private=allow_private, allowed_hosts=hosts,
                                                allowed_networks=networks), nameservers)
        config = cls(**values, guard=guard)
        _check_summary_url(config)
        check_reactor(settings)
        return config


def _check_store_scheme(uri: str, schemes: Mapping[str, str]) -> None:
    scheme = uri.partition(":")[0].lower()
    if scheme not in schemes:
        known = ", ".join(sorted(schemes))
        raise ConfigError(error_message("CHANGEWATCH_STORE", uri, f"a store URI whose scheme is one of: {known} "
                                        "(CHANGEWATCH_STORE_SCHEMES adds others)"))


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


def _check_summary_url(config: ChangewatchConfig) -> None:
    """The summary endpoint's URL against the SSRF policy (its addresses are checked as it is
    resolved): a model server on this machine or network needs CHANGEWATCH_SUMMARY_ALLOW_PRIVATE."""
    if config.summary_url is None:
        return
    from ..summary.crawl import summary_policy

    refusal = summary_policy(config).url_refusal(config.summary_url)
    if refusal is not None:
        raise ConfigError(error_message("CHANGEWATCH_SUMMARY_URL", config.summary_url, "a URL the SSRF policy allows",
                                        f"refused: {refusal}; a model server on this machine or network needs "
                                        "CHANGEWATCH_SUMMARY_ALLOW_PRIVATE = True"))
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
