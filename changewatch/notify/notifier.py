"""Sending what each destination has not been sent yet: after a crawl (its own changes and any an
earlier run could not deliver) and from ``changewatch notify --resend``. One message per
destination; destinations are sent to at once, each with its own retries; each change's state per
destination is settled in the store (sent, or failed and still pending for the next try)."""

from __future__ import annotations

import asyncio
import logging
import shlex
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
    """Sends to *destinations* (by id) the changes the store holds for them; *store_name* is the
    store's URI as a printed command's argument (``changewatch.store.options.uri_argument``)."""

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
        ids = list(message.change_ids)
        wanted = set(ids)

        async def still_pending() -> bool:  # discarded meanwhile (changewatch notify --discard): stop
            states = await self.call(self.store.notification_states, spider=spider, since=since, pending=True)
            return any(s.destination == destination.id and s.change_id in wanted for s in states)

        outcome: Attempted = await send(destination, message.title, message.body, self.policy, still_pending)
        report.attempts[destination.shown] += outcome.attempts
        if outcome.sent:
            await self.call(self.store.settle_notifications, destination.id, ids, self.owner, sent_at=utc_now(),
                            attempts=outcome.attempts)
            report.sent[destination.shown] = len(ids)
            logger.info("changewatch: notified %s of %d change(s)", destination.shown, len(ids))
            return
        await self.call(self.store.settle_notifications, destination.id, ids, self.owner, sent_at=None,
                        error=outcome.error, attempts=outcome.attempts)
        if outcome.abandoned:
            logger.info("changewatch: stopped notifying %s after %d attempt(s): its %d change(s) were discarded "
                        "meanwhile (changewatch notify --discard)", destination.shown, outcome.attempts, len(ids))
            return
        report.failed[destination.shown] = outcome.error or "failed"
        logger.error("changewatch: could not notify %s of %d change(s) (%d attempt(s)): %s; they stay pending: the "
                     "next run, or changewatch notify --resend, sends them", destination.shown, len(ids),
                     outcome.attempts, outcome.error)

    async def _unknown(self, report: NotifyReport, spider: str | None, since: str | None) -> None:
        states = await self.call(self.store.notification_states, spider=spider, since=since, pending=True)
        named: dict[str, str] = {}  # shown form → how --discard names it
        for state in states:
            if state.destination not in self.destinations:
                report.unknown[state.shown] = report.unknown.get(state.shown, 0) + 1
                named.setdefault(state.shown, self._discard_name(state.shown, state.destination))
        for shown, count in report.unknown.items():
            logger.warning("changewatch: %d change(s) wait for %s, which this configuration does not name (its URL "
                           "is never stored): configure it again (CHANGEWATCH_NOTIFY, or the watchlist's notify) and "
                           "run changewatch notify --resend, or end them: %s", count, shown,
                           self.discard_command(named[shown]))

    def _discard_name(self, shown: str, destination_id: str) -> str:
        """*shown*, unless a configured destination is shown the same way (then the id, which only
        this one has): a discard must not end the deliveries of a destination still in use."""
        clash = any(d.shown == shown and d.id != destination_id for d in self.destinations.values())
        return destination_id if clash else shown

    def discard_command(self, name: str) -> str:
        """The command that discards *name*'s pending changes, to copy and paste: with this store's
        URI unless it holds a secret (its redacted form would not open it)."""
        store = f" --store {self.store_name}" if "***" not in self.store_name else ""  # already quoted
        return f"changewatch notify{store} --discard {shlex.quote(name)}"
