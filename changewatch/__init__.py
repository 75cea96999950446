"""changewatch: Scrapy change monitoring that reports real changes and stays quiet otherwise.

The public names are imported lazily: worker processes import only ``changewatch.core`` and
must not pay for importing Scrapy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Addon", "ChangeRecord", "ChangewatchSpider", "Entities", "Field", "Observation", "Page",
           "__version__", "canonical_url"]

if TYPE_CHECKING:
    from .addon import Addon
    from .core.urls import canonical_url
    from .items import ChangeRecord, Observation
    from .page import Page
    from .specs import Entities, Field
    from .spider import ChangewatchSpider

_LAZY = {"Addon": "addon", "ChangeRecord": "items", "Observation": "items", "ChangewatchSpider": "spider",
         "Entities": "specs", "Field": "specs", "Page": "page", "canonical_url": "core.urls"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'changewatch' has no attribute {name!r}")
