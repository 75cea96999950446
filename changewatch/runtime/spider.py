"""What the runtime reads of the crawl's spider, in one place (:func:`spider_options`).

Any Scrapy spider may yield observations: one that declares none of the ``changewatch_*``
members below gets the defaults, and the runtime parses its ``-a calibrate=`` and ``-a forget=``
itself. A :class:`~changewatch.spider.ChangewatchSpider` (and so the ``watch`` spider) declares
them; a per-site spider of the user's may declare ``changewatch_canaries()`` (docs/health.md).

This module imports no feature of changewatch: every feature may read a spider through it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Canaries", "ChangewatchSpiderOptions", "SpiderOptions", "spider_options"]

#: key → (url, canary declaration {"expect": …, "within": …})
Canaries = Mapping[str, tuple[str, Mapping[str, Any]]]


def _no_canaries() -> Canaries:
    return {}


@dataclass(frozen=True, slots=True)
class SpiderOptions:
    """What a spider tells the runtime, read when it is asked (the spider opened, or later)."""

    #: why the crawl must stop before it fetches or stores anything (the spider said so once)
    cannot_start: str | None = None
    #: ``-a calibrate=N`` as the spider parsed it (None: not parsed; the runtime parses it)
    calibrate: int | None = None
    #: ``-a forget=KEY`` as the spider parsed it (None: not parsed; the runtime parses it)
    forget: frozenset[str] | None = None
    #: some page is rendered in a browser (the crawl stops at start when there is none)
    renders: bool = False
    #: how many watches the spider has (the progress line's total; None: unknown)
    listed: int | None = None
    #: the canaries the spider declares, asked when needed (a watchlist's may be long)
    canaries: Callable[[], Canaries] = field(default=_no_canaries)


class ChangewatchSpiderOptions(Protocol):
    """The members a changewatch spider declares; each is optional for any other spider."""

    changewatch_cannot_start: str | None
    changewatch_calibrate: int
    changewatch_forget: frozenset[str]

    @property
    def changewatch_renders(self) -> bool: ...

    @property
    def changewatch_listed(self) -> int | None: ...

    def changewatch_canaries(self) -> Canaries: ...


def spider_options(spider: object) -> SpiderOptions:
    """The options *spider* declares (the members of :class:`ChangewatchSpiderOptions`), the
    defaults for those it does not."""
    listed = getattr(spider, "changewatch_listed", None)
    calibrate = getattr(spider, "changewatch_calibrate", None)
    forget = getattr(spider, "changewatch_forget", None)
    canaries = getattr(spider, "changewatch_canaries", None)
    return SpiderOptions(
        cannot_start=getattr(spider, "changewatch_cannot_start", None) or None,
        calibrate=calibrate if isinstance(calibrate, int) else None,
        forget=frozenset(forget) if forget is not None else None,
        renders=bool(getattr(spider, "changewatch_renders", False)),
        listed=listed if isinstance(listed, int) else None,
        canaries=canaries if callable(canaries) else _no_canaries,
    )
