"""Old import paths keep working, with a warning that names the new one."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
from scrapy.utils.misc import load_object
from scrapy.utils.test import get_crawler

from changewatch._deprecated import MOVED_ATTRIBUTES, MOVED_MODULES, ChangewatchDeprecationWarning


@pytest.mark.parametrize(("old", "new"), [
    ("changewatch.conditional.NotModified", "changewatch.middlewares.NotModified"),
    ("changewatch.origins.ResponseOrigins", "changewatch.runtime.origins.ResponseOrigins"),
    ("changewatch.conditional.ConditionalRequestMiddleware", "changewatch.middlewares.ConditionalRequestMiddleware"),
    ("changewatch.vantage.VantageMiddleware", "changewatch.middlewares.VantageMiddleware"),
    ("changewatch.delivery.RedeliveryMiddleware", "changewatch.middlewares.RedeliveryMiddleware"),
    ("changewatch.page.Page", "changewatch.Page"),
    ("changewatch.specs.Field", "changewatch.FieldSpec"),
    ("changewatch.Field", "changewatch.FieldSpec"),
    ("changewatch.structured.structured_data", "changewatch.extract.structured.structured_data"),
    ("changewatch.extract.select_value", "changewatch.extract.selectors.select_value"),
    ("changewatch.watchlist.load_watchlist", "changewatch.spiders.watchlist.load_watchlist"),
    ("changewatch.config.ChangewatchConfig", "changewatch.runtime.config.ChangewatchConfig"),
    ("changewatch.runtime.StoreRunner", "changewatch.store.runner.StoreRunner"),
    ("changewatch.conditional.META_KEY", "changewatch.meta.KEY"),
    ("changewatch.vantage.META_KEY", "changewatch.meta.VANTAGE"),
    ("changewatch.spider.KEY_META", "changewatch.meta.KEY"),
])
def test_old_paths_resolve_with_a_warning(old: str, new: str) -> None:
    with pytest.warns(ChangewatchDeprecationWarning, match=new.rsplit(".", 1)[-1]):
        value = load_object(old)
    assert value is load_object(new)


def test_every_moved_name_resolves() -> None:
    for old, new in MOVED_ATTRIBUTES.items():
        with pytest.warns(ChangewatchDeprecationWarning):
            assert load_object(old) is load_object(new), old
    for module in MOVED_MODULES:
        assert importlib.import_module(module).__doc__.startswith("Deprecated alias")


def test_unknown_names_still_raise() -> None:
    import changewatch.conditional as old

    with pytest.raises(AttributeError):
        old.NoSuchThing  # noqa: B018
    with pytest.raises(ImportError):
        importlib.import_module("changewatch.no_such_module")


def test_from_import_in_a_fresh_interpreter() -> None:
    code = ("import warnings; warnings.simplefilter('error')\n"
            "try:\n    from changewatch.conditional import NotModified\nexcept Warning as w:\n    print(w)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "changewatch.conditional.NotModified is deprecated: use changewatch.middlewares.conditional.NotModified" \
        in out


def test_addon_runs_an_old_component_path_once() -> None:
    """A project that still lists an old path: the add-on renames it (keeping the user's order and
    priority), so the middleware is not built twice."""
    from changewatch.addon import Addon

    settings = {"ADDONS": {Addon: 0}, "DOWNLOADER_MIDDLEWARES": {"changewatch.vantage.VantageMiddleware": 333}}
    with pytest.warns(ChangewatchDeprecationWarning, match="changewatch.middlewares.VantageMiddleware"):
        crawler = get_crawler(settings_dict=settings)
        crawler._apply_settings()
    components = crawler.settings["DOWNLOADER_MIDDLEWARES"]
    assert components["changewatch.middlewares.VantageMiddleware"] == 333
    assert components["changewatch.vantage.VantageMiddleware"] is None


def test_the_old_pipelines_still_load_and_warn() -> None:
    from changewatch.pipelines import ChangewatchPipeline, CommitPipeline, ContentPipeline

    crawler = get_crawler(settings_dict={"ADDONS": {"changewatch.Addon": 0}})
    with pytest.warns(ChangewatchDeprecationWarning, match="ChangewatchPipeline"):
        assert isinstance(CommitPipeline.from_crawler(crawler), ChangewatchPipeline)
    with pytest.warns(ChangewatchDeprecationWarning, match="remove it from ITEM_PIPELINES"):
        step = ContentPipeline.from_crawler(crawler)
    item = {"key": "k", "url": "https://s.example/", "html": "<p>x</p>"}
    assert step.process_item(item) is item


def test_a_project_listing_the_four_old_pipelines_runs_the_one_step_once() -> None:
    old = {f"changewatch.pipelines.{name}": order for name, order in
           (("FieldPipeline", 710), ("EntitySetPipeline", 720), ("ContentPipeline", 730), ("CommitPipeline", 790))}
    with pytest.warns(ChangewatchDeprecationWarning):
        crawler = get_crawler(settings_dict={"ADDONS": {"changewatch.Addon": 0}, "ITEM_PIPELINES": old})
    enabled = {k: v for k, v in crawler.settings.getdict("ITEM_PIPELINES").items() if v is not None}
    assert enabled == {"changewatch.pipelines.ChangewatchPipeline": 790}
