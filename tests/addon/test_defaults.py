"""The safety defaults the add-on brings to any project, at "addon" priority: the project's own
values win; a resolver of the project's own stops the crawl in one line."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
import scrapy
from scrapy.exceptions import ScrapyDeprecationWarning
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from changewatch import __version__
from changewatch.addon import SAFETY_DEFAULTS, Addon
from changewatch.addon.defaults import user_agent
from changewatch.config import ChangewatchConfig, ConfigError, check_resolver
from changewatch.guard import GuardedResolver

ADDON = {"ADDONS": {"changewatch.Addon": 0}}
PLAIN_UA = f"changewatch/{__version__} (+https://github.com/changewatch/changewatch)"


class UnitSpider(scrapy.Spider):
    name = "unit"


class MyResolver(GuardedResolver):
    """A project's subclass of the guard's resolver: still the guard's."""


def crawler(**settings: Any) -> Any:
    return get_crawler(UnitSpider, {**ADDON, **settings})


def test_every_safety_default_arrives_with_the_addon_alone() -> None:
    settings = crawler().settings
    for name, value in SAFETY_DEFAULTS.items():
        assert settings.get(name) == value, name
    assert settings["USER_AGENT"] == PLAIN_UA
    assert settings.getint("DOWNLOAD_MAXSIZE") == 10 * 1024 * 1024 and settings.getfloat("DOWNLOAD_TIMEOUT") == 30
    assert not settings.getbool("TELNETCONSOLE_ENABLED") and not settings.getbool("REMOTE_CONTROL_ENABLED")
    assert settings.getbool("ROBOTSTXT_OBEY") and settings.getint("CONCURRENT_ITEMS") == 4
    assert 429 not in settings.getlist("RETRY_HTTP_CODES")


def test_without_the_addon_scrapy_keeps_its_own() -> None:
    settings = get_crawler(UnitSpider, {}).settings
    assert settings.getint("DOWNLOAD_MAXSIZE") == 1024 * 1024 * 1024
    assert settings["USER_AGENT"].startswith("Scrapy/")


def test_the_process_settings_get_them_before_any_crawler() -> None:
    """What Scrapy's reactor set-up (TWISTED_DNS_RESOLVER) and a spider's from_crawler read."""
    settings = Settings({**ADDON, "DOWNLOAD_MAXSIZE": 1234})
    Addon.update_pre_crawler_settings(settings)
    assert settings["TWISTED_DNS_RESOLVER"] == "changewatch.guard.GuardedResolver"
    assert settings["USER_AGENT"] == PLAIN_UA
    assert settings.getint("DOWNLOAD_MAXSIZE") == 1234  # the project's


def test_the_projects_own_values_win() -> None:
    settings = crawler(DOWNLOAD_MAXSIZE=50 * 1024 * 1024, USER_AGENT="shopbot/1.0 (+https://shop.example/bot)",
                       ROBOTSTXT_OBEY=False, CHANGEWATCH_CONTACT="ops@shop.example").settings
    assert settings.getint("DOWNLOAD_MAXSIZE") == 50 * 1024 * 1024
    assert settings["USER_AGENT"] == "shopbot/1.0 (+https://shop.example/bot)"  # kept as it is, contact or not
    assert not settings.getbool("ROBOTSTXT_OBEY")
    assert settings.getfloat("DOWNLOAD_TIMEOUT") == 30  # the others still arrive


def test_a_spiders_custom_settings_win() -> None:
    class Custom(UnitSpider):
        custom_settings: ClassVar[dict[str, Any]] = {"DOWNLOAD_TIMEOUT": 5,
                                                     "CHANGEWATCH_CONTACT": "spider@shop.example"}

    settings = get_crawler(Custom, ADDON).settings
    assert settings.getfloat("DOWNLOAD_TIMEOUT") == 5
    assert settings["USER_AGENT"] == user_agent("spider@shop.example")


def test_the_contact_is_in_the_user_agent() -> None:
    settings = crawler(CHANGEWATCH_CONTACT="https://shop.example/monitoring").settings
    assert settings["USER_AGENT"] == f"changewatch/{__version__} (+https://github.com/changewatch/changewatch; " \
                                     "https://shop.example/monitoring)"


def test_a_bad_contact_stops_the_crawl_and_never_reaches_a_header() -> None:
    with pytest.raises(ConfigError, match=r"^CHANGEWATCH_CONTACT = 'ops\\r\\nX-Evil: 1': expected an e-mail"):
        crawler(CHANGEWATCH_CONTACT="ops\r\nX-Evil: 1")
    settings = Settings({**ADDON, "CHANGEWATCH_CONTACT": "ops\r\nX-Evil: 1"})
    Addon.update_pre_crawler_settings(settings)  # too early to say it: left out, said at the crawl's start
    assert settings["USER_AGENT"] == PLAIN_UA


def resolver_settings(**settings: Any) -> Settings:
    """A process's settings with the add-on's defaults, on a reactor (get_crawler runs without one,
    where no resolver is used and none is checked)."""
    process = Settings({**ADDON, **settings})
    Addon.update_pre_crawler_settings(process)
    return process


@pytest.mark.parametrize("resolver", ["scrapy.resolver.CachingThreadedResolver",
                                      "scrapy.resolver.CachingHostnameResolver", "no.such.Resolver"])
def test_another_resolver_stops_the_crawl_in_one_line(resolver: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ChangewatchConfig.from_settings(resolver_settings(TWISTED_DNS_RESOLVER=resolver))
    message = str(caught.value)
    assert message.startswith(f"TWISTED_DNS_RESOLVER = {resolver!r}: expected changewatch.guard.GuardedResolver: "
                              "the SSRF guard needs its own resolver"), message
    assert "\n" not in message and "CHANGEWATCH_SSRF_ENABLED = False" in message


def test_the_guards_resolver_its_subclass_and_a_guard_turned_off_are_fine() -> None:
    check_resolver(resolver_settings())
    check_resolver(resolver_settings(TWISTED_DNS_RESOLVER="changewatch.guard.GuardedResolver"))
    check_resolver(resolver_settings(TWISTED_DNS_RESOLVER=MyResolver))
    check_resolver(resolver_settings(TWISTED_DNS_RESOLVER=f"{__name__}.MyResolver"))
    other = resolver_settings(TWISTED_DNS_RESOLVER="scrapy.resolver.CachingThreadedResolver",
                              CHANGEWATCH_SSRF_ENABLED=False)
    assert not ChangewatchConfig.from_settings(other).guard.policy.enabled
    # Scrapy's default, set by no one (a crawl without the add-on's process settings)
    check_resolver(Settings())
    # no reactor: no resolver is used
    check_resolver(Settings({"TWISTED_DNS_RESOLVER": "scrapy.resolver.CachingThreadedResolver",
                             "TWISTED_REACTOR_ENABLED": False}))
    with pytest.warns(ScrapyDeprecationWarning), pytest.raises(ConfigError, match=r"^DNS_RESOLVER = "):
        check_resolver(resolver_settings(DNS_RESOLVER="scrapy.resolver.CachingThreadedResolver"))
