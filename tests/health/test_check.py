"""The health conditions judged from history rows with an injected clock (changewatch.health.check)."""

from __future__ import annotations

from datetime import timedelta

from changewatch.health.check import Canary, CanaryState, HealthThresholds, judge_canary, judge_sites
from changewatch.store.health import HistoryRow
from changewatch.store.semantics import format_time, parse_time

NOW = parse_time("2026-12-01T12:00:00Z")
LIMITS = HealthThresholds(recent=7 * 86400, baseline=28 * 86400, min_observations=10, noise_rise=2.0,
                          noise_min_rate=0.2, stale_after=14 * 86400)


def day(n: int) -> str:
    """*n* days before NOW's day."""
    return (NOW - timedelta(days=n)).strftime("%Y-%m-%d")


def rows(site: str, days: range, **kinds: int) -> list[HistoryRow]:
    return [HistoryRow("watch", site, day(n), kind, count, count if kind == "noise" else 0,
                       4 * count if kind == "noise" else 0, 6 if kind == "noise" else 0)
            for n in days for kind, count in kinds.items() if count]


def findings(history: list[HistoryRow], now=NOW) -> dict[tuple[str, str], tuple[bool, str]]:  # type: ignore[no-untyped-def]
    return {(f.site, f.condition): (f.holds, f.message) for f in judge_sites(history, now, LIMITS)}


def test_noise_creeping_up_warns_and_a_steady_rate_does_not() -> None:
    creeping = rows("a.example", range(7, 35), none=9, noise=1) + rows("a.example", range(0, 7), none=5, noise=5)
    steady = rows("b.example", range(0, 35), none=9, noise=1)
    always_noisy = rows("c.example", range(0, 35), none=5, noise=5)
    found = findings(creeping + steady + always_noisy)
    holds, message = found[("a.example", "noise")]
    assert holds and message.startswith("noise: a.example's pages vary more than they did (50% noisy over the "
                                        "last 7d, 10% in the 28d before; mean noise distance 4.0 bits)")
    assert found[("b.example", "noise")] == (False, "")
    assert found[("c.example", "noise")] == (False, "")  # noisy, but no more than before: calibration's business


def test_a_new_site_or_one_with_few_observations_is_not_judged() -> None:
    new = rows("new.example", range(0, 3), none=1, noise=5)
    sparse = rows("sparse.example", range(7, 35, 7), none=1) + rows("sparse.example", range(0, 7), noise=3)
    assert not any(holds for holds, _ in findings(new + sparse).values())
    assert ("new.example", "noise") not in findings(new) and ("sparse.example", "noise") not in findings(sparse)
    assert judge_sites([], NOW, LIMITS) == []  # a store with no history: nothing to say


def test_a_small_rise_from_almost_nothing_is_not_a_warning() -> None:
    history = rows("a.example", range(7, 35), none=100) + rows("a.example", range(0, 7), none=95, noise=5)
    assert findings(history)[("a.example", "noise")] == (False, "")  # 5%: under noise_min_rate


def test_a_site_that_stopped_changing_is_stale_and_one_that_never_changed_is_not() -> None:
    stopped = rows("a.example", range(14, 42), none=3, content=1) + rows("a.example", range(0, 14), none=4)
    never = rows("b.example", range(0, 42), none=4)
    found = findings(stopped + never)
    holds, message = found[("a.example", "stale")]
    assert holds and message.startswith("stale: a.example gave only identical pages (56 fetches) over the last 14d, "
                                        "though it changed 28 time(s) in the 28d before")
    assert found[("b.example", "stale")] == (False, "")


def test_a_blocked_site_is_said_to_be_blocked() -> None:
    history = rows("a.example", range(14, 42), none=3) + rows("a.example", range(0, 14), blocked=2, none=1)
    holds, message = findings(history)[("a.example", "stale")]
    assert holds and message.startswith("blocked: a.example answered block pages (captcha, access denied) to 28 "
                                        "of 42 fetches over the last 14d")


def test_other_errors_or_one_change_mean_not_stale() -> None:
    failing = rows("a.example", range(14, 42), content=1) + rows("a.example", range(0, 14), none=1, error=1)
    changed = rows("b.example", range(14, 42), content=1) + rows("b.example", range(0, 14), none=2) + rows(
        "b.example", range(3, 4), field=1)
    found = findings(failing + changed)
    assert found[("a.example", "stale")] == (False, "")  # failing: the watches' own error records say so
    assert found[("b.example", "stale")] == (False, "")


def test_history_dated_ahead_of_the_clock_counts_as_today() -> None:
    """Clock skew: a node whose clock ran ahead dated observations in the future."""
    history = rows("a.example", range(7, 35), none=9, noise=1) + rows("a.example", range(0, 7), none=5, noise=5)
    future = [HistoryRow("watch", "a.example", "2027-03-01", "noise", 50, 50, 200, 6)]
    assert findings(history + future)[("a.example", "noise")][0]
    # the same rows judged by a clock far behind them: all of it is "today", nothing before it
    behind = findings(history + future, now=parse_time("2020-01-01T00:00:00Z"))
    assert ("a.example", "noise") not in behind and not any(holds for holds, _ in behind.values())


def state(first: int, changed: int | None) -> CanaryState:
    return CanaryState(format_time(NOW - timedelta(days=first)), format_time(NOW),
                       None if changed is None else format_time(NOW - timedelta(days=changed)))


def test_canaries() -> None:
    live, steady = Canary("live", "change", 2 * 86400), Canary("steady", "no_change", 2 * 86400)
    assert judge_canary(live, "s", None, NOW) is None  # not observed yet
    assert not judge_canary(live, "s", state(10, 1), NOW).holds  # type: ignore[union-attr]
    late = judge_canary(live, "s", state(10, 3), NOW)
    assert late is not None and late.holds and late.condition == "canary:live"
    assert "last changed at 2026-11-28T12:00:00Z" in late.message
    never = judge_canary(live, "s", state(3, None), NOW)
    assert never is not None and never.holds and "never changed since 2026-11-28T12:00:00Z" in never.message
    assert not judge_canary(live, "s", state(1, None), NOW).holds  # type: ignore[union-attr]  # give it time
    assert not judge_canary(steady, "s", state(10, None), NOW).holds  # type: ignore[union-attr]
    changed = judge_canary(steady, "s", state(10, 1), NOW)
    assert changed is not None and changed.holds and "expected not to change and changed at" in changed.message
    assert not judge_canary(steady, "s", state(10, 3), NOW).holds  # type: ignore[union-attr]  # long enough ago
    ahead = judge_canary(live, "s", CanaryState("2030-01-01T00:00:00Z", None, "2030-01-01T00:00:00Z"), NOW)
    assert ahead is not None and not ahead.holds  # a change dated in the future is recent, not missing
