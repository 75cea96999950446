"""Task functions for the worker pool (``bytes -> bytes``), and how their arguments and results
are put into those bytes: pickles, between two processes of the same crawl."""

from __future__ import annotations

import pickle

from ..core.compare import Snapshot, page_digest
from ..core.normalise import RegionError
from .workers import WorkerPool

__all__ = ["digest_page", "page_digest_task"]


def page_digest_task(payload: bytes) -> bytes:
    """:func:`~changewatch.core.compare.page_digest` of ``(html, text, region, sort_lines)``;
    a bad region comes back as a value, for the crawl process to raise again."""
    html, text, region, sort_lines = pickle.loads(payload)
    result: tuple[object, ...]
    try:
        result = ("digest", *page_digest(html, text, region, sort_lines))
    except RegionError as exc:
        result = ("region", str(exc))
    return pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)


async def digest_page(pool: WorkerPool, html: str | bytes | None, text: str | None, region: str | None,
                      sort_lines: bool) -> tuple[Snapshot, str | None]:
    """``page_digest(...)`` run by *pool*: raises RegionError as page_digest does, and the
    pool's errors (WorkerTimeout, WorkerCrashed…)."""
    payload = pickle.dumps((html, text, region, sort_lines), protocol=pickle.HIGHEST_PROTOCOL)
    result = pickle.loads(await pool.run(page_digest_task, payload))
    if result[0] == "region":
        raise RegionError(result[1])
    return result[1], result[2]
