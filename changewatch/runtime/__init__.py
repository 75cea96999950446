"""What a crawl runs on besides Scrapy: the per-crawler :class:`ChangewatchRuntime` extension,
settings parsed once, stats, worker processes and what crosses to them.

Imported lazily: worker processes import ``changewatch.runtime.offload`` and must not pay for
importing Scrapy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._deprecated import module_getattr

if TYPE_CHECKING:
    from .extension import ChangewatchRuntime
    from .progress import ProgressLog

__all__ = ["ChangewatchRuntime", "ProgressLog"]

# ``changewatch.runtime`` was one module (StoreRunner, WorkerPool, spider_name): they still resolve.
_moved = module_getattr(__name__)


def __getattr__(name: str) -> Any:
    if name == "ChangewatchRuntime":
        from .extension import ChangewatchRuntime

        return ChangewatchRuntime
    if name == "ProgressLog":
        from .progress import ProgressLog

        return ProgressLog
    return _moved(name)
