"""The names a round goes by: the round's name, its Redis keys, and a claim's value."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..config import ConfigError

__all__ = ["CLAIMED", "RoundKeys", "claim_value", "parse_claim", "round_name"]

#: private meta key: this request's start was claimed already; a retry or a redirect that copied
#: its meta is not a new start and must not be claimed (it would lose to its own claim)
CLAIMED = "_changewatch_round_claimed"


def round_name(explicit: str | None, every: float | None, now: float) -> str:
    """The round a process started at *now* belongs to: *explicit* (``CHANGEWATCH_ROUND``), else
    the start of the round of length *every* (``CHANGEWATCH_ROUND_EVERY``) nearest to *now*, so
    that processes started by cron a little before or after the hour, on clocks a little apart,
    agree.

    >>> round_name(None, 900, 1_764_504_000 + 7)   # 7 s after 12:00 UTC
    '2025-11-30T12:00:00Z'
    >>> round_name(None, 900, 1_764_504_000 - 3)   # a clock 3 s early
    '2025-11-30T12:00:00Z'
    >>> round_name("nightly-42", 900, 0)
    'nightly-42'
    """
    if explicit:
        return explicit
    if every is None:
        raise ConfigError("CHANGEWATCH_ROUND = None: expected a round name (CHANGEWATCH_ROUND) or how often rounds "
                          "start (CHANGEWATCH_ROUND_EVERY, e.g. 15m): RoundScheduler shares work per round")
    start = round(now / every) * every
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start))


@dataclass(frozen=True, slots=True)
class RoundKeys:
    """The Redis keys of one round of one spider."""

    queue: str  # the shared request queue (scrapy-redis)
    claims: str  # hash: start request identity -> "<URL> <owner>": the watch's URL and the process that claimed it
    seen: str  # scrapy-redis dupefilter of the round's other requests (dont_filter=False)
    marker: str  # exists while Redis holds the round: gone means flushed, evicted or expired
    notes: str  # set: what a process noted for the others of the round (RoundScheduler.note)
    busy: str  # set: the processes still preparing work for the round (changewatch.distributed.sharing)

    @classmethod
    def of(cls, prefix: str, spider: str, round_: str) -> RoundKeys:
        base = f"{prefix}:{spider}:{round_}"
        return cls(f"{base}:queue", f"{base}:claims", f"{base}:seen", f"{base}:marker", f"{base}:notes",
                   f"{base}:busy")

    def all(self) -> tuple[str, ...]:
        return self.queue, self.claims, self.seen, self.marker, self.notes, self.busy


def claim_value(url: str, owner: str) -> str:
    """A claim's value in the round's claims hash: the URL claimed (another watchlist claiming the
    key for another URL is a conflict) and the process that claimed it (its own claim, found again
    after the reply was lost, is still its own). A URL has no space in it (Scrapy escapes them)."""
    return f"{url} {owner}"


def parse_claim(value: bytes | str | None) -> tuple[str | None, str | None]:
    """(URL, owner) of a claim's value; a value without an owner is a URL alone."""
    if value is None:
        return None, None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    url, space, owner = value.rpartition(" ")
    return (url, owner) if space else (value, None)
