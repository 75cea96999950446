"""What an observation means for the key's life besides its comparison: a page gone (404/410 run
after run), a page moved (permanent redirects), a failing page back (the streak is over).

Decided by the pipeline from the key's stored state, on every backend alike, with no column of
its own: the number of consecutive runs that found a page missing is written in the stored
error (``http: HTTP 404 on 2 consecutive runs``), where the next run reads it back; a move is
reported when the page lands somewhere other than where it was last seen (the stored ``url``,
which an error leaves as it was).
"""

from __future__ import annotations

import dataclasses
import re

from ..core.comparisons import Kind
from ..core.observation import Observation
from ..core.siteset import REBASELINE
from ..runtime.offload import Judged
from ..store import StoredState

__all__ = ["gone_error", "missing_runs", "moved", "reclassified"]

#: the error of a page the server says is not there; the count, once there is one
_MISSING = re.compile(r"(?:http|gone): HTTP (404|410)\b(?: on (\d+) consecutive runs?)?")


def missing_runs(state: StoredState | None, error: str | None) -> int:
    """How many consecutive runs found the page missing (a 404 or a 410), this one included; 0
    when *error* is not a 404 or 410.

    >>> missing_runs(None, "http: HTTP 404"), missing_runs(None, "timeout: took too long")
    (1, 0)
    >>> failing = StoredState("k", "u", 3, None, last_error="http: HTTP 410 on 2 consecutive runs", error_streak=2)
    >>> missing_runs(failing, "http: HTTP 404")
    3
    """
    if error is None or _MISSING.match(error) is None:
        return 0
    before = _MISSING.match(state.last_error or "") if state is not None and state.error_streak > 0 else None
    return 1 if before is None else int(before[2] or 1) + 1


def gone_error(error: str, runs: int, after: int) -> str:
    """The error of a page missing on *runs* consecutive runs: of class ``gone`` from *after*
    runs on (CHANGEWATCH_GONE_AFTER), else ``http``; the count is written once there are two.

    >>> gone_error("http: HTTP 404", 1, 2), gone_error("http: HTTP 410", 2, 2)
    ('http: HTTP 404', 'gone: HTTP 410 on 2 consecutive runs')
    >>> gone_error("http: HTTP 404", 2, 3), gone_error("http: HTTP 404", 1, 1)
    ('http: HTTP 404 on 2 consecutive runs', 'gone: HTTP 404 on 1 consecutive run')
    """
    found = _MISSING.match(error)
    if found is None or (runs < 2 and runs < after):
        return error
    prefix = "gone" if runs >= after else "http"
    return f"{prefix}: HTTP {found[1]} on {runs} consecutive run{'s' if runs != 1 else ''}{error[found.end():]}"


def moved(obs: Observation, state: StoredState | None) -> bool:
    """Whether *obs* reports a move: permanent redirects led it away from where the key was
    last seen. A first observation is a silent baseline wherever it landed."""
    return obs.moved_from is not None and state is not None and state.url != obs.url


def reclassified(obs: Observation, judged: Judged, state: StoredState | None, gone_after: int) -> Judged:
    """*judged* as the key's life makes it: a 404/410 error counted towards ``gone``; a move
    reported (``moved``, or the change's own kind carrying ``moved_to``: a change is never hidden
    behind a move); the end of a failure streak reported (``recovered``, unless the page changed
    meanwhile: then the change's record says it is back). Nothing else is touched."""
    if judged.kind is Kind.ERROR:
        runs = missing_runs(state, judged.error)
        if runs == 0 or judged.error is None:
            return judged
        return dataclasses.replace(judged, error=gone_error(judged.error, runs, gone_after))
    if judged.kind is Kind.BASELINE and obs.options.get(REBASELINE):
        return judged  # a page just added to its site's set: a fresh, silent baseline
    if moved(obs, state):
        where = {"url": obs.moved_from, "moved_to": obs.url}
        if judged.kind.changes_page:
            return dataclasses.replace(judged, members={**judged.members, **where})
        confirmed = {"confirmed": judged.members["confirmed"]} if "confirmed" in judged.members else {}
        return dataclasses.replace(judged, kind=Kind.MOVED, members={**where, **confirmed})
    if (state is not None and state.error_streak > 0 and not judged.kind.changes_page
            and not (state.last_error or "").startswith("noisy:")):  # a noisy page is observed: not a failure
        return dataclasses.replace(judged, kind=Kind.RECOVERED, members={})
    return judged
