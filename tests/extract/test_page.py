"""FieldSpec and entity specs on a Page: values, kinds, and errors that name what stopped matching."""

from __future__ import annotations

import json
from typing import Any

import pytest
from scrapy.http import HtmlResponse, Response, TextResponse

from changewatch import ChangewatchSpider, Entities, FieldSpec, Page
from changewatch.extract.specs import FieldSpecError

PRODUCT = {"@context": "https://schema.org", "@type": "Product", "name": "Lamp", "sku": "LMP-1",
           "offers": {"@type": "Offer", "price": "129.00", "priceCurrency": "EUR",
                      "availability": "https://schema.org/InStock"}}


def page(body: str = "", *, jsonld: Any = PRODUCT, url: str = "https://shop.example/p/1", owner: str = "",
         head: str = "") -> Page:
    script = f'<script type="application/ld+json">{json.dumps(jsonld)}</script>' if jsonld is not None else ""
    html = f"<html><head>{head}{script}</head><body>{body}</body></html>"
    return Page(HtmlResponse(url=url, body=html.encode(), encoding="utf-8"), owner=owner)


def test_structured_and_selector_fields_with_kinds() -> None:
    p = page('<p class="price">€ 129,00</p><p class="stock">In stock</p>')
    result = p.extract({"name": FieldSpec.jsonld("Product", "name"),
                        "price": FieldSpec.schema("Product", "offers.price"),
                        "shown": FieldSpec.css("p.price", kind="price"), "stock": "p.stock",
                        "availability": FieldSpec.jsonld("Product", "offers.availability")})
    assert result.error is None
    assert result.fields == {"name": "Lamp", "price": "129.00", "shown": "€ 129,00", "stock": "In stock",
                             "availability": "https://schema.org/InStock"}
    assert result.kinds == {"price": "price", "shown": "price", "availability": "availability"}


def test_alternative_paths_for_aggregate_offers() -> None:
    agg = {**PRODUCT, "offers": {"@type": "AggregateOffer", "lowPrice": 59, "highPrice": 79}}
    assert page(jsonld=agg).value(FieldSpec.schema("Product", "offers.price|offers.lowPrice")) == 59


def test_missing_values_are_errors_naming_the_spec() -> None:
    p = page("<p>redesigned</p>")
    result = p.extract({"stock": "p.stock", "price": FieldSpec.jsonld("Product", "offers.pricee"),
                        "note": FieldSpec.css("p.note", required=False)})
    assert result.fields == {"stock": None, "price": None, "note": None}
    assert result.errors == ["extraction: field 'stock' (p.stock) matched nothing",
                             "extraction: field 'price' (JSON-LD Product offers.pricee) matched nothing"]


def test_no_node_of_the_type_is_one_error_for_all_its_fields() -> None:
    p = page(jsonld={"@type": "Article"})
    result = p.extract({"name": FieldSpec.schema("Product", "name"),
                        "price": FieldSpec.schema("Product", "offers.price")})
    assert result.errors == ["extraction: no JSON-LD or microdata node of type Product on the page "
                             "(1 JSON-LD items, 0 invalid blocks, 0 microdata items): 'name', 'price' not found"]


def test_an_empty_element_is_nothing_found() -> None:
    assert page('<span class="price">  </span>').extract({"price": "span.price"}).errors


def test_invalid_selector_names_the_spider_and_field() -> None:
    result = page(owner="spider 'shop'").extract({"price": "span.price["})
    assert result.errors and result.errors[0].startswith("extraction: spider 'shop': field 'price': invalid CSS")
    with pytest.raises(FieldSpecError, match="invalid XPath"):
        FieldSpec.xpath("//span[")
    with pytest.raises(FieldSpecError, match="unknown field kind 'money'"):
        FieldSpec.css("span", kind="money")
    with pytest.raises(FieldSpecError, match="not a CSS selector"):
        FieldSpec.css("//span")


def test_spider_specs_are_checked_at_start() -> None:
    class BadSpider(ChangewatchSpider):
        name = "shop"
        fields = {"price": "span.price[", "name": "h1"}  # noqa: RUF012

    with pytest.raises(FieldSpecError, match=r"spider 'shop': field 'price': invalid CSS selector 'span\.price\['"):
        BadSpider()


def test_selector_entities_and_many() -> None:
    body = """<ul><li class="ad"><a href="/ad/1?utm_source=x">One</a><b>£1,150 pcm</b></li>
              <li class="ad"><a href="/ad/2">Two</a><b>£720 pcm</b></li><li class="ad"><b>no link</b></li></ul>"""
    p = page(body)
    result = p.extract(entities=Entities.select("li.ad", key="a::attr(href)",
                                                fields={"title": "a", "rent": FieldSpec.css("b", kind="price")}))
    assert result.error is None and result.kinds == {"rent": "price"}
    assert result.entities == [{"key": "/ad/1?utm_source=x", "fields": {"title": "One", "rent": "£1,150 pcm"}},
                               {"key": "/ad/2", "fields": {"title": "Two", "rent": "£720 pcm"}},
                               {"key": None, "fields": {"title": None, "rent": "no link"}}]
    assert p.value(FieldSpec.css("li.ad a", many=True)) == ["One", "Two"]
    assert p.value(FieldSpec.xpath("//li/a/@href", many=True)) == ["/ad/1?utm_source=x", "/ad/2"]


def test_structured_entities_per_size_offer() -> None:
    product = {**PRODUCT, "offers": [{"@type": "Offer", "sku": "S", "price": "10", "availability": "InStock"},
                                     {"@type": "Offer", "sku": "M", "price": "10", "availability": "OutOfStock"}]}
    result = page(jsonld=product).extract(entities=Entities.structured("Offer", key="sku", fields={
        "price": "price", "availability": "availability"}))
    assert result.entities == [{"key": "S", "fields": {"price": "10", "availability": "InStock"}},
                               {"key": "M", "fields": {"price": "10", "availability": "OutOfStock"}}]
    assert result.kinds == {"price": "price", "availability": "availability"}


def test_entities_that_match_nothing_are_an_error() -> None:
    result = page("<p>empty board</p>").extract(entities=Entities.select("li.ad", key="a::attr(href)"))
    assert result.errors == ["extraction: entities selector 'li.ad' matched nothing"]
    assert page(jsonld=None).extract(entities=Entities.structured("Offer", key="sku")).errors == [
        "extraction: entities JSON-LD/microdata type Offer matched nothing"]


def test_observe_builds_an_observation() -> None:
    obs = page('<main><p class="stock">In stock</p></main>').observe(
        "LMP-1", {"price": FieldSpec.schema("Product", "offers.price"), "stock": "p.stock"}, region="main",
        kinds={"stock": "availability"}, options={"threshold": 3})
    assert obs.key == "LMP-1" and obs.url == "https://shop.example/p/1" and obs.error is None
    assert obs.fields == {"price": "129.00", "stock": "In stock"}
    specs = obs.options.pop("field_specs")  # how each field was read (tests/test_page_specs.py)
    assert set(specs) == {"price", "stock"}
    assert obs.options == {"threshold": 3, "kinds": {"price": "price", "stock": "availability"}}
    assert obs.region == "main" and obs.html is not None and "In stock" in obs.html


@pytest.mark.parametrize(("response", "error"), [
    (Response(url="https://s.example/a.pdf", body=b"%PDF-1.7 ...", headers={"Content-Type": "application/pdf"}),
     "unsupported: PDF (Content-Type: application/pdf)"),
    (TextResponse(url="https://s.example/", body=b"   ", encoding="utf-8"), "empty: the response body is empty"),
])
def test_pages_that_cannot_be_observed(response: Response, error: str) -> None:
    assert Page(response).observe("k", {"p": "p"}).error == error


def test_opengraph_and_microdata_fields() -> None:
    body = '<div itemscope itemtype="https://schema.org/Product"><span itemprop="name">Shade</span></div>'
    p = page(body, jsonld=None, head='<meta property="product:price:amount" content="39.90">')
    assert p.value(FieldSpec.opengraph("product:price:amount")) == "39.90"
    assert p.value(FieldSpec.microdata("Product", "name")) == p.value(FieldSpec.schema("Product", "name")) == "Shade"
    assert p.value(FieldSpec.jsonld("Product", "name")) is None


@pytest.mark.parametrize(("price", "value", "normalised"), [
    ("Free", "Free", "0"), ("ab 9,99 €", "ab 9,99 €", "9.99 EUR"), (0, 0, "0"), (None, None, None), ("", None, None),
    ("  ", None, None), ([], None, None),
])
def test_awkward_prices(price: Any, value: Any, normalised: Any) -> None:
    from changewatch.core.values import normalise_field

    p = page(jsonld={**PRODUCT, "offers": {"@type": "Offer", "price": price}})
    result = p.extract({"price": FieldSpec.schema("Product", "offers.price")})
    assert result.fields["price"] == value
    assert normalise_field(value, "price") == normalised
    # no price is an error naming the path, never a price of None
    assert (result.error is not None) == (value is None)
    if value is None:
        assert "'price' (JSON-LD/microdata Product offers.price) matched nothing" in str(result.error)


@pytest.mark.parametrize(
    ("body", "headers", "expected_encoding"),
    [
        ("<p>Цена 100 рублей</p>".encode("cp1251"), {"Content-Type": "text/html; charset=windows-1251"},
         "cp1251"),
        ("<meta charset='koi8-r'><p>Цена 100 рублей</p>".encode("koi8-r"), {"Content-Type": "text/html"}, None),
        (b"\xef\xbb\xbf<p>\xd0\xa6\xd0\xb5\xd0\xbd\xd0\xb0 100 \xd1\x80\xd1\x83\xd0\xb1\xd0\xbb\xd0\xb5\xd0\xb9</p>",
         {"Content-Type": "text/html; charset=latin-1"}, "cp1252"),  # a BOM outranks the header
        ("<p>Цена 100 рублей</p>".encode(), {}, None),
    ],
)
def test_a_text_watch_ships_the_body_and_its_encoding_and_the_worker_reads_it_as_scrapy_would(
        body: bytes, headers: dict[str, str], expected_encoding: str | None) -> None:
    """The crawl's thread never decodes a page compared by its text: the body and the encoding
    the response declares cross to the worker, which decodes as response.text does."""
    from changewatch.core.comparisons.content import ContentComparison

    response = HtmlResponse(url="https://shop.example/p/1", body=body, headers=headers)
    obs = Page(response).observe("k", text=True)
    assert obs.error is None and isinstance(obs.html, bytes) and obs.encoding == expected_encoding
    part = ContentComparison().digest(obs)
    assert part is not None and part.text == "Цена 100 рублей"
    assert response.text.endswith("Цена 100 рублей</p>")  # what Scrapy reads agrees


def test_a_text_watch_of_a_mostly_undecodable_page_is_an_error_not_a_change() -> None:
    from changewatch.core.comparisons import BUILTIN_COMPARISONS, Kind, load_comparisons
    from changewatch.core.verdict import observe

    body = b"<html><body><p>" + b"\x80\xbf\xc0\xfe\xff terms " * 200 + b"</p></body></html>"
    response = HtmlResponse(url="https://shop.example/p/1", body=body,
                            headers={"Content-Type": "text/html; charset=utf-8"})
    obs = Page(response).observe("k", text=True)
    verdict = observe(obs, None, load_comparisons(dict(BUILTIN_COMPARISONS), merge=False))
    assert verdict.kind is Kind.ERROR and verdict.keep is None
    assert verdict.error is not None
    assert verdict.error.startswith("unsupported: undecodable text (") and "not valid utf-8" in verdict.error


def test_an_undeclared_page_reads_as_scrapy_reads_it_with_or_without_fields() -> None:
    """A windows-1252 page that declares nothing: the worker infers its encoding as Scrapy's
    response.text does, so a text watch reads the same text whether or not it also has fields
    (and as before this page crossed as bytes: no baseline changes on upgrading)."""
    from changewatch.core.comparisons.content import ContentComparison

    body = "<html><body><p>crème brûlée à la carte, prix 12 €</p></body></html>".encode("cp1252")
    texts = []
    for fields in (None, {"t": "p::text"}):
        response = HtmlResponse(url="https://shop.example/p/1", body=body, headers={"Content-Type": "text/html"})
        obs = Page(response).observe("k", fields, text=True)
        assert isinstance(obs.html, bytes if fields is None else str) and obs.encoding is None
        part = ContentComparison().digest(obs)
        assert part is not None
        texts.append(part.text)
        scrapy_text = " ".join(response.text.split("<p>")[1].split("</p>")[0].split())
        assert part.text == scrapy_text
    assert texts[0] == texts[1]


def mislabelled(price: str) -> HtmlResponse:
    """windows-1252 bytes served as ``charset=utf-8``."""
    body = f"<html><body><p class=price>Price: 5 {price}</p><p>Crème brûlée</p></body></html>".encode("cp1252")
    return HtmlResponse(url="https://shop.example/p/1", body=body, headers={"Content-Type": "text/html; charset=utf-8"})


def test_selector_fields_of_a_mislabelled_page_read_each_bad_byte_apart() -> None:
    pages = [Page(mislabelled(p)) for p in "€£"]
    values = [p.extract({"price": "p.price"}).fields["price"] for p in pages]
    assert values[0] != values[1] and values[0].startswith("Price: 5 ") and "\ufffd" not in values[0]
    assert [p.undecodable for p in pages] == [4, 4] and all(p.unsupported is None for p in pages)
    assert "\ufffd" in mislabelled("€").text  # what Scrapy itself reads


def test_a_mislabelled_page_reads_the_same_in_the_crawl_and_in_the_worker() -> None:
    """A text watch with fields is decoded here; without, in the worker: the same text."""
    from changewatch.core.comparisons.content import ContentComparison

    texts = []
    for fields in (None, {"t": "p::text"}):
        obs = Page(mislabelled("€")).observe("k", fields, text=True)
        assert isinstance(obs.html, bytes if fields is None else str)
        part = ContentComparison().digest(obs)
        assert part is not None
        texts.append(part.text)
    assert texts[0] == texts[1] and "\ufffd" not in texts[0]


def test_a_mostly_undecodable_page_is_unsupported_for_its_selectors_too() -> None:
    body = b"<html><body><p>" + b"\x80\xbf\xc0\xfe\xff terms " * 200 + b"</p></body></html>"
    response = HtmlResponse(url="https://shop.example/p/1", body=body,
                            headers={"Content-Type": "text/html; charset=utf-8"})
    obs = Page(response).observe("k", {"t": "p::text"})
    assert obs.error is not None and obs.error.startswith("unsupported: undecodable text (1000 of ")


def test_json_ld_of_a_mislabelled_page_stays_valid_json_and_reads_bytes_apart() -> None:
    """Why undecodable bytes are not written as a visible ``\\x80`` in the text: that is not a
    valid escape inside a JSON string, and the whole JSON-LD block would be lost."""
    names = []
    for price in "€£":
        script = json.dumps({**PRODUCT, "name": f"Lamp 5 {price}"}, ensure_ascii=False)
        body = f'<html><head><script type="application/ld+json">{script}</script></head><body></body></html>'
        response = HtmlResponse(url="https://shop.example/p/1", body=body.encode("cp1252"),
                                headers={"Content-Type": "text/html; charset=utf-8"})
        p = Page(response)
        names.append(p.value(FieldSpec.jsonld("Product", "name")))
        assert p.invalid_jsonld_blocks == 0 and p.undecodable == 1
    assert names[0] != names[1] and names[0].startswith("Lamp 5 ")
