"""Adaptive revisits (docs/schedule.md): how often each key changes, and when it is due again.

A key's changes are taken as a Poisson process of unknown rate λ, seen only through visits: a
visit after Δ seconds says "changed since the last visit" or "not changed", never how often. The
estimate is a distribution over λ on a fixed grid of rates (one a minute down to one a year),
updated exactly by that censored likelihood, 1 - exp(-λΔ) or exp(-λΔ), after mixing back a share
of the prior that grows with Δ (old evidence loses half its weight over two maximum intervals),
so that a key whose behaviour changes is believed again within a few visits. The next visit is
due once the probability that the page changed since the last one reaches one half, within the
bounds (``CHANGEWATCH_SCHEDULE_MIN_INTERVAL`` and ``_MAX_INTERVAL``).

Pure functions of their arguments (times are passed in, never read): the store calls
:meth:`ScheduleUpdate.columns` inside a commit, with the fetch time it stores (clamped when it
was ahead of the store's clock), and the schedule middleware calls :func:`decide`. No Scrapy.
"""

from __future__ import annotations

import base64
import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # NumPy is imported on first use: a crawl without the schedule never pays for it
    import numpy as np
    import numpy.typing as npt

__all__ = ["CHANGE_PROBABILITY", "SLACK", "Bounds", "Due", "DueEntry", "RateEstimate", "ScheduleUpdate",
           "decide", "epoch", "iso", "rates"]

#: the next visit is due when the page has changed since the last one with this probability
CHANGE_PROBABILITY = 0.5
#: a key is due from this share of its interval before its due time (a run started by cron a
#: little before the due time of a page it fetched a little late last time still fetches it)
SLACK = 0.1
#: seconds a due time may lie beyond a whole interval ahead before it is not believed (a clock
#: that moved back, or a fetch time from a faster clock): such a key is due
_TOLERANCE = 60.0

_DAY = 86400.0
_VERSION = 1
_INTERVALS = 48  # intervals tabulated between the bounds, interpolated between


def epoch(text: str | None) -> float | None:
    """An ISO 8601 time as seconds since 1970 (a time without an offset is UTC); None for None
    or text that is not a time."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def iso(seconds: float) -> str:
    """Seconds since 1970 as the store writes times (UTC, whole seconds, ``Z``)."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Bounds:
    """The shortest and longest interval between two visits of a key (seconds)."""

    minimum: float
    maximum: float

    def __post_init__(self) -> None:
        if not 0 < self.minimum <= self.maximum or not math.isfinite(self.maximum):
            raise ValueError(f"bounds {self.minimum!r}..{self.maximum!r}: need 0 < minimum <= maximum")

    @property
    def half_life(self) -> float:
        """How long evidence takes to lose half its weight: two maximum intervals."""
        return 2 * self.maximum


@lru_cache(maxsize=1)
def rates() -> npt.NDArray[np.float64]:
    """The rates λ (changes a second) the estimate is kept for: 24 steps of ~1.8x, one a minute to one a year."""
    import numpy as np

    return np.geomspace(1 / (365 * _DAY), 1 / 60.0, 24)


@lru_cache(maxsize=1)
def _prior() -> npt.NDArray[np.float64]:
    """Before any visit: about once a day, give or take a factor of ten (a log-normal, sigma 2.5)."""
    import numpy as np

    weights = np.exp(-0.5 * ((np.log(rates()) - math.log(1 / _DAY)) / 2.5) ** 2)
    prior: npt.NDArray[np.float64] = weights / weights.sum()
    return prior


@lru_cache(maxsize=8)
def _table(bounds: Bounds) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Intervals between the bounds, and for each the probability of a change within it at each rate."""
    import numpy as np

    intervals = np.geomspace(bounds.minimum, bounds.maximum, _INTERVALS)
    return intervals, 1.0 - np.exp(-np.outer(intervals, rates()))


@dataclass(frozen=True, slots=True)
class RateEstimate:
    """A key's change rate as a probability over :func:`rates`, and when it was last learnt from
    (the last visit that said changed or not; None: never)."""

    weights: npt.NDArray[np.float64]
    at: float | None = None

    @classmethod
    def prior(cls) -> RateEstimate:
        return cls(_prior())

    def learn(self, at: float, changed: bool, bounds: Bounds) -> RateEstimate:
        """The estimate after a visit at *at* that found the page *changed* or not. The first
        visit, or one not after the last (clocks), only sets or keeps the time."""
        if self.at is None or at <= self.at:
            return RateEstimate(self.weights, at if self.at is None else self.at)
        import numpy as np

        elapsed = at - self.at
        forget = 1.0 - 2.0 ** (-elapsed / bounds.half_life)
        unchanged = np.exp(-rates() * elapsed)
        posterior = ((1.0 - forget) * self.weights + forget * _prior()) * ((1.0 - unchanged) if changed else unchanged)
        total = float(posterior.sum())
        if not math.isfinite(total) or total <= 1e-300:  # no rate on the grid explains it: start again
            return RateEstimate(_prior(), at)
        return RateEstimate(posterior / total, at)

    def change_probability(self, horizon: float) -> float:
        """The probability of at least one change within *horizon* seconds."""
        import numpy as np

        return float(self.weights @ (1.0 - np.exp(-rates() * horizon)))

    def interval(self, bounds: Bounds) -> float:
        """Seconds until a change is :data:`CHANGE_PROBABILITY` likely, within *bounds*."""
        import numpy as np

        intervals, table = _table(bounds)
        probabilities = table @ self.weights  # increasing with the interval
        j = int(np.searchsorted(probabilities, CHANGE_PROBABILITY))
        if j == 0:
            return float(intervals[0])
        if j >= len(intervals):
            return float(intervals[-1])
        low, high = probabilities[j - 1], probabilities[j]
        share = (CHANGE_PROBABILITY - low) / (high - low) if high > low else 1.0
        return float(math.exp(math.log(intervals[j - 1]) + share * math.log(intervals[j] / intervals[j - 1])))

    def encode(self) -> str:
        weights = base64.b64encode(self.weights.astype("<f4").tobytes()).decode("ascii")
        return json.dumps({"v": _VERSION, "at": None if self.at is None else iso(self.at), "w": weights},
                          separators=(",", ":"))

    @classmethod
    def decode(cls, text: str | None) -> RateEstimate:
        """The estimate *text* encodes; the prior for None, or for text this version cannot read
        (another version, a damaged value: the key learns again, it is never stuck)."""
        import numpy as np

        if not text:
            return cls.prior()
        try:
            value = json.loads(text)
            if value.get("v") != _VERSION:
                return cls.prior()
            weights = np.frombuffer(base64.b64decode(value["w"]), dtype="<f4").astype(np.float64)
        except (ValueError, TypeError, KeyError, AttributeError):
            return cls.prior()
        total = float(weights.sum()) if weights.shape == rates().shape else math.nan
        if not (math.isfinite(total) and total > 0 and weights.min() >= 0):
            return cls.prior()
        return cls(weights / total, epoch(value.get("at")))


@dataclass(frozen=True, slots=True)
class ScheduleUpdate:
    """What an observation tells the schedule: *changed* (a change of the page: fields, entities,
    content), not (a baseline, nothing, noise, a move, a recovery) or None (an error: nothing
    learnt about the page), with the crawl's bounds. The store turns it into the key's columns."""

    changed: bool | None
    bounds: Bounds

    def columns(self, previous: str | None, observed_at: str) -> tuple[str, str, float]:
        """The key's ``schedule`` (the encoded estimate), ``due_at`` and ``due_interval`` after an
        observation fetched at *observed_at* (as stored), from its previous ``schedule``."""
        at = epoch(observed_at)
        if at is None:
            raise ValueError(f"fetch time {observed_at!r} is not an ISO 8601 time")
        estimate = RateEstimate.decode(previous)
        if self.changed is not None:
            estimate = estimate.learn(at, self.changed, self.bounds)
        interval = estimate.interval(self.bounds)
        return estimate.encode(), iso(at + interval), interval


@dataclass(frozen=True, slots=True)
class DueEntry:
    """What the store says about a key's schedule (seconds since 1970; None: not known)."""

    last_seen: float | None = None
    due_at: float | None = None
    interval: float | None = None
    listed_at: float | None = None


@dataclass(frozen=True, slots=True)
class Due:
    """Whether a key is to be fetched now, whether it is late by more than its interval, and
    when it was due (None: it has no due time yet, a first visit)."""

    due: bool
    overdue: bool = False
    at: float | None = None


def decide(entry: DueEntry | None, now: float, *, every: float | None, adaptive: bool) -> Due:
    """Whether a key is due at *now*: by its watch's *every* (seconds after its last
    observation; the caller gives way to the maximum bound), else by its adaptive due time when *adaptive*, else
    always. A key never observed, or without a due time yet, is due. So is one whose due time
    lies further ahead than its interval allows (a clock moved back, or one ran ahead): a due
    time nobody can trust never keeps a key from being fetched.

    >>> decide(DueEntry(last_seen=0.0), 3000.0, every=3600.0, adaptive=False)
    Due(due=False, overdue=False, at=3600.0)
    >>> decide(DueEntry(last_seen=0.0), 3300.0, every=3600.0, adaptive=False).due  # within the slack
    True
    >>> decide(DueEntry(last_seen=0.0), 9000.0, every=3600.0, adaptive=False)
    Due(due=True, overdue=True, at=3600.0)
    """
    if entry is None:
        return Due(True)
    due_at: float | None
    interval: float | None
    if every is not None:
        due_at, interval = (None if entry.last_seen is None else entry.last_seen + every), every
    elif adaptive:
        due_at, interval = entry.due_at, entry.interval
    else:
        return Due(True)
    if due_at is None or interval is None:
        return Due(True)
    if due_at - now > interval + _TOLERANCE:
        return Due(True, at=due_at)
    return Due(now >= due_at - SLACK * interval, now - due_at > interval, due_at)
