"""One site watch's discovery in a crawl (:class:`SiteRun`), and the request meta that carries it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..watchlist import Watch
    from ..watchlist.site import SiteSpec
    from .site_set import StoredPages

__all__ = ["HOPS", "RUN", "SiteRun"]

#: meta: the SiteRun a discovery request belongs to (private)
RUN = "_changewatch_site_run"
#: meta: the link hops from a start URL (private)
HOPS = "_changewatch_site_hops"


@dataclass(slots=True)
class SiteRun:
    """One site watch's discovery in this crawl."""

    watch: Watch
    spec: SiteSpec
    #: the last good page set, in the store
    stored: StoredPages
    #: a last good page set is stored (False: the first run)
    has_set: bool
    #: the stored set was chosen as this run chooses it (the same ``max_pages``): else this run's
    #: set is a fresh, silent baseline
    same_spec: bool = True
    #: link mode: the last good page set (canonical URLs; None: no set yet, the first run)
    previous: set[str] | None = None
    #: the site's lastmod is trusted, and the run's turn of the lastmod sample
    trusted: bool = True
    turn: int = 0
    error: str | None = None
    #: link mode
    seen: set[str] = field(default_factory=set)
    watched: set[str] = field(default_factory=set)
    pending: int = 0
    some_failed: bool = False
    unfinished: bool = False
    start_ok: bool = False
    wrong_said: bool = False

    @property
    def key(self) -> str:
        return self.watch.key

    @property
    def afresh(self) -> bool:
        """This run's set is a fresh, silent baseline: none is stored, or it was chosen otherwise."""
        return not (self.has_set and self.same_spec)
