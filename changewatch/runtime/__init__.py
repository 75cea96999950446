"""What a crawl runs on besides Scrapy: the per-crawler :class:`ChangewatchRuntime` extension,
settings parsed once, stats, worker processes and what crosses to them.

Imported lazily: worker processes import ``changewatch.runtime.offload`` and must not pay for
importing Scrapy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .extension import ChangewatchRuntime
    from .progress import ProgressLog

__all__ = ["ChangewatchRuntime", "ProgressLog"]

def __getattr__(name: str) -> Any:
    if name == "ChangewatchRuntime":
        from .extension import ChangewatchRuntime

        return ChangewatchRuntime
    if name == "ProgressLog":
        from .progress import ProgressLog

        return ProgressLog
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
