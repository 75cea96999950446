"""What a round's scheduler keeps, declared once for the parts it is made of (its claims, its
rides through Redis outages), which :class:`~changewatch.distributed.scheduler.RoundScheduler`
sets up."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from redis import Redis
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

    from ..runtime.stats import Stats
    from ..store.outage import Outage
    from .keys import RoundKeys
    from .sharing import SharedWork

__all__ = ["RoundState"]


class RoundState:
    """The attributes of a round's scheduler, and the methods one part asks of another."""

    crawler: Crawler
    server: Redis
    round: str
    ttl: int
    owner: str
    stats: Stats
    keys: RoundKeys
    queue: Any
    dupefilter: Any
    sharing: SharedWork
    spider: Spider | None
    retry_time: float
    _starts: list[Request]
    _units: dict[str, bool]
    _local: deque[Request]
    _counts: dict[str, int]
    _pushed: int
    _outage: Outage
    _last_error: str
    _held: list[Request]
    _owed: set[str]
    _budget: asyncio.TimerHandle | None
    _gave_up: bool

    def _refresh(self) -> None:
        raise NotImplementedError

    def _enqueue(self, request: Request) -> bool:
        raise NotImplementedError
