"""changewatch: Scrapy change monitoring that reports real changes and stays quiet otherwise.

The public API: :class:`Addon` (``ADDONS``), :class:`ChangewatchSpider` and its :class:`Page`,
:class:`FieldSpec` and :class:`Entities` specs, the :class:`Observation` items spiders yield and
the :class:`ChangeRecord` items that leave the crawl, and :func:`canonical_url`. Feeds:
:mod:`changewatch.feeds`; request meta keys: :mod:`changewatch.meta`; settings: docs/settings.md.

The public names are imported lazily: worker processes import only ``changewatch.core`` and
must not pay for importing Scrapy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Addon", "ChangeRecord", "ChangewatchSpider", "Entities", "FieldSpec", "Observation", "Page",
           "__version__", "canonical_url"]

if TYPE_CHECKING:
    from .addon import Addon
    from .core.urls import canonical_url
    from .extract.page import Page
    from .extract.specs import Entities, FieldSpec
    from .items import ChangeRecord, Observation
    from .spider import ChangewatchSpider

_LAZY = {"Addon": "addon", "ChangeRecord": "items", "Observation": "items", "ChangewatchSpider": "spider",
         "Entities": "extract.specs", "FieldSpec": "extract.specs", "Page": "extract.page",
         "canonical_url": "core.urls"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
