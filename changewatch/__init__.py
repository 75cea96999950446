"""changewatch: Scrapy change monitoring that reports real changes and stays quiet otherwise.

The public names are imported lazily: worker processes import only ``changewatch.core`` and
must not pay for importing Scrapy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Addon", "ChangeRecord", "Observation", "__version__"]

if TYPE_CHECKING:
    from .addon import Addon
    from .items import ChangeRecord, Observation


def __getattr__(name: str) -> Any:
    if name == "Addon":
        from .addon import Addon

        return Addon
    if name in ("ChangeRecord", "Observation"):
        from . import items

        return getattr(items, name)
    raise AttributeError(f"module 'changewatch' has no attribute {name!r}")
