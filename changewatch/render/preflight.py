"""Before a page is rendered again: is every dependency of its last render unchanged?

The decision (:func:`plan`) is pure; the re-check (:func:`recheck`) makes one plain conditional
GET per dependency through Scrapy (never conditional headers on a browser navigation: Chromium
aborts it and scrapy-playwright stalls). Only when every dependency answers a 304 to its own
validators, or the status, final URL and body hash of the last render, is the render skipped.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from scrapy import Request
from scrapy.http import Response

from ..core.validators import HttpValidators
from .deps import Dependency, DependencySet, unchanged
from .fetch import subrequest

__all__ = ["Plan", "plan", "recheck"]

#: re-checks of one page in flight at once
RECHECKS_AT_ONCE = 4


@dataclass(frozen=True, slots=True)
class Plan:
    """*why*: the reason to render without a re-check (None: re-check *deps*); *keys*: the keys
    whose last observation the dependency set belongs to (the unchanged observations)."""

    why: str | None
    deps: DependencySet | None = None
    keys: tuple[str, ...] = ()


def plan(rows: Sequence[HttpValidators], *, fingerprint: str, spec: str | None, full_runs: int,
         conditional: bool = True, confirmation: bool = False) -> Plan:
    """Whether the page's stored dependency set (in the validators rows of its keys) may be
    re-checked instead of rendering.

    >>> plan([], fingerprint="f", spec=None, full_runs=24).why
    'unknown'
    """
    if confirmation:  # rendered in full; the set it records is still judged against the stored one
        return Plan("confirmation", DependencySet.decode(rows[0].render) if rows else None)
    if not conditional:
        return Plan("opt_out")
    if not rows:
        return Plan("unknown")
    deps = DependencySet.decode(rows[0].render)
    if any(r.render != rows[0].render or r.full_at != rows[0].full_at for r in rows):
        return Plan("keys_disagree", deps)
    if deps is None:
        return Plan("unknown")
    if any(r.spec != spec for r in rows):
        return Plan("spec_changed", deps)
    if deps.options != fingerprint:
        return Plan("options_changed", deps)
    if deps.unknown is not None:
        return Plan("deps_unknown", deps)
    if not deps.confirmed:
        return Plan("unconfirmed", deps)
    if full_runs == 0 or max(r.runs for r in rows) >= full_runs:
        return Plan("full_runs", deps)
    return Plan(None, deps, tuple(r.key for r in rows))


def _request(dep: Dependency, vantage: object) -> tuple[Request, bool]:
    headers = list(dep.headers)
    if dep.revalidates:
        if dep.etag is not None:
            headers.append(("If-None-Match", dep.etag))
        if dep.last_modified is not None:
            headers.append(("If-Modified-Since", dep.last_modified))
    return subrequest(dep.url, headers=headers, vantage=vantage), dep.revalidates


async def recheck(deps: DependencySet, fetch: Callable[[Request], Awaitable[Response]], *,
                  vantage: object = None) -> tuple[str | None, int, int]:
    """Re-check every dependency: (what changed, None if nothing; requests made; 304s). Stops at
    the first change (the render follows anyway); a failed re-check counts as a change."""
    gate = asyncio.Semaphore(RECHECKS_AT_ONCE)
    counts = [0, 0]

    async def one(dep: Dependency) -> str | None:
        async with gate:
            request, validated = _request(dep, vantage)
            counts[0] += 1
            try:
                response = await fetch(request)
            except Exception as exc:
                return f"{dep.url}: the re-check failed ({type(exc).__name__}: {exc})"
            counts[1] += response.status == 304
            digest = hashlib.sha256(response.body).hexdigest() if response.status != 304 else None
            if unchanged(dep, status=response.status, url=response.url, sha256=digest, validated=validated):
                return None
            return f"{dep.url} changed (HTTP {response.status})"

    tasks = [asyncio.ensure_future(one(dep)) for dep in deps.deps]
    try:
        for done in asyncio.as_completed(tasks):
            if (changed := await done) is not None:
                return changed, counts[0], counts[1]
    finally:
        for task in tasks:
            task.cancel()
    return None, counts[0], counts[1]
