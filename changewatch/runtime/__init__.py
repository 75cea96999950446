"""What a crawl's changewatch components run on besides Scrapy, below every feature: the
services they share (:class:`~.services.CrawlServices`), stats, worker processes and what
crosses to them, the response each item came from, and the progress line. Imports no feature.

Imported lazily: worker processes import ``changewatch.runtime.offload`` and must not pay for
importing Scrapy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .progress import ProgressLog
    from .services import CrawlServices

__all__ = ["CrawlServices", "ProgressLog"]


def __getattr__(name: str) -> Any:
    if name == "CrawlServices":
        from .services import CrawlServices

        return CrawlServices
    if name == "ProgressLog":
        from .progress import ProgressLog

        return ProgressLog
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
