"""A site watch's changes taken together (docs/watchlist.md, "Watching a whole site"): its records
(``site_watch`` names it) gathered under it, and what they say of the site in one line, for the
notification message and the report. Pure functions of change records."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["SiteChanges", "by_site_watch", "site_changes"]

T = TypeVar("T")

#: kinds that say a page changed (or moved)
_PAGE_CHANGES = frozenset({"field", "entities", "content", "moved"})


def by_site_watch(items: Iterable[T], record: Callable[[T], Mapping[str, Any]]) -> list[tuple[str | None, list[T]]]:
    """*items* in groups: each site watch's (named by their records' ``site_watch``) together where
    its first one stands, the page set's own records (key = the site watch's) first; any other
    item a group of its own (None), in its place.

    >>> rows = [{"key": "a"}, {"key": "s|https://s/1", "site_watch": "s"}, {"key": "b"},
    ...         {"key": "s", "site_watch": "s"}]
    >>> [(site, [r["key"] for r in group]) for site, group in by_site_watch(rows, lambda r: r)]
    [(None, ['a']), ('s', ['s', 's|https://s/1']), (None, ['b'])]
    """
    groups: list[tuple[str | None, list[T]]] = []
    sites: dict[str, list[T]] = {}
    for item in items:
        site = record(item).get("site_watch")
        if not isinstance(site, str):
            groups.append((None, [item]))
        elif site in sites:
            sites[site].append(item)
        else:
            sites[site] = [item]
            groups.append((site, sites[site]))
    for site, group in groups:
        if site is not None:  # the page set's records first, each part in its order
            group.sort(key=lambda item: record(item).get("key") != site)
    return groups


@dataclass(frozen=True, slots=True)
class SiteChanges:
    """What a site watch's records say: pages added and removed (its page set's records), pages
    changed and pages failing (its pages' records)."""

    site_watch: str
    added: int = 0
    removed: int = 0
    changed: int = 0
    failing: int = 0

    def line(self) -> str:
        """``site watch docs: 2 pages added, 1 page removed, 3 pages changed``"""
        counts = ((self.added, "added"), (self.removed, "removed"), (self.changed, "changed"),
                  (self.failing, "failing"))
        parts = [f"{n} page{'s' if n != 1 else ''} {what}" for n, what in counts if n]
        return f"site watch {self.site_watch}: {', '.join(parts) or 'no page added, removed or changed'}"


def site_changes(site_watch: str, records: Sequence[Mapping[str, Any]]) -> SiteChanges:
    """What *records* (a site watch's) say of the site.

    >>> site_changes("docs", [{"key": "docs", "kind": "entities", "added": [{"url": "u"}], "removed": []},
    ...                       {"key": "docs|u2", "kind": "content"}, {"key": "docs|u3", "kind": "error"}]).line()
    'site watch docs: 1 page added, 1 page changed, 1 page failing'
    """
    added = removed = 0
    changed: set[str] = set()
    failing: set[str] = set()
    for record in records:
        key, kind = str(record.get("key")), record.get("kind")
        if key == site_watch:
            added += len(record.get("added") or ())
            removed += len(record.get("removed") or ())
        elif kind in _PAGE_CHANGES:
            changed.add(key)
        elif kind == "error":
            failing.add(key)
    return SiteChanges(site_watch, added, removed, len(changed), len(failing - changed))
