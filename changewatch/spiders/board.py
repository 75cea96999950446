"""Example per-site spider: a listings board (fixture site ``board``, Corkboard flats to rent).

The whole board, every page of it, is one observation: an entity set of adverts keyed by
their URL (the ``ref`` and session parameters stripped). Pages are fetched one after the other
and only a complete board is compared, so an advert pushed from page 1 to page 2 by a newer one
is not "removed" and "added", and a page that fails makes the board an error, never a wave of
removals.

    python -m changewatch.examples.site board
    scrapy crawl board -a site=URL -O changes.jsonl
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar

from scrapy.http import Response
from twisted.python.failure import Failure

from ..core.urls import canonical_url
from ..extract.observe import failed_url
from ..extract.specs import Entities, FieldSpec
from ..items import Observation
from ..spider import ChangewatchSpider

__all__ = ["BoardSpider"]


class BoardSpider(ChangewatchSpider):
    name = "board"
    fixture_site = "board"  # bare `scrapy check` serves it and checks the contracts against it
    # One vantage point: British English, and the region the board shows set by its cookie.
    vantage: ClassVar[dict[str, Any]] = {"accept_language": "en-GB", "cookies": {"region": "all"}}

    ads = Entities.select("li.ad", key="a.title::attr(href)",
                          fields={"title": "a.title", "rent": FieldSpec.css(".rent", kind="price"), "area": ".area"})
    #: the most pages one run follows: a pagination loop must not crawl forever
    max_pages = 50

    def board_key(self) -> str:
        return canonical_url(self.url("/board/"))

    async def start(self) -> AsyncIterator[Any]:
        # One observation assembled over every page of the board: no page may answer 304 (the
        # adverts of the pages before it would be dropped), so none is a conditional request.
        yield self.watch(self.url("/board/"), callback=self.parse_board, key=self.board_key(), conditional=False,
                         errback=self.board_failed, cb_kwargs={"ads": [], "pages": 1})

    def parse_board(self, response: Response, ads: list[dict[str, Any]], pages: int) -> Iterator[Any]:
        """One page of the board; the last one yields the observation of the whole board.

        @site_path /board/page/2/
        @cb_kwargs {"ads": [], "pages": 2}
        @returns items 1 1
        @returns requests 0 0
        @observes key entities
        """
        extraction = self.page(response).extract(entities=self.ads)
        if extraction.error:
            yield self._board(response.url, error=extraction.error)
            return
        ads = ads + (extraction.entities or [])
        next_page = response.css("a[rel=next]::attr(href)").get()
        if next_page and pages < self.max_pages:
            yield self.watch(response.urljoin(next_page), callback=self.parse_board, key=self.board_key(),
                             conditional=False, errback=self.board_failed, cb_kwargs={"ads": ads, "pages": pages + 1})
            return
        yield self._board(response.url, entities=ads, kinds=extraction.kinds)

    def board_failed(self, failure: Failure) -> Iterator[Observation]:
        self.cw_stats.inc("failed")
        yield self._board(failed_url(failure.request.url), error=self.describe_failure(failure))  # type: ignore[attr-defined]

    def _board(self, url: str, *, entities: list[dict[str, Any]] | None = None, error: str | None = None,
               kinds: dict[str, str] | None = None) -> Observation:
        self.cw_stats.inc("error" if error else "observed")
        # "ref" says which page linked the advert: not part of its identity.
        return Observation(key=self.board_key(), url=url, entities=entities, error=error,
                           options={"drop_params": ["ref"], "kinds": kinds or {},
                                    "entities_spec": self.ads.fingerprint()})
