"""A Page says how it read each field and entity set (``options["field_specs"]``,
``options["entities_spec"]``): an edited watch re-baselines what it reads another way,
and only that."""

from __future__ import annotations

from scrapy.http import HtmlResponse

from changewatch import Entities, FieldSpec, Page
from changewatch.extract.watch import observe_watch
from changewatch.watchlist import parse_watchlist

HTML = ('<html><head><script type="application/ld+json">{"@context": "https://schema.org", "@type": "Product",'
        ' "name": "Lamp", "offers": {"price": "129.00"}}</script></head><body><main><p class="price">129.00</p>'
        '<p class="stock">In stock</p></main><ul><li><a href="/a">A</a></li><li><a href="/b">B</a></li></ul>'
        '</body></html>')


def page() -> Page:
    return Page(HtmlResponse(url="https://shop.example/p/1", body=HTML.encode(), encoding="utf-8"))


def specs(**fields: FieldSpec | str) -> dict[str, str]:
    obs = page().observe("k", fields)
    assert obs.error is None
    return dict(obs.options["field_specs"])


def test_each_field_says_how_it_was_read() -> None:
    base = specs(price="p.price::text", stock="p.stock::text")
    assert set(base) == {"price", "stock"}
    assert specs(price="p.price::text", stock="p.stock::text") == base  # stable
    edited = specs(price="p.price::text", stock="main p.stock::text")
    assert edited["price"] == base["price"] and edited["stock"] != base["stock"]
    assert specs(price=FieldSpec.css("p.price::text", kind="price"))["price"] != base["price"]
    assert specs(price=FieldSpec.xpath("//p[@class='price']/text()"))["price"] != base["price"]
    structured = specs(price=FieldSpec.schema("Product", "offers.price"))["price"]
    assert structured != specs(price=FieldSpec.jsonld("Product", "offers.price"))["price"]
    assert structured != specs(price=FieldSpec.schema(("Product", "Thing"), "offers.price"))["price"]
    # a kind the spider gives at observe() is how the field compares: part of its spec
    overridden = page().observe("k", {"price": "p.price::text"}, kinds={"price": "price"})
    assert overridden.options["field_specs"]["price"] != base["price"]


def test_an_entity_set_says_how_it_was_read() -> None:
    def spec(entities: Entities) -> str:
        obs = page().observe("k", entities=entities)
        assert obs.error is None
        return str(obs.options["entities_spec"])

    base = spec(Entities.select("li", key="a::attr(href)", fields={"title": "a::text"}))
    assert base == spec(Entities.select("li", key="a::attr(href)", fields={"title": "a::text"}))
    assert base != spec(Entities.select("ul li", key="a::attr(href)", fields={"title": "a::text"}))
    assert base != spec(Entities.select("li", key="a::attr(href)", fields={"name": "a::text"}))
    assert base != spec(Entities.select("li", key="a::attr(href)"))
    assert "field_specs" not in page().observe("k", entities=Entities.select("li", key="a::attr(href)")).options


def test_a_watch_s_options_carry_the_specs_and_a_text_watch_none() -> None:
    watches = parse_watchlist({"watches": [
        {"url": "https://shop.example/p/1", "key": "f", "fields": {"stock": "p.stock::text"},
         "jsonld": {"type": "Product", "fields": ["offers.price"]}},
        {"url": "https://shop.example/p/1", "key": "t", "region": "main"}]})
    response = HtmlResponse(url="https://shop.example/p/1", body=HTML.encode(), encoding="utf-8")
    fields, _ = observe_watch(watches[0], response)
    assert set(fields.options["field_specs"]) == {"stock", "offers.price"}
    text, _ = observe_watch(watches[1], response)
    assert "field_specs" not in text.options and "entities_spec" not in text.options
