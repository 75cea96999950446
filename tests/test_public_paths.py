"""Every dotted path the docs tell users to write is listed in docs/settings.md ("Dotted paths you
write"), imports, and is what the add-on, the project settings and the built-in registries name:
a module moved without its docs, or a component the add-on enables under a path the docs do not
list, fails here."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import changewatch
from changewatch.addon import (
    DOWNLOADER_MIDDLEWARE_ORDER,
    EXTENSION_ORDER,
    PIPELINE_ORDER,
    RENDER_HANDLER,
    SAFETY_DEFAULTS,
    SPIDER_CONTRACT_ORDER,
    SPIDER_MIDDLEWARE_ORDER,
    STAND_INS,
)
from changewatch.core.comparisons import BUILTIN_COMPARISONS
from changewatch.store import BUILTIN_STORE_SCHEMES

ROOT = Path(__file__).resolve().parents[1]


def listed_paths() -> list[str]:
    doc = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    section = doc.split("## Dotted paths you write", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `(changewatch(?:\.\w+)*)` \|", section, flags=re.M)


def resolve(path: str) -> object:
    """The module, or the attribute of a module, a dotted path names (as Scrapy's load_object,
    which also takes a module path for SPIDER_MODULES and settings)."""
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError as exc:
        if exc.name != path:
            raise
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_the_section_lists_paths() -> None:
    assert len(listed_paths()) >= 30


@pytest.mark.parametrize("path", listed_paths())
def test_each_listed_path_imports(path: str) -> None:
    assert resolve(path) is not None


def test_every_path_the_addon_and_the_project_settings_write_is_listed() -> None:
    from changewatch import settings

    written = {*PIPELINE_ORDER, *EXTENSION_ORDER, *DOWNLOADER_MIDDLEWARE_ORDER, *SPIDER_MIDDLEWARE_ORDER,
               *STAND_INS.values(), RENDER_HANDLER, "changewatch.feeds.ChangeRecordCsvExporter",
               *SPIDER_CONTRACT_ORDER, SAFETY_DEFAULTS["TWISTED_DNS_RESOLVER"],
               *BUILTIN_STORE_SCHEMES.values(), *BUILTIN_COMPARISONS.values()}
    written |= {name for name in settings.ADDONS}
    assert written - set(listed_paths()) == set()


def test_the_package_root_exports_its_public_api() -> None:
    for name in changewatch.__all__:
        assert getattr(changewatch, name) is not None
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    public = readme.split("### The public API", 1)[1].split("\n#", 1)[0]
    assert {name for name in changewatch.__all__ if name != "__version__"} <= set(re.findall(r"`(\w+)`", public))
