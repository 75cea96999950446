"""Structured data the way real pages break it: JSON-LD repaired block by block, microdata and
OpenGraph through extruct, the node shapes of schema.org in the wild."""

from __future__ import annotations

import json
from typing import Any

import pytest
from parsel import Selector

from changewatch.extract.structured import find_nodes, parse_jsonld_block, resolve_path, structured_data


def blocks(*scripts: str, body: str = "") -> Any:
    head = "".join(f'<script type="application/ld+json">{s}</script>' for s in scripts)
    return structured_data(Selector(text=f"<html><head>{head}</head><body>{body}</body></html>").root,
                           "https://shop.example/p/1")


@pytest.mark.parametrize("script", [
    '{"@type": "Product", "name": "Lamp"}',
    '/* CMS */ {"@type": "Product", // the name\n "name": "Lamp"}',                    # comments
    '{"@type": "Product", "name": "Lamp",}',                                            # trailing comma
    '{"@type": "Product", "name": "La\x01mp"}'.replace("La\x01mp", "Lamp\x0b"),           # control character
    '{"@type": "Product",\x0c "name": "Lamp"}',                                         # control char outside strings
    '{"@type": &quot;Product&quot;, "name": "Lamp"}',                                   # HTML-escaped quotes
    '//<![CDATA[\n{"@type": "Product", "name": "Lamp"}\n//]]>',                         # CDATA wrapper
    '<![CDATA[{"@type": "Product", "name": "Lamp"}]]>',
    '<!--\n{"@type": "Product", "name": "Lamp"}\n-->',                                  # HTML comment
    '\n\n  {"@type": "Product",\n "name": "Lamp\nshade"}  \n',                         # raw newline in a string
])
def test_broken_jsonld_is_repaired(script: str) -> None:
    data = blocks(script)
    assert data.invalid_blocks == 0
    [node] = data.nodes(["Product"])
    assert node["name"].startswith("Lamp")


def test_several_objects_in_one_block() -> None:
    assert parse_jsonld_block('{"@type": "A"}\n{"@type": "B"};') == [{"@type": "A"}, {"@type": "B"}]


@pytest.mark.parametrize("script", ["{{{", '{"@type": "Product", broken', "<p>not json</p>"])
def test_hopeless_blocks_are_counted_and_skipped(script: str) -> None:
    data = blocks(script, '{"@type": "Product", "name": "Lamp"}')
    assert data.invalid_blocks == 1
    assert [n["name"] for n in data.nodes(["Product"])] == ["Lamp"]


def test_empty_block_is_no_data_and_no_error() -> None:
    data = blocks("   ", "")
    assert data.jsonld == [] and data.invalid_blocks == 0


def test_fifty_plus_blocks() -> None:
    scripts = [json.dumps({"@type": "ListItem", "position": i}) for i in range(60)]
    scripts.insert(37, json.dumps({"@type": "Product", "name": "Lamp", "offers": {"price": "9"}}))
    data = blocks(*scripts, "{bad")
    assert len(data.jsonld) == 61 and data.invalid_blocks == 1
    assert len(data.nodes(["ListItem"])) == 60
    assert data.resolve(data.nodes(["Product"])[0], "offers.price") == "9"


def test_missing_type_is_not_a_node_of_any_type() -> None:
    data = blocks('{"name": "untyped", "offers": {"@type": "Offer", "price": 3}}')
    assert data.nodes(["Product"]) == []
    assert [n["price"] for n in data.nodes(["Offer"])] == [3]  # typed nodes inside are still found
    assert data.types() == {"Offer"}


GRAPH = {"@context": "https://schema.org", "@graph": [
    {"@type": "WebPage", "@id": "#page", "mainEntity": {"@id": "#p"}},
    {"@type": ["Product", "IndividualProduct"], "@id": "#p", "name": "Lamp",
     "offers": [{"@id": "#o1"}, {"@id": "#o2"}]},
    {"@type": "Offer", "@id": "#o1", "sku": "S", "price": "10.00"},
    {"@type": "Offer", "@id": "#o2", "sku": "L", "price": "12.00"},
]}


def test_graph_ids_type_lists_and_main_entity() -> None:
    data = blocks(json.dumps(GRAPH))
    [product] = data.nodes(["IndividualProduct"])
    assert data.resolve(product, "offers.price") == ["10.00", "12.00"]
    [page] = data.nodes(["WebPage"])
    assert data.resolve(page, "mainEntity.name") == "Lamp"
    assert data.resolve(page, "mainEntity.offers.sku") == ["S", "L"]
    assert data.types() == {"WebPage", "Product", "IndividualProduct", "Offer"}


def test_type_names_without_vocabulary_and_case() -> None:
    data = blocks('{"@type": "http://schema.org/Product", "name": "A"}', '{"@type": "schema:Product", "name": "B"}',
                  '{"@type": "product", "name": "C"}')
    assert [n["name"] for n in data.nodes(["Product"])] == ["A", "B", "C"]


def test_aggregate_offer_and_value_objects() -> None:
    node = {"offers": {"@type": "AggregateOffer", "lowPrice": 59, "highPrice": 79}, "name": {"@value": "Lamp"}}
    assert resolve_path(node, "offers.lowPrice") == 59
    assert resolve_path(node, "offers.price") is None
    assert resolve_path(node, "name") == "Lamp"
    assert resolve_path({"offers": [None, {"price": None}, {"price": 5}]}, "offers.price") == 5


def test_find_nodes_in_lists_and_nesting() -> None:
    items = [[{"@type": "Product", "isRelatedTo": {"@type": "Product", "name": "inner"}}], {"@type": "Thing"}]
    assert [n.get("name") for n in find_nodes(items, ["Product"])] == [None, "inner"]


def test_microdata_and_opengraph() -> None:
    body = """<div itemscope itemtype="https://schema.org/Product"><h1 itemprop="name">Shade</h1>
      <div itemprop="offers" itemscope itemtype="https://schema.org/Offer"><meta itemprop="price" content="39.90">
      <link itemprop="availability" href="https://schema.org/InStock"></div></div>
      <span itemprop="price">orphan without itemscope</span>"""
    html = ('<html><head><meta property="og:title" content="Shade"><meta property="og:image" content="/a.jpg">'
            f'<meta property="og:image" content="/b.jpg"></head><body>{body}</body></html>')
    data = structured_data(Selector(text=html).root, "https://shop.example/")
    [product] = data.nodes(["Product"])
    assert data.resolve(product, "offers.price") == "39.90"
    assert data.resolve(product, "offers.availability") == "https://schema.org/InStock"
    assert data.opengraph["og:title"] == "Shade"
    assert data.opengraph["og:image"] == ["/a.jpg", "/b.jpg"]


def test_microdata_without_itemscope_is_no_data() -> None:
    data = structured_data(Selector(text='<p itemprop="price">9</p><div itemtype="x"><b itemprop="n">1</b></div>').root)
    assert data.microdata == [] and data.jsonld == []


def test_not_html_is_empty() -> None:
    assert structured_data("not a tree").jsonld == []
