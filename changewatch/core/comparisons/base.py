"""The one interface every comparison implements, and what it returns.

A comparison is a small stateless class: it *digests* an observation into a part of the key's
snapshot (what is kept to compare the next observation with), *checks* that a new part can be
trusted at all (a collapsed page, a field that vanished: errors, never changes), and *compares*
the last good part with the new one, saying what changed in the change record's own members.
It also encodes its part for the store, with a version of its own. Nothing here imports Scrapy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from hashlib import blake2b
from typing import Any, ClassVar, Protocol, runtime_checkable

from ..diff import DiffOptions
from ..observation import Observation

__all__ = ["CompareContext", "Comparison", "Difference", "Kind", "Status", "Unobservable", "respecified",
           "spec_digest"]


class Kind(StrEnum):
    """What an observation turned out to be; the change record's ``kind``."""

    BASELINE = "baseline"
    NONE = "none"
    NOISE = "noise"
    FIELD = "field"
    ENTITIES = "entities"
    CONTENT = "content"
    ERROR = "error"
    #: a permanent redirect was followed: the watch compares on at its new URL (``moved_to``)
    MOVED = "moved"
    #: a failing key observed its page again: the failure streak is over
    RECOVERED = "recovered"

    @property
    def reported(self) -> bool:
        return self in (Kind.FIELD, Kind.ENTITIES, Kind.CONTENT, Kind.ERROR, Kind.MOVED, Kind.RECOVERED)

    @property
    def changes_page(self) -> bool:
        """A change of what the page says (not of where it is, or whether it could be read)."""
        return self in (Kind.FIELD, Kind.ENTITIES, Kind.CONTENT)


class Status(StrEnum):
    """One comparison's verdict on its own part."""

    NONE = "none"  # the same
    NOISE = "noise"  # differs only in what is known to vary
    CHANGED = "changed"  # a change to report


class Unobservable(Exception):
    """The observation cannot be digested into a trustworthy part; ``str()`` is the change
    record's ``error`` (``<class>: <detail>``, e.g. ``fields: unknown kind 'money'``)."""


@dataclass(frozen=True, slots=True)
class CompareContext:
    """What a comparison may take into account besides the two parts: the observation's
    options (``threshold``, ``sort_lines``…) and the crawl's defaults."""

    options: Mapping[str, Any] = field(default_factory=dict)
    threshold: int | None = None  # the project's default simhash threshold
    diff: DiffOptions = field(default_factory=DiffOptions)

    def option(self, name: str, default: Any = None) -> Any:
        value = self.options.get(name)
        return default if value is None else value


@dataclass(frozen=True, slots=True)
class Difference:
    """One comparison's finding: its status, the record members that say what changed (only
    for CHANGED, and for NOISE when useful in stats), the part the store keeps (None: the
    new part) and events of the comparison worth counting in stats (``rebaselined``: counted
    as ``changewatch/<comparison>/rebaselined``).

    *keep_as_version* is the part to keep instead when the observation becomes a version whose
    evidence is kept (another comparison found a change, or started afresh): a comparison that
    keeps its old part through noise (text drifting under its threshold, learned variation)
    says here which part is the new page's, so that the next change is judged against the very
    page its evidence shows as "before". None: *keep* in any case."""

    status: Status
    members: Mapping[str, Any] = field(default_factory=dict)
    keep: Any = None
    counters: Mapping[str, int] = field(default_factory=dict)
    keep_as_version: Any = None


@runtime_checkable
class Comparison(Protocol):
    """The interface of a comparison class (see :mod:`changewatch.core.comparisons`)."""

    #: the name it is registered under, and its part's key in the snapshot
    name: ClassVar[str]
    #: the kind of change it reports
    kind: ClassVar[Kind]
    #: which kind names a record with several kinds of change: the lowest rank wins
    rank: ClassVar[int]
    #: the version of its part's encoding, passed to :meth:`decode`: a part it cannot read is
    #: dropped, and the comparison restarts silently
    part_version: ClassVar[int]

    def digest(self, obs: Observation) -> Any | None:
        """The part of *obs* this comparison keeps, or None when *obs* does not track it.
        Raises :class:`Unobservable` when what it tracks cannot be read."""
        ...

    def check(self, old: Any | None, new: Any) -> str | None:
        """Why the *new* part cannot be trusted (an ``error`` for the record), or None."""
        ...

    def compare(self, old: Any, new: Any, context: CompareContext) -> Difference:
        """What changed from the last good part *old* to *new*."""
        ...

    def counters(self, part: Any) -> Mapping[str, int]:
        """Events worth counting in the crawl's stats for a new part (e.g. duplicates), asked once
        it was checked and compared: ``event`` is counted as ``changewatch/<name>/event``, an
        event with a slash (``charset/undecodable_pages``) as ``changewatch/<event>``."""
        ...

    def encode(self, part: Any) -> tuple[Any, bytes | None]:
        """The part as a JSON value and an optional blob (large text, compressed)."""
        ...

    def decode(self, data: Any, blob: bytes | None, version: int) -> Any | None:
        """The part :meth:`encode` wrote (in *version*), or None if it cannot be read."""
        ...


def spec_digest(value: Any) -> str:
    """A short stable digest of how something is read from a page (a field's source, selector
    and kind; a text's region and options), kept in a part to tell an edited watch from a
    changed page.

    >>> spec_digest({"region": "main"}) == spec_digest({"region": "main"}) != spec_digest({})
    True
    """
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def respecified(old: str | None, new: str | None) -> bool:
    """Whether a part was read another way than the stored one (the watch was edited): then it
    starts afresh, silently, as a new one would. A spec not known on either side (a part stored
    before specs were kept, an item that does not say) compares as before.

    >>> respecified("a", "b"), respecified("a", "a"), respecified(None, "b")
    (True, False, False)
    """
    return old is not None and new is not None and old != new
