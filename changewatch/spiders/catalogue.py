"""Example per-site spider: a product catalogue (fixture site ``catalogue``, Lumen & Co.).

Category pages (with pagination) are observed as entity sets of the products they list; each
product page is observed by its SKU with fields from JSON-LD (or microdata), and a product sold
in several sizes as a set of per-size offers, so one size going out of stock is one entity
change and not "more than one price found".

    python -m changewatch.examples.site catalogue        # prints its URL
    scrapy crawl catalogue -a site=URL -O changes.jsonl
    scrapy check catalogue -a site=URL
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar

from scrapy.http import Response

from .. import meta
from ..core.urls import canonical_url
from ..extract.specs import Entities, FieldSpec
from ..spider import ChangewatchSpider

__all__ = ["CatalogueSpider"]


class CatalogueSpider(ChangewatchSpider):
    name = "catalogue"
    fixture_site = "catalogue"  # bare `scrapy check` serves it and checks the contracts against it
    # The same language on every run: a shop that guesses from the IP would otherwise switch
    # currency or translation between runs and every product would "change".
    vantage: ClassVar[dict[str, Any]] = {"accept_language": "en-GB,en;q=0.8"}

    categories = ("/c/lamps/", "/c/kettles/")

    # Product fields, JSON-LD first, microdata when a page has no JSON-LD Product. An
    # AggregateOffer has lowPrice instead of price: the first path that matches is the price.
    fields: ClassVar[dict[str, FieldSpec | str]] = {
        "name": FieldSpec.schema("Product", "name"),
        "price": FieldSpec.schema("Product", "offers.price|offers.lowPrice"),
        "currency": FieldSpec.schema("Product", "offers.priceCurrency", required=False),
        "availability": FieldSpec.schema("Product", "offers.availability"),
    }
    # A product with several offers (sizes): each offer is an entity keyed by its own SKU.
    sizes = Entities.structured("Offer", key="sku", fields={"size": "name", "price": "price",
                                                             "availability": "availability"})
    # The products of a category page: keyed by product URL (tracking parameters stripped).
    grid = Entities.select("article.product", key="a::attr(href)",
                           fields={"sku": "::attr(data-sku)", "name": "h2",
                                   "price": FieldSpec.css(".price", kind="price"), "stock": ".stock"})

    async def start(self) -> AsyncIterator[Any]:
        for path in self.categories:
            # Category pages lead to the products and the next page: always fetched in full, or a
            # 304 would leave those unvisited. Product pages are conditional requests.
            yield self.watch(self.url(path), callback=self.parse_category, key=canonical_url(self.url(path)),
                             conditional=False)

    def parse_category(self, response: Response) -> Iterator[Any]:
        """A category page: its product grid, its product pages, the next page.

        @site_path /c/lamps/
        @returns items 1 1
        @returns requests 4 4
        @observes key entities
        """
        yield self.observe(response, key=canonical_url(response.url), fields={}, entities=self.grid)
        for product in response.css("article.product"):
            href = product.css("a::attr(href)").get()
            if href:
                # Fetch the canonical URL (no utm_*): the record's url is then the product's.
                # The SKU is known before the fetch: a product page that fails is an error of that key.
                yield self.watch(canonical_url(response.urljoin(href)), callback=self.parse_product,
                                 key=product.attrib.get("data-sku") or None)
        next_page = response.css("a[rel=next]::attr(href)").get()
        if next_page:
            yield self.watch(response.urljoin(next_page), callback=self.parse_category,
                             key=canonical_url(response.urljoin(next_page)), conditional=False)

    def parse_product(self, response: Response) -> Iterator[Any]:
        """A product page, keyed by SKU: a new URL for the same product keeps its history.

        @site_path /p/lmp-001.html
        @returns items 1 1
        @observes key fields.name fields.price fields.availability
        """
        page = self.page(response)
        key = response.meta.get(meta.KEY) or page.value(FieldSpec.schema("Product", "sku", required=False))
        key = str(key or canonical_url(response.url))
        offers = page.structured.resolve(page.node("Product") or {}, "offers")
        if isinstance(offers, list) and len(offers) > 1:
            yield self.observe(page, key=key, fields={"name": self.fields["name"]}, entities=self.sizes)
        else:
            yield self.observe(page, key=key)
