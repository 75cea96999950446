"""What became of a crawl's requests, for the crawl that yields no observation at all: a spider of
one's own (a plain ``scrapy.Spider`` yielding dicts) whose every request was refused, failed or
answered with an error status yields nothing, and without this its crawl ended as quietly as one
with nothing to do. The middlewares of :mod:`changewatch.middlewares.fetches` note here whether any
response reached a spider callback and, in words (``<class>: …``), why each request that did not
failed; the pipeline's end-of-crawl check reads :meth:`FetchOutcomes.nothing_reached`."""

from __future__ import annotations

from collections import Counter

from scrapy import Request
from scrapy.http.request import NO_CALLBACK

__all__ = ["FetchOutcomes"]

#: distinct reasons the end-of-crawl line names; the others are counted
SHOWN_REASONS = 5


class FetchOutcomes:
    """One crawl's count of responses that reached a callback, and why the other requests failed."""

    def __init__(self) -> None:
        #: responses handed to a spider callback (whatever it made of them)
        self.reached = 0
        #: requests that ended without reaching the spider: why → how many
        self.lost: Counter[str] = Counter()

    def reached_spider(self) -> None:
        self.reached += 1

    def failed(self, request: Request, why: str) -> None:
        """*request* ended without a response for the spider, because *why*. Requests that are
        not the spider's are left out: those made for no callback (``NO_CALLBACK``: robots.txt, a
        render's resources). The second load that confirms a change counts, but only a crawl
        that judged no page reads this, and a confirmation follows a judged page."""
        if request.callback is NO_CALLBACK:
            return
        self.lost[why] += 1

    def nothing_reached(self) -> str | None:
        """Why not one request of the crawl reached the spider, when some were made and failed and
        no response reached a callback; None otherwise (nothing was requested, or the spider got
        pages, whatever it made of them)."""
        if self.reached or not self.lost:
            return None
        shown = "; ".join(f"{why} ({count} request{'s' if count > 1 else ''})"
                          for why, count in self.lost.most_common(SHOWN_REASONS))
        others = len(self.lost) - SHOWN_REASONS
        more = f"; and {others} other reason(s)" if others > 0 else ""
        return f"all {self.lost.total()} request(s) failed, none reached the spider: {shown}{more}"
