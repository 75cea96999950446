"""Every documented setting, fed bad values through a real crawler with the add-on: the crawl
does not start, and the error is one line naming the setting, the value and what is accepted.

The list of settings comes from docs/settings.md, so a new setting cannot escape these tests: it
needs a spec in the table (changewatch.config.SETTINGS) and bad examples for its type. A name the
table does not know, removed or misspelt, stops the crawl too.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import scrapy
from scrapy.crawler import Crawler
from scrapy.utils.test import get_crawler

from changewatch.config import (
    DEFAULT_COMPARISONS,
    REMOVED_SETTINGS,
    SETTINGS,
    SETTINGS_BY_NAME,
    ChangewatchConfig,
    ConfigError,
    Setting,
    default_workers,
)
from changewatch.config.parsers import (
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
from changewatch.config.structured import DottedPathTable, JsonObject, ListOf, Routes
from changewatch.core.addresses import parse_network
from changewatch.core.vantage import Vantage
from changewatch.middlewares.vantage import vantage_from_setting
from changewatch.store import DEFAULT_STORE_URI

ROOT = Path(__file__).resolve().parents[2]


def documented_settings() -> list[str]:
    """The first column of the settings table in docs/settings.md."""
    doc = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    return re.findall(r"^\| `(CHANGEWATCH_[A-Z0-9_]+)` \|", doc, flags=re.M)


def _int_bad(p: Int) -> list[Any]:
    out: list[Any] = ["abc", "1.5", 1.5, 2.0, True, "1e3", [1]] + ([] if p.optional else [""])  # optional: "" is None
    if p.minimum is not None:
        out += [p.minimum - 1, str(p.minimum - 1)]
    if p.maximum is not None:
        out += [p.maximum + 1]
    return out


def _float_bad(p: Float) -> list[Any]:
    out: list[Any] = ["abc", "nan", "inf", math.nan, math.inf, True, "1_0", [1]] + ([] if p.optional else [""])
    if p.minimum is not None:
        out += [p.minimum - 1, str(p.minimum - 0.5)] + ([p.minimum, str(p.minimum)] if p.above else [])
    return out


#: bad values for every parser type; a new type without an entry fails test_bad_values_cover_every_type
BAD_BY_TYPE: dict[type, Callable[[Any], list[Any]]] = {
    Bool: lambda p: ["yesplease", "2", 2, "on", "yes", 1.0, "", "TRUE"],
    Int: _int_bad,
    Float: _float_bad,
    Choice: lambda p: ["SOMETIMES", 1, "", True],
    Duration: lambda p: (["soon", "-5m", "5x", "10M", "30m1h", True, "nan", math.inf]
                         + ([] if p.zero else ["0", 0]) + ([] if p.optional else [""])),
    Name: lambda p: ["a b", "-lead", "x" * 101, "a/b", "a\nb", 5, True, ["r1"]] + ([] if p.optional else ["", "  "]),
    ListOf: lambda p: [5, {"a": "b"}, ["ok.example", 5], True],
    DottedPathTable: lambda p: ["[1,2]", "{bad json", 5, '{"x": "nodots"}', {"x": 5}, {"": "a.b"}, {"a b": "a.b"},
                                ["sqlite"]] + ([] if p.removable else [{"x": None}]),
    Directory: lambda p: [5, True, ["/srv/watchlists"], "/srv/\x00"],
    # a browser: no such file, a file that is not executable, a directory, not a path
    Executable: lambda p: ["/no/such/chromium", __file__, "/tmp", "no-such-browser-here", 5, True, "/x\x00"],
    StoreUri: lambda p: ["nosuchscheme://x", "", "  ", "no-scheme-here", "1http://x", 5, ["sqlite:///x.db"]],
    Text: lambda p: [5, True, "line\nbreak", "x" * 201, ["gpt"]],
    # what would break out of the User-Agent's comment or header
    Contact: lambda p: [5, True, "ops@shop.example\r\nX-Injected: 1", "ops (at) shop.example", "a\\b",
                        "bücher@shop.example", "x" * 201, ["ops@shop.example"]],
    HttpUrl: lambda p: ["ftp://api.example/v1", "api.example/v1", "https://", "https://user:pw@api.example/v1",
                        "https://api.example:99999/v1", "https://a b.example", 5],
    Routes: lambda p: ["slakc://T000/B000/secretsecret", "json://", "not a url", 5, ["json://h.example/x", 5],
                              {"fields": "json://h.example/x"}, {"noise": ["json://h.example/x"]}, '{"field": 5}',
                              '["json://h.example/x"', "mailto://", "slack://only-one-token-secret"],
    JsonObject: lambda p: ['{"colour": "red"}', {"proxy": "nope"}, "[1]", '{"accept_language": "de"',
                               {"accept_language": "not a language!"}, {"headers": {"X-A": "a\nb"}}, 5],
}
#: bad values only one setting has
BAD_BY_SETTING: dict[str, list[Any]] = {
    "CHANGEWATCH_SSRF_ALLOWED_NETWORKS": ["10.0.0.0/8,bogus", ["10.0.0.0/33"], "intranet", "10.0.0.0/8;10.1.0.0/16"],
    "CHANGEWATCH_SSRF_ALLOWED_HOSTS": ["http://intranet.example/", "a b.example", "user@host"],
    "CHANGEWATCH_SSRF_NAMESERVERS": ["dns.example", "1.2.3.4:0", "1.2.3.4:99999", "0x7f.1", "1.2.3.4:53,nope"],
    "CHANGEWATCH_STORE_SCHEMES": [{"sqlite": None}, '{"s3": "my.S3Store", "gs": ""}'],
    "CHANGEWATCH_COMPARISONS": ['{"fields": "not a path"}'],
    "CHANGEWATCH_DELIVERY_LEASE": ["0.5s", 0.2],
    "CHANGEWATCH_ROUND_TTL": ["30s", 59],
    "CHANGEWATCH_FORGET_AFTER": ["30", "23h", 3600],  # at least a day
    "CHANGEWATCH_PROGRESS_INTERVAL": ["0.5s", -1],
}


def bad_values(spec: Setting) -> list[Any]:
    return BAD_BY_TYPE[type(spec.parse)](spec.parse) + BAD_BY_SETTING.get(spec.name, [])


class QuietSpider(scrapy.Spider):
    name = "quiet"

    async def start(self) -> AsyncIterator[Any]:
        return
        yield


def addon_crawler(tmp_path: Path, **settings: Any) -> Crawler:
    """A real crawler of a user's project that enables only the add-on."""
    return get_crawler(QuietSpider, {"ADDONS": {"changewatch.Addon": 0}, "LOG_LEVEL": "WARNING",
                                     "CHANGEWATCH_STORE": f"sqlite:///{tmp_path / 'state.db'}", **settings})


def start(crawler: Crawler) -> None:
    asyncio.run(crawler.crawl_async())


def case_id(value: Any) -> str:
    return re.sub(r"\W+", "_", repr(value))[:40]


@pytest.mark.parametrize("name", documented_settings())
def test_every_documented_setting_has_a_spec_and_a_good_default(name: str, tmp_path: Path) -> None:
    assert name in SETTINGS_BY_NAME, f"{name} is documented but has no spec in changewatch.config.SETTINGS"
    assert bad_values(SETTINGS_BY_NAME[name]), name
    SETTINGS_BY_NAME[name].value(SETTINGS_BY_NAME[name].default)  # the default parses like a user's value


def test_every_spec_is_documented() -> None:
    assert documented_settings(), "the scan of docs/settings.md works"
    assert sorted({s.name for s in SETTINGS} - set(documented_settings())) == []


def test_bad_values_cover_every_type() -> None:
    assert {type(s.parse) for s in SETTINGS} <= set(BAD_BY_TYPE)


@pytest.mark.parametrize(("name", "value"), [
    pytest.param(spec.name, value, id=f"{spec.name.removeprefix('CHANGEWATCH_')}-{case_id(value)}")
    for spec in SETTINGS for value in bad_values(spec)])
def test_a_bad_value_stops_a_real_crawler(name: str, value: Any, tmp_path: Path) -> None:
    assert name in documented_settings()
    crawler: Crawler | None = None
    with pytest.raises(ConfigError) as caught:
        # the add-on's runtime extension parses every setting when the crawler applies its
        # settings: before the crawl starts, whichever components are enabled
        crawler = addon_crawler(tmp_path, **{name: value})
        start(crawler)
    message = str(caught.value)
    if not SETTINGS_BY_NAME[name].quoted:  # Apprise URLs hold secrets: named by their scheme only
        assert "\n" not in message and message.startswith(f"{name}: ") and "; expected " in message, message
        assert "secret" not in message and "T000" not in message and "h.example" not in message, message
        assert not crawler or not crawler.crawling
        return
    assert "\n" not in message and message.startswith(f"{name} = "), message
    shown = repr(value)
    assert shown[:60] in message or ("***" in message and name in ("CHANGEWATCH_VANTAGE", "CHANGEWATCH_SUMMARY_URL")
                                     ), message
    # the store URI's scheme is checked against the scheme table, with its own words
    accepts = "a store URI" if name == "CHANGEWATCH_STORE" else SETTINGS_BY_NAME[name].accepts.split(" (")[0]
    assert f": expected {accepts}" in message, message
    assert crawler is None or not crawler.crawling
    assert not (tmp_path / "state.db").exists(), "the crawl went on and opened its store"


def test_good_values_parse_as_documented(tmp_path: Path) -> None:
    crawler = addon_crawler(
        tmp_path,
        CHANGEWATCH_WORKERS="", CHANGEWATCH_THRESHOLD="", CHANGEWATCH_WORKER_TIMEOUT="2.5",
        CHANGEWATCH_ALLOW_PRIVATE="false", CHANGEWATCH_SSRF_ENABLED=1, CHANGEWATCH_REPORT_REPEATED_ERRORS="True",
        CHANGEWATCH_DELIVERY_LEASE="1h30m", CHANGEWATCH_STORE_SYNCHRONOUS="full",
        CHANGEWATCH_CONDITIONAL_FULL_FETCH_DAYS="0.5", CHANGEWATCH_DIFF_MAX_LINES="0", CHANGEWATCH_ROUND_RETRY_TIME="0",
        CHANGEWATCH_STORE_SCHEMES='{"PG": "my.stores.PostgresStore"}',
        CHANGEWATCH_COMPARISONS={"content": None, "word_count": "tests.core.comparisons.test_registry.WordCount"},
        CHANGEWATCH_SSRF_ALLOWED_HOSTS="Intranet.Example., .corp.example",
        CHANGEWATCH_SSRF_ALLOWED_NETWORKS="10.0.0.0/8, fd00::/8,", CHANGEWATCH_SSRF_NAMESERVERS=["[::1]:5353"],
        CHANGEWATCH_VANTAGE='{"accept_language": "de-CH", "proxy": "http://user:pw@proxy.example:8080"}')
    start(crawler)
    config = ChangewatchConfig.from_settings(crawler.settings)
    assert (config.workers, config.threshold, config.worker_timeout) == (default_workers(), None, 2.5)
    assert config.report_repeated_errors and config.store_synchronous == "FULL"
    assert (config.delivery_lease, config.conditional_full_fetch_days, config.diff_max_lines) == (5400.0, 0.5, 0)
    assert config.round_retry_time == 0.0
    assert dict(config.store_schemes) == {"pg": "my.stores.PostgresStore"}  # merged over the store's own
    assert dict(config.comparisons) == {**{k: v for k, v in DEFAULT_COMPARISONS.items() if k != "content"},
                                        "word_count": "tests.core.comparisons.test_registry.WordCount"}
    policy = config.guard.policy
    assert policy.enabled and not policy.allow_private
    assert policy.allowed_hosts == (".corp.example", "intranet.example")
    assert policy.allowed_networks == (parse_network("10.0.0.0/8"), parse_network("fd00::/8"))
    assert config.guard.nameservers == (("::1", 5353),)
    assert vantage_from_setting(config.vantage) == Vantage(proxy="http://user:pw@proxy.example:8080",
                                                           accept_language="de-CH")
    assert (tmp_path / "state.db").exists()  # the crawl ran


@pytest.mark.parametrize("networks", ["10.0.0.0/8,192.168.0.0/16", ["10.0.0.0/8", "192.168.0.0/16"],
                                      ("10.0.0.0/8", " 192.168.0.0/16 ", "")])
def test_a_list_setting_is_a_list_or_a_comma_separated_string(networks: Any, tmp_path: Path) -> None:
    crawler = addon_crawler(tmp_path, CHANGEWATCH_SSRF_ALLOWED_NETWORKS=networks)
    config = ChangewatchConfig.from_settings(crawler.settings)
    assert config.guard.policy.allowed_networks == (parse_network("10.0.0.0/8"), parse_network("192.168.0.0/16"))


def _enabled(crawler: Crawler) -> set[str]:
    assert crawler.engine is not None
    managers = (crawler.engine.downloader.middleware, crawler.engine.scraper.spidermw, crawler.engine.scraper.itemproc)
    return {type(mw).__name__ for manager in managers for mw in manager.middlewares}


def test_only_enabled_false_turns_a_component_off(tmp_path: Path) -> None:
    everything = addon_crawler(tmp_path)
    start(everything)
    assert {"SSRFGuardMiddleware", "ConditionalRequestMiddleware", "VantageMiddleware",
            "ChangewatchPipeline"} <= _enabled(everything)
    off = addon_crawler(tmp_path, CHANGEWATCH_SSRF_ENABLED="False", CHANGEWATCH_CONDITIONAL_ENABLED=False)
    start(off)
    assert _enabled(everything) - _enabled(off) == {"SSRFGuardMiddleware", "ConditionalRequestMiddleware"}


@pytest.mark.parametrize("component", ["changewatch.pipelines.ChangewatchPipeline",
                                       "changewatch.guard.SSRFGuardMiddleware",
                                       "changewatch.middlewares.VantageMiddleware"])
def test_a_bad_value_is_found_whichever_component_is_enabled(component: str, tmp_path: Path) -> None:
    kind = "ITEM_PIPELINES" if ".pipelines." in component else "DOWNLOADER_MIDDLEWARES"
    crawler = get_crawler(QuietSpider, {kind: {component: 100}, "CHANGEWATCH_SSRF_ALLOWED_NETWORKS": "bogus"})
    with pytest.raises(ConfigError, match="CHANGEWATCH_SSRF_ALLOWED_NETWORKS = 'bogus'"):
        start(crawler)


def test_credentials_are_not_repeated(tmp_path: Path) -> None:
    cases = {"CHANGEWATCH_VANTAGE": {"proxy": "http://me:hunter2@proxy.example:port"},
             "CHANGEWATCH_STORE": "nosuch://me:hunter2@db.example/x"}
    for name, value in cases.items():
        with pytest.raises(ConfigError) as caught:
            start(addon_crawler(tmp_path, **{name: value}))
        assert "hunter2" not in str(caught.value) and "***@" in str(caught.value), caught.value
    with pytest.raises(ConfigError) as caught:
        start(addon_crawler(tmp_path, CHANGEWATCH_VANTAGE={"headers": {"Authorization": "Bearer hunter2\n"}}))
    assert "hunter2" not in str(caught.value) and "Authorization" in str(caught.value)


@pytest.mark.parametrize(("cpus", "workers"), [(None, 0), (1, 0), (2, 2), (3, 2), (4, 3), (8, 4), (64, 4)])
def test_default_workers_by_cpu_count(monkeypatch: pytest.MonkeyPatch, cpus: int | None, workers: int) -> None:
    """A thread on one core; else one worker per core but the crawl's, at least two (measured: one
    left a 2-core machine's second core a third idle) and at most four."""
    monkeypatch.setattr("os.cpu_count", lambda: cpus)
    assert default_workers() == workers


def test_the_settings_of_running_for_months_parse_as_documented(tmp_path: Path) -> None:
    defaults = ChangewatchConfig.from_settings(addon_crawler(tmp_path).settings)
    assert (defaults.schedule_enabled, defaults.schedule_min_interval, defaults.schedule_max_interval) == (
        False, 900.0, 7 * 86400.0)
    assert (defaults.evidence_enabled, defaults.evidence_retention, defaults.changes_retention) == (
        True, 90 * 86400.0, None)
    assert (defaults.forget_after, defaults.progress_interval) == (90 * 86400.0, 60.0)
    crawler = addon_crawler(tmp_path, CHANGEWATCH_SCHEDULE_ENABLED="true", CHANGEWATCH_SCHEDULE_MIN_INTERVAL="1h",
                            CHANGEWATCH_SCHEDULE_MAX_INTERVAL=3600, CHANGEWATCH_EVIDENCE_ENABLED=False,
                            CHANGEWATCH_EVIDENCE_RETENTION="", CHANGEWATCH_CHANGES_RETENTION="30d",
                            CHANGEWATCH_FORGET_AFTER="1d", CHANGEWATCH_PROGRESS_INTERVAL="0")
    start(crawler)
    config = ChangewatchConfig.from_settings(crawler.settings)
    assert config.schedule_enabled and config.schedule_bounds.minimum == config.schedule_bounds.maximum == 3600.0
    assert (config.evidence_enabled, config.evidence_retention, config.changes_retention) == (False, None, 30 * 86400.0)
    assert (config.forget_after, config.progress_interval) == (86400.0, 0.0)


def test_a_min_interval_above_the_max_stops_the_crawl(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        start(addon_crawler(tmp_path, CHANGEWATCH_SCHEDULE_MIN_INTERVAL="2d", CHANGEWATCH_SCHEDULE_MAX_INTERVAL="1d"))
    assert str(caught.value) == ("CHANGEWATCH_SCHEDULE_MIN_INTERVAL = '2d': expected a duration no longer than "
                                 "CHANGEWATCH_SCHEDULE_MAX_INTERVAL (1d)")
    assert not (tmp_path / "state.db").exists()


@pytest.mark.parametrize(("name", "says"), [
    ("CHANGEWATCH_THRESHOLD_X", "CHANGEWATCH_THRESHOLD_X is not a changewatch setting: did you mean "
                                "CHANGEWATCH_THRESHOLD?"),
    ("CHANGEWATCH_STORE_TIMOUT", "CHANGEWATCH_STORE_TIMOUT is not a changewatch setting: did you mean "
                                 "CHANGEWATCH_STORE_TIMEOUT?"),
    ("CHANGEWATCH_XYZZY", "CHANGEWATCH_XYZZY is not a changewatch setting (docs/settings.md lists them)"),
    ("CHANGEWATCH_SUMMARY_ENABLED", "CHANGEWATCH_SUMMARY_ENABLED is not a changewatch setting any more: summaries "
                                    "are off while CHANGEWATCH_SUMMARY_URL is unset"),
    ("CHANGEWATCH_HEALTH_NOISE_RISE", "CHANGEWATCH_HEALTH_NOISE_RISE is not a changewatch setting any more: the "
                                      "health check's noise rule is fixed"),
])
def test_an_unknown_or_removed_name_stops_a_real_crawler(name: str, says: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        start(addon_crawler(tmp_path, **{name: "1"}))
    assert str(caught.value).startswith(says) and "\n" not in str(caught.value), caught.value
    assert not (tmp_path / "state.db").exists()


def test_every_removed_name_is_gone_from_the_table() -> None:
    assert REMOVED_SETTINGS and not set(REMOVED_SETTINGS) & set(SETTINGS_BY_NAME)


def test_the_config_has_no_default_of_its_own() -> None:
    """One default per setting, the table's: the dataclass's members have none, and are the
    table's members (the SSRF settings make up its guard)."""
    members = {f.name: f for f in dataclasses.fields(ChangewatchConfig)}
    assert all(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
               for f in members.values())
    ssrf = {"allow_private", "ssrf_enabled", "ssrf_allowed_hosts", "ssrf_allowed_networks", "ssrf_nameservers"}
    assert set(members) == {s.member for s in SETTINGS} - ssrf | {"guard"}


def test_the_cli_store_default_is_the_settings_default() -> None:
    assert DEFAULT_STORE_URI == SETTINGS_BY_NAME["CHANGEWATCH_STORE"].default


@pytest.mark.parametrize(("raw", "says"), [("/var/lib/changewatch/state.db", "sqlite:////var/lib/changewatch/state.db"),
                                           ("state.db", "sqlite:///state.db")])
def test_a_store_path_without_its_scheme_is_refused_with_the_uri_it_means(raw: str, says: str) -> None:
    """A user who read "an absolute path keeps one store" writes the path: the one error line
    says how to write it."""
    with pytest.raises(BadValue, match=re.escape(f"a path is written {says}")):
        StoreUri()(raw)
