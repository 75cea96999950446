"""The table of every changewatch setting: its parser (which says in words what it accepts) and
its one default, written as a user would write it and parsed like one. docs/settings.md documents
each one (a test checks both list the same names); tests/config/test_settings.py feeds every one
bad values through a real crawler.

A name with the ``CHANGEWATCH_`` prefix that is not in the table stops the crawl
(:func:`check_names`): a typo would otherwise leave the setting at its default, silently.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol, TypeVar

from scrapy.settings import BaseSettings

from ..core.addresses import parse_host_entry, parse_nameserver, parse_network
from ..core.comparisons import BUILTIN_COMPARISONS
from .errors import ConfigError, VantageError, error_message
from .parsers import (
    SCHEME,
    BadValue,
    Bool,
    Choice,
    Contact,
    Directory,
    Duration,
    Executable,
    Float,
    HttpUrl,
    Int,
    Name,
    StoreUri,
    Text,
)
from .structured import DottedPathTable, JsonObject, ListOf, Routes

__all__ = ["DEFAULT_COMPARISONS", "PREFIX", "REMOVED_SETTINGS", "SETTINGS", "SETTINGS_BY_NAME", "Setting",
           "check_names"]

T = TypeVar("T")
PREFIX = "CHANGEWATCH_"

#: built-in comparisons by name; CHANGEWATCH_COMPARISONS is merged over it (None removes one)
DEFAULT_COMPARISONS: Mapping[str, str] = MappingProxyType(BUILTIN_COMPARISONS)


class Parser(Protocol):
    @property
    def accepts(self) -> str: ...

    def __call__(self, raw: Any) -> Any: ...


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
        """The :class:`changewatch.config.ChangewatchConfig` member it fills."""
        return self.name.removeprefix(PREFIX).lower()

    def raw(self, settings: BaseSettings) -> Any:
        raw = settings.get(self.name)
        return self.default if raw is None else raw

    def read(self, settings: BaseSettings) -> Any:
        return self.value(self.raw(settings))

    def value(self, raw: Any) -> Any:
        return self.refine(raw, self.parse)

    def refine(self, raw: Any, parse: Any) -> Any:
        """*raw* through *parse*, which raises BadValue or ValueError for a value it cannot
        use: the one-line error of this setting. A feature calls it (from its ``from_crawler``)
        with a parser of its own, for what only it knows (an Apprise URL's scheme, a vantage)."""
        try:
            return parse(raw)
        except (BadValue, ValueError) as exc:
            detail = str(exc)
            if not self.quoted:
                raise self.error(f"{self.name}: {detail or 'not valid'}; expected {self.accepts}") from None
            raise self.error(error_message(self.name, raw, self.accepts, detail)) from None


_COMPARISON_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_DAY = 86400.0

#: every changewatch setting (docs/settings.md), in the order they are checked
SETTINGS: tuple[Setting, ...] = (
    Setting("CHANGEWATCH_STORE", StoreUri(), "sqlite:///.changewatch/state.db"),
    # merged over the built-in schemes by the store (changewatch.store.store_from_uri)
    Setting("CHANGEWATCH_STORE_SCHEMES", DottedPathTable({}, SCHEME, "URI schemes", lower_keys=True), {}),
    Setting("CHANGEWATCH_STORE_SYNCHRONOUS", Choice(("OFF", "NORMAL", "FULL", "EXTRA")), "NORMAL"),
    Setting("CHANGEWATCH_STORE_TIMEOUT", Float(minimum=0), 30),
    Setting("CHANGEWATCH_STORE_RETRY_TIME", Float(minimum=0), 60),
    Setting("CHANGEWATCH_WORKERS", Int(minimum=0, optional=True), None),  # None: default_workers()
    Setting("CHANGEWATCH_WORKER_TIMEOUT", Float(minimum=0, above=True), 60),
    Setting("CHANGEWATCH_THRESHOLD", Int(minimum=0, maximum=64, optional=True), None),
    Setting("CHANGEWATCH_REPORT_REPEATED_ERRORS", Bool(), False),
    Setting("CHANGEWATCH_GONE_AFTER", Int(minimum=1), 2),
    Setting("CHANGEWATCH_CONFIRM_CHANGES", Bool(), True),
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
    # its options are the vantage middleware's to check (changewatch.middlewares.vantage)
    Setting("CHANGEWATCH_VANTAGE", JsonObject("proxy, headers, cookies and accept_language"), {},
            error=VantageError),
    # added to the User-Agent changewatch.Addon sets (changewatch.addon.defaults), so a site can reach the operator
    Setting("CHANGEWATCH_CONTACT", Contact(), None),
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
    Setting("CHANGEWATCH_HEALTH_RECENT", Duration(minimum=_DAY), "7d"),
    Setting("CHANGEWATCH_HEALTH_BASELINE", Duration(minimum=_DAY), "28d"),
    Setting("CHANGEWATCH_HEALTH_STALE_AFTER", Duration(minimum=_DAY), "14d"),
    Setting("CHANGEWATCH_HEALTH_MIN_OBSERVATIONS", Int(minimum=1), 10),
    # rendering in a browser (docs/rendering.md)
    Setting("CHANGEWATCH_RENDER_BROWSER", Executable(), None),
    Setting("CHANGEWATCH_RENDER_TIMEOUT", Float(minimum=0, above=True), 30),
    Setting("CHANGEWATCH_RENDER_FULL_RUNS", Int(minimum=0), 24),
    Setting("CHANGEWATCH_RENDER_CONCURRENCY", Int(minimum=1, maximum=64), 4),
    # notifications after the crawl (docs/notifications.md); the URLs are notify's to check
    Setting("CHANGEWATCH_NOTIFY", Routes("Apprise URLs (a list, or a string of them), or a dict of kind (field, "
                                         "entities, content, error, moved, recovered) to Apprise URLs"), None,
            quoted=False),
    Setting("CHANGEWATCH_NOTIFY_TIMEOUT", Float(minimum=0, above=True), 10),
    Setting("CHANGEWATCH_NOTIFY_RETRIES", Int(minimum=0, maximum=10), 3),
    Setting("CHANGEWATCH_NOTIFY_RETRY_TIME", Float(minimum=0), 60),
    Setting("CHANGEWATCH_NOTIFY_MAX_CHARS", Int(minimum=500), 4000),
    # the optional AI summary (changewatch.summary); its API key is the environment's CHANGEWATCH_SUMMARY_API_KEY
    Setting("CHANGEWATCH_SUMMARY_URL", HttpUrl(), None),
    Setting("CHANGEWATCH_SUMMARY_MODEL", Text(), None),
    Setting("CHANGEWATCH_SUMMARY_TIMEOUT", Float(minimum=0, above=True), 20),
    Setting("CHANGEWATCH_SUMMARY_CONCURRENCY", Int(minimum=1, maximum=64), 4),
    Setting("CHANGEWATCH_SUMMARY_DAILY_BUDGET", Float(minimum=0, optional=True), None),
    Setting("CHANGEWATCH_SUMMARY_PRICE_PER_1K", Float(minimum=0), 0),
    Setting("CHANGEWATCH_SUMMARY_ALLOW_PRIVATE", Bool(), False),
    # running for months (docs/schedule.md, docs/evidence.md)
    Setting("CHANGEWATCH_SCHEDULE_ENABLED", Bool(), False),
    Setting("CHANGEWATCH_SCHEDULE_MIN_INTERVAL", Duration(minimum=1.0), "15m"),
    Setting("CHANGEWATCH_SCHEDULE_MAX_INTERVAL", Duration(minimum=1.0), "7d"),
    Setting("CHANGEWATCH_EVIDENCE_ENABLED", Bool(), True),
    Setting("CHANGEWATCH_EVIDENCE_RETENTION", Duration(minimum=1.0, optional=True), "90d"),
    Setting("CHANGEWATCH_CHANGES_RETENTION", Duration(minimum=1.0, optional=True), None),
    # at least a day: a typo (30 for 30d) would forget the keys of a watchlist crawled less often
    Setting("CHANGEWATCH_FORGET_AFTER", Duration(minimum=_DAY, optional=True), "90d"),
    Setting("CHANGEWATCH_PROGRESS_INTERVAL", Duration(minimum=1.0, zero=True), 60),
)
SETTINGS_BY_NAME: Mapping[str, Setting] = MappingProxyType({s.name: s for s in SETTINGS})

#: settings that existed during development, and what to do instead
REMOVED_SETTINGS: Mapping[str, str] = MappingProxyType({
    "CHANGEWATCH_SUMMARY_ENABLED": "summaries are off while CHANGEWATCH_SUMMARY_URL is unset: unset it (or set it "
                                   "empty) to turn them off",
    "CHANGEWATCH_HEALTH_NOISE_RISE": "the health check's noise rule is fixed (twice the baseline rate); "
                                     "CHANGEWATCH_HEALTH_ENABLED = False turns the check off",
    "CHANGEWATCH_HEALTH_NOISE_MIN_RATE": "the health check's noise rule is fixed (at least a fifth of the "
                                         "observations); CHANGEWATCH_HEALTH_ENABLED = False turns the check off",
})


def _names(settings: BaseSettings) -> Iterable[str]:
    return (name for name in settings if isinstance(name, str) and name.startswith(PREFIX))


def check_names(settings: BaseSettings) -> None:
    """Raise ConfigError for the first ``CHANGEWATCH_*`` name that is not a setting: a removed
    one says what replaced it, a typo gets the nearest name."""
    for name in sorted(_names(settings)):
        if name in SETTINGS_BY_NAME or settings.get(name) is None:
            continue
        if name in REMOVED_SETTINGS:
            raise ConfigError(f"{name} is not a changewatch setting any more: {REMOVED_SETTINGS[name]}")
        # matched without the prefix every name shares, which would make any name look near
        near = difflib.get_close_matches(name.removeprefix(PREFIX), [n.removeprefix(PREFIX) for n in SETTINGS_BY_NAME],
                                         n=1, cutoff=0.6)
        hint = f": did you mean {PREFIX}{near[0]}?" if near else " (docs/settings.md lists them)"
        raise ConfigError(f"{name} is not a changewatch setting{hint}")
