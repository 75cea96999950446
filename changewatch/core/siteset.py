"""A site watch's page set, decided (pure): which pages are watched, whether a discovery can be
trusted to say which went, and which pages a sitemap's ``<lastmod>`` lets a run leave alone.

The page set is the site watch's key's set of pages (canonical URLs), kept as rows of the store
and reported as an ``entities`` record (pages added and removed): these functions decide what the
crawl puts in it, so that a bad discovery never reports pages ``removed``:

- :func:`bounded`: at most ``max_pages``, the first in a stable order (sorted URLs);
- :func:`shrunk`: a sitemap that suddenly lists a small part of the last good set is confirmed
  before its loss is believed (:func:`loss_confirmed`);
- :func:`kept_pages`: in link mode, pages of the last good set that were not found again while
  some page failed are kept (a page is not removed because the pages linking to it failed);
- :func:`plan_pages`: each listed page fetched, sampled or left alone, by its lastmod;
- :func:`page_set_verdict`: what a run's :class:`PageSetDelta` (the set compared with its
  stored rows, in the crawl) reports.
"""

from __future__ import annotations

import zlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .comparisons import Kind

__all__ = ["LASTMOD_SAMPLE", "REBASELINE", "SHRINK_MIN_PAGES", "SHRINK_RATIO", "PagePlan", "PageSetDelta", "bounded",
           "kept_pages", "loss_confirmed", "page_plan", "page_set_verdict", "parse_lastmod", "plan_pages", "shrunk"]

#: an observation's option: the page was just added to its site's set (or came back after it was
#: removed): its observation is a fresh, silent baseline, whatever was stored of the key before
REBASELINE = "site_added"
#: a sitemap listing less than this share of the last good set has shrunk suspiciously...
SHRINK_RATIO = 0.5
#: ... when that set had at least this many pages
SHRINK_MIN_PAGES = 10
#: one unchanged page in this many whose lastmod did not move is checked per run (~10%)
LASTMOD_SAMPLE = 10


def bounded(urls: Iterable[str], max_pages: int, previous: Collection[str] = ()) -> tuple[list[str], int]:
    """At most *max_pages* of *urls* (deduplicated), sorted, and how many were left out. Pages of
    the *previous* set come first, then new ones in URL order: a page already watched is never
    pushed out (and reported ``removed``) by a new page that sorts before it.

    >>> bounded(["b", "a", "c", "a"], 2)
    (['a', 'b'], 1)
    >>> bounded(["b", "a", "c"], 2, previous=["c"])
    (['a', 'c'], 1)
    """
    listed = set(urls)
    kept = sorted(listed.intersection(previous))[:max_pages]
    new = sorted(listed.difference(kept))[:max_pages - len(kept)]
    return sorted(kept + new), max(0, len(listed) - max_pages)


def shrunk(previous: int, found: int) -> bool:
    """Whether a discovery that found *found* pages, after a last good set of *previous*, lost
    so much that it must be confirmed before removals are reported.

    >>> shrunk(100, 60), shrunk(100, 40), shrunk(5, 1)
    (False, True, False)
    """
    return previous >= SHRINK_MIN_PAGES and found < previous * SHRINK_RATIO


def loss_confirmed(same_again: bool, sample_statuses: Sequence[int | None]) -> bool:
    """A shrunk sitemap's loss is believed when fetching it again lists the same pages and most of
    a sample of the missing pages are gone (404 or 410; None: the fetch failed, which proves
    nothing). A sitemap cut short by its generator lists fewer pages than the site has: its
    missing pages still answer.

    >>> loss_confirmed(True, [404, 410, 200]), loss_confirmed(True, [200, 200, 404]), loss_confirmed(False, [404])
    (True, False, False)
    """
    if not same_again:
        return False
    gone = sum(1 for status in sample_statuses if status in (404, 410))
    return not sample_statuses or gone * 2 > len(sample_statuses)


def kept_pages(previous: Collection[str], found: Collection[str], *, some_failed: bool,
               unfinished: bool = False) -> list[str]:
    """Link mode: the pages of the new set. Pages of the last good set not found again are
    removed only when every page that was requested to find them answered: a failed page (or a
    crawl left unfinished) keeps them.

    >>> kept_pages(["a", "b"], ["a", "c"], some_failed=False), kept_pages(["a", "b"], ["a", "c"], some_failed=True)
    (['a', 'c'], ['a', 'b', 'c'])
    """
    if some_failed or unfinished:
        return sorted(set(previous) | set(found))
    return sorted(set(found))


def parse_lastmod(value: str | None) -> float | None:
    """A sitemap's ``<lastmod>`` (W3C datetime: a date, or a date and time with a zone) as seconds
    since 1970; None when absent or unreadable (the page is then checked as its schedule says).
    A date alone is the end of that day: a page edited in the afternoon of a day it was observed
    in the morning has moved.

    >>> parse_lastmod("2026-11-29T12:00:00+01:00"), parse_lastmod("2026-11-29"), parse_lastmod("soon")
    (1795950000.0, 1795996799.0, None)
    """
    if not value:
        return None
    text = value.strip()
    if len(text) == 10:  # YYYY-MM-DD
        day = parse_lastmod(text + "T23:59:59Z")
        return day
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


@dataclass(frozen=True, slots=True)
class PagePlan:
    """What a run does with the pages of a site's set, by their lastmod."""

    #: lastmod moved since the page's last observation (or none yet): fetched, whatever the schedule
    moved: list[str]
    #: lastmod did not move, checked this run (the sample, or every one while lastmod is untrusted)
    checked: list[str]
    #: lastmod did not move, left alone this run
    skipped: list[str]
    #: no lastmod: as the page's schedule says
    unlisted: list[str]


def plan_pages(pages: Sequence[str], lastmods: Mapping[str, float | None], last_seen: Mapping[str, float | None],
               *, trusted: bool, turn: int, sample: int = LASTMOD_SAMPLE) -> PagePlan:
    """The plan for *pages* (canonical URLs): a page whose lastmod is after its last
    observation (*last_seen*; a page never observed has none) moved; one whose lastmod is not is
    left alone, except one in *sample* chosen by the run's *turn* (a page's turn comes every
    *sample* runs) or every one when the site's lastmod is not *trusted*.

    >>> lastmods, seen = {"a": 5.0, "b": 5.0, "c": None}, {"a": 9.0, "b": 1.0}
    >>> plan = plan_pages(["a", "b", "c"], lastmods, seen, trusted=True, turn=0, sample=1000)
    >>> plan.moved, plan.unlisted, len(plan.checked) + len(plan.skipped)
    (['b'], ['c'], 1)
    """
    plan = PagePlan([], [], [], [])
    for url in pages:
        getattr(plan, page_plan(url, lastmods.get(url), last_seen.get(url), trusted=trusted, turn=turn,
                                sample=sample)).append(url)
    return plan


def page_plan(url: str, lastmod: float | None, seen: float | None, *, trusted: bool, turn: int,
              sample: int = LASTMOD_SAMPLE) -> str:
    """One page's part of :func:`plan_pages`: ``moved``, ``checked``, ``skipped`` or ``unlisted``."""
    if lastmod is None:
        return "unlisted"
    if seen is None or lastmod > seen:
        return "moved"
    if not trusted or _turn_of(url, sample) == turn % sample:
        return "checked"
    return "skipped"


def _turn_of(url: str, sample: int) -> int:
    return zlib.crc32(url.encode("utf-8", "surrogatepass")) % sample


@dataclass(frozen=True, slots=True)
class PageSetDelta:
    """A run's page set against the stored one (canonical URLs): the rows its commit writes and
    what its record says."""

    #: pages new to the set (reported ``added``, except on a first run)
    added: Sequence[str] = ()
    #: pages of the stored set no longer listed (reported ``removed``)
    removed: Sequence[str] = ()
    #: pages of the stored set still listed but left out by ``max_pages``: no longer watched,
    #: never reported ``removed``
    dropped: Sequence[str] = ()
    #: no set was stored, or it was chosen another way (another *spec*): the whole set is a
    #: silent baseline
    first: bool = False
    #: how the set is chosen (``max_pages``), stored with it; None: as the stored set was
    spec: str | None = None

    @property
    def deleted(self) -> list[str]:
        return [*self.removed, *self.dropped]


def page_set_verdict(delta: PageSetDelta) -> tuple[Kind, dict[str, Any]]:
    """The kind and record members of a page set's observation: a first run is a silent
    baseline; pages added or removed are an ``entities`` change, each entry its page's URL.

    >>> page_set_verdict(PageSetDelta(added=["u"], first=True))
    (<Kind.BASELINE: 'baseline'>, {})
    >>> page_set_verdict(PageSetDelta(added=["u"], dropped=["v"]))
    (<Kind.ENTITIES: 'entities'>, {'added': [{'key': 'u', 'url': 'u'}]})
    >>> page_set_verdict(PageSetDelta(dropped=["v"]))[0]
    <Kind.NONE: 'none'>
    """
    if delta.first:
        return Kind.BASELINE, {}
    members = {name: [{"key": url, "url": url} for url in urls]
               for name, urls in (("added", delta.added), ("removed", delta.removed)) if urls}
    return (Kind.ENTITIES if members else Kind.NONE), members
