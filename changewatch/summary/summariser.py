"""The optional AI summary: one sentence from a language model, the last step before a record is
exported. A garnish on the deterministic diff, never the product: on any failure the record ships
without it. What it sends is redacted first (:mod:`changewatch.core.redact`).

Only ``content`` and ``field`` records that have a diff or a field table are summarised, and a
redelivery only when it has no summary yet. Calls run at most ``CHANGEWATCH_SUMMARY_CONCURRENCY``
at a time, each within ``CHANGEWATCH_SUMMARY_TIMEOUT``. They stop for the rest of the run, after
one log line, when the endpoint says the account cannot pay (HTTP 402, insufficient quota, no
credit) or refuses the key; a single 5xx or timeout does not stop them. A daily budget
(``CHANGEWATCH_SUMMARY_DAILY_BUDGET``, estimated tokens times ``CHANGEWATCH_SUMMARY_PRICE_PER_1K``)
is counted in the store, shared by every process of the day: the estimate is reserved before a
call (so processes asking at once cannot overspend) and corrected by the usage the answer reports.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from ..core.redact import redact
from ..store import RoutingStore
from .client import MAX_TOKENS, Answer, ChatClient, Unfunded

__all__ = ["SUMMARISED_KINDS", "SYSTEM_PROMPT", "Summariser", "prompt_for"]

logger = logging.getLogger(__name__)

SUMMARISED_KINDS = frozenset({"content", "field"})
SYSTEM_PROMPT = ("You summarise a change detected on a monitored web page. Answer with one plain sentence of at most "
                 "30 words saying what changed, using only the facts given. No preamble, no markdown.")
PROMPT_CHARS = 6000  # of the change itself, at most: a huge diff is cut (and says so)
_FIELDS = 40


def prompt_for(record: Mapping[str, Any]) -> str:
    """What the model is told of a change, redacted: the page (without its query), the kind, the
    field table and the diff, capped."""
    url = str(record.get("url") or record.get("key") or "")
    parts = urlsplit(url)
    lines = [f"Page: {parts.scheme}://{parts.netloc}{parts.path}" if parts.netloc else f"Page: {url}",
             f"Kind of change: {record.get('kind')}"]
    changes = record.get("changes")
    if isinstance(changes, Mapping) and changes:
        lines.append("Field changes (old → new):")
        for name, change in list(changes.items())[:_FIELDS]:
            if isinstance(change, Mapping):
                lines.append(f"- {name}: {change.get('old')!r} → {change.get('new')!r}")
    if isinstance(record.get("diff"), str) and record["diff"]:
        lines += ["Text diff (lines starting with - were removed, + added):", record["diff"]]
    text = "\n".join(lines)
    if len(text) > PROMPT_CHARS:
        text = text[:PROMPT_CHARS] + "\n[the rest of the diff was cut]"
    return redact(text)


def _day() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


class Summariser:
    """Summarises change records for one crawl (or one command)."""

    def __init__(self, client: ChatClient | None, *, concurrency: int, store: RoutingStore,
                 call: Callable[..., Awaitable[Any]], count: Callable[[str], None], budget: float | None,
                 price_per_1k: float, why_not: str | None = None):
        self.client = client
        self.semaphore = asyncio.Semaphore(concurrency)
        self.store = store
        self.call = call
        self.count = count
        self.budget = budget
        self.price = price_per_1k
        #: why no call is made for the rest of the run (said once), None while calls may be made
        self.stopped: str | None = None
        # The first call of a run goes alone: an endpoint that cannot pay is asked once, not once
        # per call already in flight; after an answer (or an ordinary failure) calls run side by side.
        self._first = asyncio.Lock()
        self._answered = False
        if why_not is not None:
            self._stop(why_not)

    @staticmethod
    def wants(record: Mapping[str, Any]) -> bool:
        """A content or field record with a diff or a field table, not summarised yet."""
        return (record.get("kind") in SUMMARISED_KINDS and bool(record.get("diff") or record.get("changes"))
                and not record.get("summary"))

    def _stop(self, why: str, level: int = logging.WARNING) -> None:
        """No more calls this run: said once, here."""
        if self.stopped is None:
            self.stopped = why
            logger.log(level, "changewatch: no more summaries this run: %s; changes ship with their diffs", why)

    def _cost(self, prompt: str) -> float:
        tokens = math.ceil((len(SYSTEM_PROMPT) + len(prompt)) / 4) + MAX_TOKENS  # ~4 characters a token
        return tokens / 1000 * self.price

    async def summarise(self, record: Mapping[str, Any]) -> str | None:
        """The summary of *record*, or None (not asked, or the answer was no summary)."""
        if self.stopped is not None or self.client is None:
            self.count("skipped")
            return None
        if not self._answered:
            async with self._first:
                if not self._answered:
                    return await self._call(record)
        return await self._call(record)

    async def _call(self, record: Mapping[str, Any]) -> str | None:
        assert self.client is not None
        prompt = prompt_for(record)
        cost = self._cost(prompt)
        async with self.semaphore:
            if self.stopped is not None:  # latched while this one waited its turn
                self.count("skipped")
                return None
            if (self.budget is not None or self.price) and not await self.call(self.store.add_spend, _day(), cost,
                                                                               self.budget):
                self.count("over_budget")
                self._stop(f"CHANGEWATCH_SUMMARY_DAILY_BUDGET ({self.budget:g}) is spent for {_day()} (UTC)",
                           logging.INFO)
                return None
            self.count("requested")
            result = await self.client.complete(SYSTEM_PROMPT, prompt)
        return await self._settled(record, result, cost)

    async def _settled(self, record: Mapping[str, Any], result: Any, cost: float) -> str | None:
        if not isinstance(result, Unfunded):
            self._answered = True
        if isinstance(result, Answer):
            if result.tokens is not None and self.price:
                await self.call(self.store.add_spend, _day(), result.tokens / 1000 * self.price - cost, None, calls=0)
            self.count("added")
            return result.text
        if isinstance(result, Unfunded):
            self.count("unfunded")
            if self.price:
                await self.call(self.store.add_spend, _day(), -cost, None, calls=0)
            self._stop(f"the summary endpoint cannot be used ({result.why})", logging.ERROR)
            return None
        self.count("timeout" if result.timeout else "failed")
        if not result.timeout and self.price:  # refused at once: not billed (a timeout may have been)
            await self.call(self.store.add_spend, _day(), -cost, None, calls=0)
        logger.debug("changewatch: no summary for %s: %s", record.get("key"), result.why)
        return None

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()
