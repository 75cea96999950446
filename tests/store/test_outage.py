"""The outage helper the PostgreSQL store and the Redis scheduler share: one budget per outage,
a doubling wait between tries, and what counts as an outage is the caller's to say. (Each
service's own ride through a real outage: test_postgresql_outage.py, tests/test_distributed.py.)"""

from __future__ import annotations

import time

import pytest

from changewatch.store.outage import Outage


def _outage(budget: float = 60.0) -> Outage:
    return Outage(budget, lambda exc: isinstance(exc, ConnectionError), first_delay=0.5, max_delay=2.0)


def test_an_outage_begins_once_and_waits_longer_after_each_failure() -> None:
    outage = _outage()
    assert outage.since is None and outage.left == 60.0 and outage.may_try()
    assert outage.failed(ConnectionError("refused")) is True
    since = outage.since
    assert since is not None and outage.errors == 1
    delays = [outage.delay]
    for _ in range(3):
        assert outage.failed(ConnectionError("refused")) is False
        delays.append(outage.delay)
    assert delays == [0.5, 1.0, 2.0, 2.0] and outage.since == since and outage.errors == 4
    assert outage.next_try > time.monotonic() + 1.0  # not tried again before its wait
    outage.try_now()
    assert outage.next_try == 0.0


def test_a_failure_that_is_not_an_outage_is_raised_again() -> None:
    outage = _outage()
    with pytest.raises(ValueError, match="a bug"):
        outage.failed(ValueError("a bug"))
    assert outage.since is None and outage.errors == 0


def test_over_says_how_long_it_lasted_and_starts_afresh() -> None:
    outage = _outage()
    assert outage.over() is None
    outage.failed(ConnectionError())
    outage.failed(ConnectionError())
    lasted = outage.over()
    assert lasted is not None and 0 <= lasted < 5
    assert (outage.since, outage.errors, outage.delay, outage.next_try) == (None, 0, 0.5, 0.0)


def test_past_its_budget_the_service_is_tried_only_now_and_then() -> None:
    outage = _outage(budget=0.0)
    outage.failed(ConnectionError())
    assert outage.spent(time.monotonic()) and outage.left <= 0
    assert not outage.may_try()  # the calls queued behind the one that gave up fail at once
    assert outage.pause(1.0) == 2.0  # and never sleep past the budget
