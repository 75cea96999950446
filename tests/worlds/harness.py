"""The evaluation of the test web in the pure core: one key's life as a crawl lives it, without
Scrapy. Each observation crosses to the judge as the pipeline sends it to a worker
(``runtime.offload``: one pickled :class:`ObserveTask` in, one :class:`Judged` out), and its
verdict is committed as the pipeline commits it: the snapshot the verdict keeps replaces the
stored one (an error keeps the stored one, unless it is the ``noisy:`` notice). A calibration
load (``-a calibrate=N``) is judged with the calibration option and rewrites the snapshot only;
a candidate change is confirmed by a second load when the core can confirm
(:mod:`changewatch.core.confirm`; absent: the first verdict stands, as on a crawl without it).

:func:`evaluate` runs every condition over a set of pages and returns the counts that
``bench/bench_busy_pages.py`` prints and ``tests/worlds/test_busy_pages.py`` checks."""

from __future__ import annotations

import importlib
import pickle
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from changewatch.core.comparisons import BUILTIN_COMPARISONS, CompareContext, Kind, load_comparisons
from changewatch.core.comparisons.noise import CALIBRATION
from changewatch.core.diff import DiffOptions
from changewatch.core.observation import Observation
from changewatch.core.verdict import digest
from changewatch.runtime import offload
from changewatch.runtime.offload import Judged, ObserveTask, judge_in_worker

from .busy import WorldPage, load, own_lines
from .edits import OPERATORS, Edit, edit
from .vocab import furniture_kind

__all__ = ["T0", "ChangeTally", "Key", "Tally", "confirmation_available", "dates_are_content", "only_own_lines",
           "run_changes", "run_noise", "shows_change"]

T0 = datetime(2026, 12, 5, 8, 0, tzinfo=UTC)
#: the options a watch of a URL gives its observations (watchlist/watch.py)
OPTIONS: dict[str, Any] = {"threshold": None, "sort_lines": False, "type": None, "keep_params": [], "drop_params": []}
#: seconds between a load and its confirmation, between calibration loads; hours between runs
CONFIRM_AFTER, CALIBRATE_EVERY, RUN_EVERY = 4, 3, 1
#: load numbers of confirmations (apart from the runs' and calibrations')
_CONFIRMATION = 100_000


def _confirm_module() -> Any:
    try:
        return importlib.import_module("changewatch.core.confirm")
    except ImportError:
        return None


def confirmation_available() -> bool:
    return _confirm_module() is not None


def dates_are_content() -> bool:
    """Whether the core reads a time in a page's text as content ("Doors open at 19:30.")."""
    obs = Observation("probe", "https://probe.test/", html="<p>Doors open at 19:30.</p><p>Welcome to the hall.</p>")
    snapshot = digest(obs, load_comparisons())
    return "19:30" in (snapshot.text or "")


def _table() -> dict[str, str]:
    return dict(BUILTIN_COMPARISONS)  # the crawl's table without CHANGEWATCH_COMPARISONS


def _obs(page: WorldPage, n: int, at: datetime, calibration: bool = False) -> tuple[Observation, bytes]:
    body = load(page, n, at)
    options = {**OPTIONS, CALIBRATION: True} if calibration else dict(OPTIONS)
    obs = Observation(f"world:{page.name}", f"https://{page.name}.world.test/", html=body, encoding="utf-8",
                      options=options, observed_at=at.strftime("%Y-%m-%dT%H:%M:%SZ"))
    return obs, body


def _context(obs: Observation) -> CompareContext:
    return CompareContext(options=obs.options, diff=DiffOptions(context=1, max_lines=60, max_chars=4000))


def judge_once(obs: Observation, old: bytes | None, body: bytes | None) -> Judged:
    """One judgement, as the pipeline has a worker make it."""
    task = ObserveTask(obs, old, _table(), _context(obs), body)
    result: Judged = pickle.loads(judge_in_worker(pickle.dumps(task, protocol=5)))
    return result


@dataclass
class Key:
    """One key's stored state (its snapshot, as the store keeps it) and what happened to it."""

    page: WorldPage
    confirm: bool = True
    snapshot: bytes | None = None
    confirmations: int = 0
    observations: int = 0

    def _commit(self, judged: Judged) -> None:
        if judged.kind is not Kind.ERROR or (judged.error or "").startswith("noisy:"):
            if judged.snapshot is not None:
                self.snapshot = judged.snapshot

    def calibrate(self, loads: int, at: datetime) -> None:
        """``-a calibrate=N`` after the run at *at*: N loads, seconds apart, each learned from."""
        for i in range(1, loads + 1):
            obs, body = _obs(self.page, 50_000 + i, at + timedelta(seconds=CALIBRATE_EVERY * i), calibration=True)
            judged = judge_once(obs, self.snapshot, body)
            if judged.kind is not Kind.ERROR and judged.snapshot is not None:
                self.snapshot = judged.snapshot

    def run(self, n: int, at: datetime, page: WorldPage | None = None) -> Judged:
        """The observation of run *n* (fetched at *at*), confirmed when it is a candidate."""
        page = page or self.page
        obs, body = _obs(page, n, at)
        self.observations += 1
        judged = judge_once(obs, self.snapshot, body)
        if self.confirm and judged.kind is Kind.BASELINE:
            judged = self._confirmed(page, obs, body, judged, n, at)
        elif self.confirm and judged.kind.changes_page and self.snapshot is not None:
            judged = self._confirmed(page, obs, body, judged, n, at)
        self._commit(judged)
        return judged

    def _confirmed(self, page: WorldPage, obs: Observation, body: bytes, first: Judged, n: int,
                   at: datetime) -> Judged:
        """The candidate *first* judged with its confirmation (a second load seconds later) as the
        pipeline has a worker judge them (a ConfirmTask); with no snapshot stored, the baseline's
        two loads. A second load that cannot be judged leaves *first* as it was."""
        if _confirm_module() is None:
            return first
        self.confirmations += 1
        second, second_body = _obs(page, _CONFIRMATION + n, at + timedelta(seconds=CONFIRM_AFTER))
        # a baseline's evidence is its first load's body
        task = offload.ConfirmTask(obs, second, self.snapshot, _table(), _context(second),
                                   body if self.snapshot is None else second_body)
        judged: Judged = pickle.loads(judge_in_worker(pickle.dumps(task, protocol=5)))
        if judged.kind is Kind.ERROR and not (judged.error or "").startswith("noisy:"):
            return first
        if first.kind is Kind.BASELINE and judged.kind is not Kind.BASELINE:
            return first
        return judged


@dataclass
class Tally:
    """Counts of one condition: observations, alerts (by what the alert's diff showed), and
    confirmations sent."""

    observations: int = 0
    alerts: int = 0
    confirmations: int = 0
    #: noise kind (the furniture a false alert's diff shows) → alerts
    by_noise: Counter[str] = field(default_factory=Counter)
    samples: list[str] = field(default_factory=list)
    #: alerts and observations per window of runs (runs 1-5, 6-10, 11-15, 16 on): how fast a key learns
    window_alerts: Counter[int] = field(default_factory=Counter)
    window_observations: Counter[int] = field(default_factory=Counter)

    def rate(self) -> float:
        return self.alerts / self.observations if self.observations else 0.0

    def windows(self) -> str:
        """The alert rate of each window of runs ("1-5 40%, 6-10 12%, …")."""
        names = ("1-5", "6-10", "11-15", "16-")
        return ", ".join(f"{names[w]} {100 * self.window_alerts[w] / seen:.0f}%"
                         for w, seen in sorted(self.window_observations.items()))


def _noise_kinds(diff: str) -> set[str]:
    """What furniture a false alert's diff shows (from its changed lines)."""
    return {furniture_kind(line[1:]) for line in changed_lines(diff)}


def changed_lines(diff: str) -> list[str]:
    return [line for line in diff.split("\n") if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def run_noise(pages: Iterable[WorldPage], runs: int, *, calibrate: int, confirm: bool,
              tally: Tally | None = None, keys: list[Key] | None = None) -> Tally:
    """Noise-only runs of each page: baseline, ``calibrate`` loads, then *runs* runs an hour apart;
    every alert of a run counts (the baseline does not)."""
    tally = tally or Tally()
    for page in pages:
        key = Key(page, confirm=confirm)
        key.run(0, T0)
        if calibrate:
            key.calibrate(calibrate, T0)
        key.observations = key.confirmations = 0
        for n in range(1, runs + 1):
            judged = key.run(n, T0 + timedelta(hours=RUN_EVERY * n))
            window = min((n - 1) // 5, 3)
            tally.window_observations[window] += 1
            if judged.kind.reported:
                tally.alerts += 1
                tally.window_alerts[window] += 1
                what = judged.error or str(judged.members.get("diff") or "")
                tally.by_noise.update(_noise_kinds(what) if not judged.error else {judged.error.split(":")[0]})
                if len(tally.samples) < 12:
                    tally.samples.append(f"{page.kind} {page.name} run {n}: {judged.kind} {what[:600]}")
        tally.observations += key.observations
        tally.confirmations += key.confirmations
        if keys is not None:
            keys.append(key)
    return tally


@dataclass
class ChangeTally:
    """Real changes: reported at once, reported by the next run, and diffs that showed only the change."""

    applied: Counter[str] = field(default_factory=Counter)
    reported: Counter[str] = field(default_factory=Counter)
    late: Counter[str] = field(default_factory=Counter)
    clean: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)


def _shows(lines: list[str], text: str) -> bool:
    """Whether one of *lines* (a diff's, without their sign) shows *text* as written (a long line
    may be shown clipped: then the part shown is a part of *text*)."""
    for line in lines:
        body = line.strip().strip("…").strip()
        if text in line or (len(body) >= 20 and body in text):
            return True
    return False


def shows_change(diff: str, change: Edit) -> tuple[bool, str]:
    """Whether *diff*'s changed lines show the change's words as written; and why not."""
    lines = changed_lines(diff)
    removed = [line[1:] for line in lines if line.startswith("-")]
    added = [line[1:] for line in lines if line.startswith("+")]
    for text in change.removed:
        if not _shows(removed, text):
            return False, f"removed {text!r} not on a '-' line"
    for text in change.added:
        if not _shows(added, text):
            return False, f"added {text!r} not on a '+' line"
    return True, ""


def only_own_lines(diff: str, change: Edit, before: WorldPage) -> tuple[bool, str]:
    """Whether every changed line of *diff* is a line of the page's own text (before or after the
    change: no furniture), or a part of one where the diff clipped it; and the first that is not.
    Context lines are not judged: a diff's unchanged lines are the page's as it stands."""
    own = own_lines(before) | own_lines(change.page)
    for line in changed_lines(diff):
        shown = line[1:].strip()
        body = shown.strip("…").strip()
        # a part of an own line only where the diff clipped a long line (a short box line such as
        # "Live:" or "Updated" may be a part of some paragraph by chance)
        clipped = shown != body and len(body) >= 20
        if body and body not in own and not (clipped and any(body in mine for mine in own)):
            return False, f"{furniture_kind(body)}: {line[:120]!r}"
    return True, ""


def run_changes(keys: Iterable[Key], start: int, operators: Iterable[str] = OPERATORS,
                tally: ChangeTally | None = None) -> ChangeTally:
    """Each operator applied to each key's page at run *start*, from the key's state after its
    noise-only runs (each from a copy of that state). A change is reported when an alert's diff
    shows its words (at once, or by the next run: late, not lost); clean when the changed lines
    of that diff are all the page's own."""
    tally = tally or ChangeTally()
    for key in keys:
        for what in operators:
            change = edit(key.page, what)
            if change is None:
                continue
            tally.applied[what] += 1
            trial = Key(change.page, confirm=key.confirm, snapshot=key.snapshot)
            why = ""
            for late, n in enumerate((start, start + 1)):
                judged = trial.run(n, T0 + timedelta(hours=RUN_EVERY * n))
                if not judged.kind.changes_page:
                    why = why or f"run {n}: {judged.kind} {judged.error or ''}"
                    continue
                diff = str(judged.members.get("diff") or "")
                shown, why_not = shows_change(diff, change)
                if not shown:
                    why = why or f"run {n}: {why_not}"
                    continue
                tally.reported[what] += 1
                tally.late[what] += late
                ok, why_not = only_own_lines(diff, change, key.page)
                tally.clean[what] += ok
                if not ok and len(tally.failures) < 60:
                    tally.failures.append(f"{key.page.name} {what}: not clean: {why_not}")
                break
            else:
                if len(tally.failures) < 60:
                    tally.failures.append(f"{key.page.name} {what} {change.removed}->{change.added}: "
                                          f"not reported ({why[:300]})")
    return tally


