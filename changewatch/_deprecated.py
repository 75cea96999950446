"""Import paths that moved, kept working with a warning: users' code and settings name them.

One table for the whole package. A moved module (``changewatch.conditional``) is importable
under its old name through a finder on ``sys.meta_path`` that builds an empty alias module whose
attributes resolve, with a :class:`ChangewatchDeprecationWarning`, to their new homes; a module
that still exists but lost a name (``changewatch.runtime.StoreRunner``) gets the same through
:func:`module_getattr`. Settings that name an old component path (``ITEM_PIPELINES``,
``DOWNLOADER_MIDDLEWARES``…) are translated by the add-on (:func:`translate_components`), so a
component never runs twice under two names.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ["MOVED_ATTRIBUTES", "MOVED_MODULES", "ChangewatchDeprecationWarning", "install", "module_getattr",
           "translate_components", "warn_moved"]


class ChangewatchDeprecationWarning(Warning):
    """A changewatch name that still works but will go; the message names its replacement.
    A ``Warning``, not a ``DeprecationWarning``, so that it shows in a crawl's log (as Scrapy's
    own ScrapyDeprecationWarning does)."""


#: old module → the module its names moved to (names not in MOVED_ATTRIBUTES keep their name)
MOVED_MODULES: dict[str, str] = {
    "changewatch.conditional": "changewatch.middlewares.conditional",
    "changewatch.origins": "changewatch.middlewares.notmodified",
    "changewatch.vantage": "changewatch.middlewares.vantage",
    "changewatch.delivery": "changewatch.middlewares.delivery",
    "changewatch.page": "changewatch.extract.page",
    "changewatch.specs": "changewatch.extract.specs",
    "changewatch.structured": "changewatch.extract.structured",
    "changewatch.observe": "changewatch.extract.observe",
    "changewatch.watchlist": "changewatch.spiders.watchlist",
    "changewatch.config": "changewatch.runtime.config",
    "changewatch.stats": "changewatch.runtime.stats",
    "changewatch.reprs": "changewatch.core.reprs",
}

_META_KEYS = {"META_CONDITIONAL": "CONDITIONAL", "META_KEY": "KEY", "META_NOT_MODIFIED": "NOT_MODIFIED",
              "META_SPEC": "SPEC"}

#: old dotted name → new dotted name, for names that were renamed or moved on their own
MOVED_ATTRIBUTES: dict[str, str] = {
    **{f"changewatch.conditional.{old}": f"changewatch.meta.{new}" for old, new in _META_KEYS.items()},
    **{f"changewatch.origins.{old}": f"changewatch.meta.{new}" for old, new in _META_KEYS.items()},
    "changewatch.vantage.META_KEY": "changewatch.meta.VANTAGE",
    "changewatch.origins.ResponseOrigins": "changewatch.runtime.origins.ResponseOrigins",
    "changewatch.conditional.ResponseOrigins": "changewatch.runtime.origins.ResponseOrigins",
    "changewatch.spider.KEY_META": "changewatch.meta.KEY",
    "changewatch.Field": "changewatch.extract.specs.FieldSpec",
    "changewatch.specs.Field": "changewatch.extract.specs.FieldSpec",
    "changewatch.observe.observe_watch": "changewatch.spiders.watch.observe_watch",
    "changewatch.observe.watch_specs": "changewatch.spiders.watch.watch_specs",
    "changewatch.observe.binary_body": "changewatch.extract.selectors.binary_body",
    "changewatch.observe.undecodable": "changewatch.extract.page.undecodable",
    "changewatch.runtime.StoreRunner": "changewatch.store.runner.StoreRunner",
    "changewatch.runtime.spider_name": "changewatch.store.runner.spider_name",
    "changewatch.runtime.WorkerPool": "changewatch.runtime.workers.WorkerPool",
    **{f"changewatch.extract.{name}": f"changewatch.extract.selectors.{name}"
       for name in ("SelectorError", "binary_body", "check_selector", "is_xpath", "select", "select_value",
                    "value_of")},
    "changewatch.extract.find_nodes": "changewatch.extract.structured.find_nodes",
    "changewatch.extract.resolve_path": "changewatch.extract.structured.resolve_path",
}


def warn_moved(old: str, new: str, stacklevel: int = 3) -> None:
    warnings.warn(f"{old} is deprecated: use {new}", ChangewatchDeprecationWarning, stacklevel=stacklevel)


def _load(dotted: str) -> Any:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _new_name(module: str, name: str) -> str | None:
    full = f"{module}.{name}"
    if full in MOVED_ATTRIBUTES:
        return MOVED_ATTRIBUTES[full]
    if module in MOVED_MODULES:
        return f"{MOVED_MODULES[module]}.{name}"
    return None


def module_getattr(module: str) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for *module*: its moved names, with a warning."""

    def __getattr__(name: str) -> Any:
        new = _new_name(module, name) if not name.startswith("__") else None
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        try:
            value = _load(new)
        except AttributeError:
            raise AttributeError(f"module {module!r} has no attribute {name!r}") from None
        warn_moved(f"{module}.{name}", new)
        return value

    return __getattr__


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old names of moved modules; their attributes resolve lazily to the new ones."""

    def find_spec(self, fullname: str, path: Any = None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        new = MOVED_MODULES[module.__name__]
        module.__doc__ = f"Deprecated alias of {new}."
        module.__getattr__ = module_getattr(module.__name__)  # type: ignore[method-assign]


_FINDER = _AliasFinder()


def install() -> None:
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.append(_FINDER)


#: component paths users' settings may name → their current path (None: merged into another
#: component, nothing to enable on its own)
MOVED_COMPONENTS: dict[str, str | None] = {
    "changewatch.conditional.ConditionalRequestMiddleware": "changewatch.middlewares.ConditionalRequestMiddleware",
    "changewatch.conditional.ConditionalSpiderMiddleware": "changewatch.middlewares.ConditionalSpiderMiddleware",
    "changewatch.vantage.VantageMiddleware": "changewatch.middlewares.VantageMiddleware",
    "changewatch.delivery.RedeliveryMiddleware": "changewatch.middlewares.RedeliveryMiddleware",
    "changewatch.pipelines.CommitPipeline": "changewatch.pipelines.ChangewatchPipeline",
    "changewatch.pipelines.FieldPipeline": None,
    "changewatch.pipelines.EntitySetPipeline": None,
    "changewatch.pipelines.ContentPipeline": None,
}


def translate_components(components: Any) -> None:
    """Rename the deprecated component paths in a component dict (a BaseSettings such as
    ``settings["ITEM_PIPELINES"]``) to their current paths, at the priority the user set them,
    so that a project listing an old path and the add-on listing the new one run it once."""
    for old, new in MOVED_COMPONENTS.items():
        if old not in components:
            continue
        priority = components.getpriority(old)
        value = components[old]
        warn_moved(old, new or "nothing (it is part of changewatch.pipelines.ChangewatchPipeline now)", stacklevel=2)
        if new is not None:
            components.set(new, value, priority)
        components.set(old, None, priority)
