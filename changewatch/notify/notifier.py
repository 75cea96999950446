"""Sending what each destination has not been sent yet: after a crawl (its own changes and any an
earlier run could not deliver) and from ``changewatch notify --resend``. One message per
destination; destinations are sent to at once, each with its own retries; each change's state per
destination is settled in the store (sent, or failed and still pending for the next try)."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.destinations import Destination
from ..core.observation import utc_now
from ..store import PendingNotification, RoutingStore
from .message import build_message
from .sender import Attempted, SendPolicy, send

__all__ = ["NotifyReport", "Notifier"]

logger = logging.getLogger(__name__)

#: how a store method is called: inline, on the store's thread, or in a thread of its own
StoreCall = Callable[..., Awaitable[Any]]
BATCH = 1000  # changes in one destination's message at most; more wait for the next run


@dataclass
class NotifyReport:
    """What a round of sending did, per destination's shown form."""

    sent: dict[str, int] = field(default_factory=dict)  # changes sent
    failed: dict[str, str] = field(default_factory=dict)  # why not
    attempts: Counter[str] = field(default_factory=Counter)
    #: unsent notifications to destinations not configured here (their URLs are not in the store)
    unknown: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failed


class Notifier:
    """Sends to *destinations* (by id) the changes the store holds for them."""

    def __init__(self, store: RoutingStore, call: StoreCall, destinations: Mapping[str, Destination],
                 policy: SendPolicy, owner: str, *, max_chars: int, store_name: str):
        self.store = store
        self.call = call
        self.destinations = dict(destinations)
        self.policy = policy
        self.owner = owner
        self.max_chars = max_chars
        self.store_name = store_name

    @property
    def claim_seconds(self) -> float:
        """Long enough for every attempt: a claim outliving a live sender would let another send too."""
        return self.policy.retry_time + self.policy.timeout * 2 * (self.policy.retries + 1) + 60

    async def run(self, *, spider: str | None = None, since: str | None = None) -> NotifyReport:
        report = NotifyReport()
        await asyncio.gather(*(self._deliver(d, report, spider, since) for d in self.destinations.values()))
        await self._unknown(report, spider, since)
        return report

    async def _deliver(self, destination: Destination, report: NotifyReport, spider: str | None,
                       since: str | None) -> None:
        changes: list[PendingNotification] = await self.call(
            self.store.claim_notifications, [destination.id], self.owner, self.claim_seconds, spider=spider,
            since=since, limit=BATCH)
        if not changes:
            return
        message = build_message(changes, self.max_chars, self.store_name, destination.shown)
        outcome: Attempted = await send(destination, message.title, message.body, self.policy)
        report.attempts[destination.shown] += outcome.attempts
        ids = list(message.change_ids)
        if outcome.sent:
            await self.call(self.store.settle_notifications, destination.id, ids, self.owner, sent_at=utc_now())
            report.sent[destination.shown] = len(ids)
            logger.info("changewatch: notified %s of %d change(s)", destination.shown, len(ids))
            return
        await self.call(self.store.settle_notifications, destination.id, ids, self.owner, sent_at=None,
                        error=outcome.error)
        report.failed[destination.shown] = outcome.error or "failed"
        logger.error("changewatch: could not notify %s of %d change(s) (%d attempt(s)): %s; they stay pending: the "
                     "next run, or changewatch notify --resend, sends them", destination.shown, len(ids),
                     outcome.attempts, outcome.error)

    async def _unknown(self, report: NotifyReport, spider: str | None, since: str | None) -> None:
        states = await self.call(self.store.notification_states, spider=spider, since=since, pending=True)
        for state in states:
            if state.destination not in self.destinations:
                report.unknown[state.shown] = report.unknown.get(state.shown, 0) + 1
        for shown, count in report.unknown.items():
            logger.warning("changewatch: %d change(s) wait for %s, which this configuration does not name (its URL "
                           "is never stored): configure it again (CHANGEWATCH_NOTIFY, or the watchlist's notify) and "
                           "run changewatch notify --resend", count, shown)
