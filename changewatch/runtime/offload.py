"""What crosses the boundary to the worker processes, how often, and how it is encoded.

One round trip per observation that has something to digest: the crawl process sends the
observation (its page text, fields, entities and options), the key's stored snapshot as the
store gave it (opaque bytes: the crawl process never decompresses or decodes it), the names of
the comparisons and the compare context; the worker digests, checks, compares, diffs and
encodes the snapshot to keep (compressing text only when it changed), and sends back the
verdict's members and that snapshot. Both directions are one pickle (protocol 5) of plain data.
A 304 or an error the spider reported needs no worker and never crosses.

A candidate change and its confirmation (a second load of the page) cross together, once more
(:class:`ConfirmTask`): the worker digests both and judges them together against the stored
snapshot (:mod:`changewatch.core.confirm`); only the confirmation's body may become evidence.

``bench/bench_crawl.py`` measures the whole path; ``bench/bench_workers.py`` the hand-off.
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.comparisons import CompareContext, Comparison, Kind, load_comparisons
from ..core.comparisons.content_page import UnreadableStoredText
from ..core.comparisons.content_part import ContentPart
from ..core.confirm import baseline_loads, observe_loads
from ..core.evidence import KeptBody, keep_body, keeps_evidence
from ..core.observation import Observation
from ..core.snapshot import Snapshot, SnapshotError
from ..core.verdict import Verdict, observe
from .errors import WorkerCrashed, WorkerError, WorkerTaskError, WorkerTimeout

if TYPE_CHECKING:  # the pool (asyncio, processes) is the crawl's side: a worker process imports this module too
    from .workers import WorkerPool

__all__ = ["ConfirmTask", "Judged", "ObserveTask", "judge", "judge_in_worker"]

logger = logging.getLogger(__name__)
_PROTOCOL = 5


@dataclass(frozen=True, slots=True)
class ObserveTask:
    """Everything the worker needs to judge one observation."""

    obs: Observation
    old: bytes | None  # the stored snapshot, as stored
    comparisons: Mapping[str, str]  # the crawl's table (CHANGEWATCH_COMPARISONS merged over the built-ins)
    context: CompareContext
    #: the response's body, compressed and returned when the verdict makes it evidence (a
    #: baseline, a change): most often the very bytes of ``obs.html``, which cross only once
    body: bytes | None = None


@dataclass(frozen=True, slots=True)
class ConfirmTask:
    """A candidate change (*first*) and its confirmation (*obs*, the second load), judged together
    against the stored snapshot (*old*); with none, the two loads of a key's first observation
    (its baseline is the first's, with where they differ learned)."""

    first: Observation
    obs: Observation
    old: bytes | None
    comparisons: Mapping[str, str]
    context: CompareContext
    #: the confirmation's body, kept as evidence when the verdict makes it so
    body: bytes | None = None


@dataclass(slots=True)
class Judged:
    """The verdict as it comes back: kind, record members, error, counters, and the encoded
    snapshot to keep (None: keep the stored one)."""

    kind: Kind
    members: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    snapshot: bytes | None = None
    counters: dict[str, int] = field(default_factory=dict)
    #: the task's body, compressed, when the verdict makes it evidence
    kept: KeptBody | None = None


def _judge(task: ObserveTask | ConfirmTask) -> Judged:
    comparisons = load_comparisons(task.comparisons, merge=False)
    counters: dict[str, int] = {}
    old = None
    if task.old is not None:
        try:
            old = Snapshot.decode(task.old, comparisons)
        except SnapshotError as exc:
            _unreadable(task, exc, counters)
    try:
        return _judged(task, old, comparisons, counters)
    except UnreadableStoredText as exc:
        if old is None:
            raise
        # Damaged in a way only reading its text shows (its text is decompressed on use): the
        # same as a snapshot that cannot be decoded. Left as it is, every run would fail on it.
        _unreadable(task, exc, counters)
        return _judged(task, None, comparisons, counters)


def _unreadable(task: ObserveTask | ConfirmTask, exc: Exception, counters: dict[str, int]) -> None:
    # Unreadable: the key starts again from this observation (a silent baseline), which can miss
    # one change but never invents one.
    logger.warning("changewatch: the stored snapshot of %r cannot be read (%s): starting it again", task.obs.key, exc)
    counters["store/snapshot_unreadable"] = 1


def _judged(task: ObserveTask | ConfirmTask, old: Snapshot | None, comparisons: Sequence[Comparison],
            counters: dict[str, int]) -> Judged:
    if isinstance(task, ConfirmTask) and old is not None:
        verdict: Verdict = observe_loads(task.first, task.obs, old, comparisons, context=task.context)
    elif isinstance(task, ConfirmTask):  # a key's first observation, of two loads
        verdict = baseline_loads(task.first, task.obs, comparisons, context=task.context)
    else:
        verdict = observe(task.obs, old, comparisons, context=task.context)
    verdict.counters.update(counters)
    kept = None
    if task.body is not None and verdict.kind is not Kind.ERROR and keeps_evidence(verdict.kind, verdict.counters):
        kept = keep_body(task.body)  # here, off the crawl's thread: only a baseline or a change pays for it
        content = verdict.keep.part("content") if verdict.keep is not None else None
        if isinstance(content, ContentPart) and content.kept_unread:
            content.offer_compressed(task.body, kept.data)  # a first page kept unread: compressed once
    snapshot = verdict.keep.encode(comparisons) if verdict.keep is not None else None
    return Judged(verdict.kind, verdict.members, verdict.error, snapshot, verdict.counters, kept)


def judge_in_worker(payload: bytes) -> bytes:
    """The worker side: an encoded :class:`ObserveTask` (or :class:`ConfirmTask`) in, an encoded
    :class:`Judged` out."""
    task: ObserveTask | ConfirmTask = pickle.loads(payload)
    return pickle.dumps(_judge(task), protocol=_PROTOCOL)


async def judge(pool: WorkerPool, task: ObserveTask | ConfirmTask) -> Judged:
    """Judge *task* in a worker process (or the pool's thread). A page that hangs or kills its
    worker, or that the worker cannot handle, becomes an ``error`` of its key: the baseline is
    kept and the crawl goes on."""
    if task.obs.not_modified:
        return Judged(Kind.NONE)  # the server vouches for it: nothing to digest, no round trip
    if task.obs.error:
        return Judged(Kind.ERROR, error=task.obs.error)
    try:
        payload = pickle.dumps(task, protocol=_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError) as exc:
        return Judged(Kind.ERROR, error=f"unprocessable: the observation cannot be handed to a worker ({exc})")
    try:
        result: Judged = pickle.loads(await pool.run(judge_in_worker, payload))
    except WorkerTimeout as exc:
        return Judged(Kind.ERROR, error=f"unprocessable: judging the page took longer than {exc.limit:g} s "
                                        "(CHANGEWATCH_WORKER_TIMEOUT); its worker was replaced",
                      counters={"workers/timeout": 1})
    except WorkerCrashed as exc:
        return Judged(Kind.ERROR, error=f"unprocessable: the worker judging the page {exc.how}; it was replaced",
                      counters={"workers/crashed": 1})
    except WorkerTaskError as exc:
        logger.error("changewatch: judging %s failed in a worker: %s", task.obs.url, exc)
        return Judged(Kind.ERROR, error="unprocessable: changewatch failed on this page (see the crawl log)",
                      counters={"workers/failed": 1})
    except WorkerError as exc:
        return Judged(Kind.ERROR, error=f"unprocessable: {exc}", counters={"workers/failed": 1})
    return result
