"""The runtime extension: one place for per-crawler state, and a crawl that refuses to start
with a changewatch component left out."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
import scrapy
from scrapy.utils.test import get_crawler

from changewatch.addon.runtime import REQUIRED_COMPONENTS, ChangewatchRuntime
from changewatch.config import ConfigError
from changewatch.pipelines import ChangewatchPipeline

from ..services import require

ADDON = {"ADDONS": {"changewatch.Addon": 0}}


class UnitSpider(scrapy.Spider):
    name = "unit"


class MyPipeline(ChangewatchPipeline):
    """A user's subclass with a hook overridden: it stands for ours."""

    def exported(self, record: Any, change_id: int) -> Any:
        return {**record, "change_id": change_id, "mine": True}


def crawler(**settings: Any) -> Any:
    return get_crawler(UnitSpider, {**ADDON, **settings})


def test_components_find_the_runtime_with_get_extension() -> None:
    c = crawler()
    runtime = c.get_extension(ChangewatchRuntime)
    assert runtime is not None and ChangewatchRuntime.of(c) is runtime
    assert not [name for name in vars(c) if name.startswith("_changewatch")]  # nothing hangs off the crawler


@pytest.mark.parametrize(("setting", "path", "switch"), REQUIRED_COMPONENTS)
def test_a_component_left_out_stops_the_crawl_unless_switched_off(setting: str, path: str, switch: str | None) -> None:
    with pytest.raises(ConfigError, match=path.replace(".", r"\.")) as caught:
        crawler(**{setting: {path: None}})
    assert "\n" not in str(caught.value)
    if switch is not None:
        assert switch in str(caught.value)
        crawler(**{setting: {path: None}, switch: False})  # said so: fine


def test_a_subclass_stands_for_the_component() -> None:
    c = crawler(ITEM_PIPELINES={"changewatch.pipelines.ChangewatchPipeline": None, MyPipeline: 790})
    assert c.get_extension(ChangewatchRuntime) is not None


def test_components_without_the_runtime_say_how_to_enable_it() -> None:
    c = get_crawler(UnitSpider, {"ITEM_PIPELINES": {ChangewatchPipeline: 790}})
    with pytest.raises(ConfigError, match=r"changewatch\.Addon"):
        ChangewatchPipeline.from_crawler(c)


def test_the_addon_leaves_other_scrapy_settings_alone() -> None:
    """Beyond its components and the safety defaults (tests/addon/test_defaults.py): nothing."""
    plain = get_crawler(UnitSpider, {})
    with_addon = crawler()
    for name in ("DEFAULT_DROPITEM_LOG_LEVEL", "LOG_LEVEL", "FEED_EXPORT_ENCODING", "DOWNLOAD_DELAY", "FEEDS",
                 "AUTOTHROTTLE_ENABLED", "CONCURRENT_REQUESTS", "DEFAULT_REQUEST_HEADERS"):
        assert with_addon.settings.get(name) == plain.settings.get(name), name


def test_trusted_origins_are_exact() -> None:
    runtime = ChangewatchRuntime.of(crawler())
    runtime.trust_origin("http://127.0.0.1:8123/")
    assert runtime.trusts("http://127.0.0.1:8123/c/lamps/")
    assert not runtime.trusts("http://127.0.0.1:8124/") and not runtime.trusts("https://127.0.0.1:8123/")
    assert not runtime.trusts("http://localhost:8123/")


def test_store_settings_give_the_store_options_and_the_uri_overrides_them(tmp_path: Any) -> None:
    store = f"sqlite:///{tmp_path / 'state.db'}"
    runtime = ChangewatchRuntime.of(crawler(CHANGEWATCH_STORE=store, CHANGEWATCH_STORE_TIMEOUT="5",
                                            CHANGEWATCH_STORE_SYNCHRONOUS="FULL"))
    assert (runtime.runner.store.timeout, runtime.runner.store.synchronous) == (5.0, "FULL")
    runtime = ChangewatchRuntime.of(crawler(CHANGEWATCH_STORE=store + "?timeout=7", CHANGEWATCH_STORE_TIMEOUT=5))
    assert runtime.runner.store.timeout == 7.0
    with pytest.raises(ConfigError, match="CHANGEWATCH_STORE_TIMEOUT = 'soon'"):
        crawler(CHANGEWATCH_STORE_TIMEOUT="soon")


def test_the_retry_time_setting_reaches_the_postgresql_store_and_a_bad_one_stops_the_crawl() -> None:
    require(importlib.util.find_spec("psycopg") is not None, "the PostgreSQL driver",
            "pip install 'scrapy-changewatch[postgresql]'")
    store = "postgresql://db.example/watch"
    assert ChangewatchRuntime.of(crawler(CHANGEWATCH_STORE=store)).runner.store.retry_time == 60.0
    runtime = ChangewatchRuntime.of(crawler(CHANGEWATCH_STORE=store, CHANGEWATCH_STORE_RETRY_TIME="5"))
    assert runtime.runner.store.retry_time == 5.0
    runtime = ChangewatchRuntime.of(crawler(CHANGEWATCH_STORE=store + "?retry_time=0", CHANGEWATCH_STORE_RETRY_TIME=5))
    assert runtime.runner.store.retry_time == 0.0
    for bad in ("-1", "a minute", "inf"):
        with pytest.raises(ConfigError, match=f"CHANGEWATCH_STORE_RETRY_TIME = '{bad}'"):
            crawler(CHANGEWATCH_STORE=store, CHANGEWATCH_STORE_RETRY_TIME=bad)
    with pytest.raises(ConfigError, match=r"retry_time='soon' \(from the URI\) is not accepted: expected a number "
                                          "of seconds"):
        crawler(CHANGEWATCH_STORE=store + "?retry_time=soon")


def test_the_check_resolves_component_paths_as_scrapy_does() -> None:
    """Scrapy keeps the last of two paths that name one class: the guard listed, then removed
    under its module's path, is not built, and the crawl must not start without it."""
    with pytest.raises(ConfigError, match=r"changewatch\.guard\.SSRFGuardMiddleware"):
        crawler(DOWNLOADER_MIDDLEWARES={"changewatch.guard.SSRFGuardMiddleware": 560,
                                        "changewatch.guard.middleware.SSRFGuardMiddleware": None})
    crawler(DOWNLOADER_MIDDLEWARES={"changewatch.guard.middleware.SSRFGuardMiddleware": None,
                                    "changewatch.guard.SSRFGuardMiddleware": 560})  # the last one stands: it runs


def test_a_subclass_beside_the_component_it_stands_for_stops_the_crawl() -> None:
    """Two comparison steps: the first one judges every observation and the other one never
    sees one, so a subclass after ours would have its hooks ignored without a word."""
    with pytest.raises(ConfigError, match=r"ITEM_PIPELINES enables changewatch\.pipelines\.ChangewatchPipeline "
                                          r"twice .*MyPipeline.*None"):
        crawler(ITEM_PIPELINES={MyPipeline: 800})
