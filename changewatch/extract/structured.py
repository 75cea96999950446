"""Structured data of a page: JSON-LD (leniently), microdata and OpenGraph (through extruct).

Real pages break JSON-LD in every way a browser forgives: comments, trailing commas, control
characters, HTML-escaped quotes, CDATA wrappers, several objects in one block. Each block is
parsed on its own; one that cannot be repaired is counted and skipped, never fatal for the rest.

extruct is imported on first use of microdata or OpenGraph: with its dependencies (mf2py,
BeautifulSoup, html5lib, rdflib, requests) it was ~0.15 s of CPU in every crawl's start-up
(docs/performance.md, "Fixed cost"), most of which never read either.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

import jstyleson
from lxml import etree

__all__ = ["StructuredData", "find_nodes", "parse_jsonld_block", "resolve_path", "structured_data", "type_names"]

_DECODER = json.JSONDecoder(strict=False)  # strict=False: raw newlines and tabs inside strings
_WRAPPERS = re.compile(r"^\s*(?://\s*|/\*\s*)?(?:<!\[CDATA\[|<!--)|(?://\s*|/\*\s*)?(?:\]\]>|-->)(?:\s*\*/)?\s*$")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: the JSON-LD blocks of a document, as extruct's JsonLdExtractor finds them
_JSONLD_SCRIPTS = etree.XPath('descendant-or-self::script[@type="application/ld+json"]')


def _decode_all(text: str) -> list[Any]:
    """Every JSON value in *text*: some sites put two objects in one block."""
    values, pos, end = [], 0, len(text)
    while pos < end:
        while pos < end and text[pos] in " \t\r\n;,":
            pos += 1
        if pos >= end:
            break
        value, pos = _DECODER.raw_decode(text, pos)
        values.append(value)
    return values


def _repairs(script: str) -> Iterator[str]:
    """*script* as written, then with the usual breakages undone, mildest first."""
    yield script
    unwrapped = _WRAPPERS.sub("", script.strip())
    yield unwrapped
    cleaned = _CONTROL.sub(" ", unwrapped)
    yield cleaned
    if "&" in cleaned:
        yield html.unescape(cleaned)


def parse_jsonld_block(script: str) -> list[Any]:
    """The JSON-LD values of one ``<script type="application/ld+json">`` block; raise ValueError
    when no repair makes it JSON.

    >>> parse_jsonld_block('<!--{"@type": "Offer", /* net */ "price": "9.99",}-->')
    [{'@type': 'Offer', 'price': '9.99'}]
    >>> parse_jsonld_block('{"@type": &quot;Product&quot;}')
    [{'@type': 'Product'}]
    """
    last: Exception | None = None
    for candidate in dict.fromkeys(_repairs(script)):
        if not candidate.strip():
            return []
        try:
            return _decode_all(candidate)
        except ValueError as exc:
            last = exc
        try:  # JS comments and trailing commas
            value = jstyleson.loads(candidate, strict=False)
            return [value]
        except Exception as exc:  # jstyleson raises what json raises, or worse
            last = exc
    raise ValueError(f"invalid JSON-LD: {last}")


class _LenientJsonLd:
    """extruct's JsonLdExtractor, each block read by :func:`parse_jsonld_block`."""

    def __init__(self) -> None:
        self.invalid = 0

    def extract_items(self, document: Any) -> list[Any]:
        return [item for node in _JSONLD_SCRIPTS(document) for item in self._extract_items(node) if item]

    def _extract_items(self, node: Any) -> list[Any]:
        try:
            values = parse_jsonld_block(node.xpath("string()"))
        except ValueError:  # one broken block must not hide the others
            self.invalid += 1
            return []
        items: list[Any] = []
        for value in values:
            items.extend(value if isinstance(value, list) else [value])
        return items


def type_names(node: dict[str, Any]) -> set[str]:
    """The ``@type`` (or microdata ``type``) names of *node*, without a vocabulary prefix."""
    types = node.get("@type")
    values = types if isinstance(types, list) else [types]
    return {str(t).strip().rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1].removeprefix("schema:")
            for t in values if isinstance(t, str) and t.strip()}


def walk(value: Any) -> Iterator[dict[str, Any]]:
    """Every mapping in *value*, depth first in document order."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            yield current
            stack.extend(reversed(list(current.values())))
        elif isinstance(current, list):
            stack.extend(reversed(current))


def find_nodes(items: Iterable[Any], types: Iterable[str]) -> list[dict[str, Any]]:
    """Every node (top level, inside ``@graph``, lists or nested) of one of *types*. Type names
    compare without case: sites write ``product`` too."""
    wanted = {t.lower() for t in types}
    return [node for item in items for node in walk(item) if {t.lower() for t in type_names(node)} & wanted]


def _index_ids(items: Iterable[Any]) -> dict[str, dict[str, Any]]:
    index: dict[str, dict[str, Any]] = {}
    for node in (n for item in items for n in walk(item)):
        node_id = node.get("@id")
        if isinstance(node_id, str) and len(node) > 1:
            index.setdefault(node_id, node)
    return index


def resolve_path(node: Any, path: str, ids: dict[str, dict[str, Any]] | None = None) -> Any:
    """Value at dotted *path*; lists along the way are mapped over, ``{"@id": …}`` references
    are followed through *ids*. One result is returned as a scalar, none as None.

    >>> resolve_path({"offers": [{"price": "9.99"}]}, "offers.price")
    '9.99'
    >>> resolve_path({"offers": [{"price": 1}, {"price": 2}]}, "offers.price")
    [1, 2]
    >>> resolve_path({"offers": {"@id": "#o"}}, "offers.price", {"#o": {"@id": "#o", "price": 3}})
    3
    """
    current: list[Any] = [node]
    for part in path.split("."):
        nxt: list[Any] = []
        for value in current:
            if ids and isinstance(value, dict) and set(value) == {"@id"}:
                value = ids.get(value["@id"], value)
            if isinstance(value, dict) and part in value:
                found = value[part]
                nxt.extend(found if isinstance(found, list) else [found])
        # null, [] and "" are how sites write "no value": nothing found, never a value of None
        current = [v for v in nxt if v is not None and v != [] and not (isinstance(v, str) and not v.strip())]
    current = [v["@value"] if isinstance(v, dict) and "@value" in v else v for v in current]
    if not current:
        return None
    return current[0] if len(current) == 1 else current


class StructuredData:
    """A page's JSON-LD items, microdata items (in JSON-LD shape: ``@type`` and properties) and
    OpenGraph properties, each extracted on first use: a watch of JSON-LD fields never pays for
    a microdata walk of the whole page."""

    def __init__(self, root: Any = None, base_url: str | None = None):
        self._root = root if isinstance(root, etree._Element) else None
        self._base_url = base_url
        self._jsonld: list[Any] | None = None
        self._microdata: list[Any] | None = None
        self._opengraph: dict[str, Any] | None = None
        self._ids: dict[str, dict[str, Any]] | None = None
        self._invalid_blocks = 0

    @property
    def jsonld(self) -> list[Any]:
        if self._jsonld is None:
            extractor = _LenientJsonLd()
            self._jsonld = extractor.extract_items(self._root) if self._root is not None else []
            self._invalid_blocks = extractor.invalid
        return self._jsonld

    @property
    def invalid_blocks(self) -> int:
        """JSON-LD blocks beyond repair, skipped."""
        self.jsonld  # noqa: B018 - parsed on first use
        return self._invalid_blocks

    @property
    def microdata(self) -> list[Any]:
        if self._microdata is None:
            self._microdata = _microdata(self._root, self._base_url) if self._root is not None else []
        return self._microdata

    @property
    def opengraph(self) -> dict[str, Any]:
        if self._opengraph is None:
            self._opengraph = _opengraph(self._root) if self._root is not None else {}
        return self._opengraph

    def nodes(self, types: Iterable[str]) -> list[dict[str, Any]]:
        """Nodes of one of *types*: JSON-LD's, or microdata's when JSON-LD has none."""
        wanted = list(types)
        return find_nodes(self.jsonld, wanted) or find_nodes(self.microdata, wanted)

    def types(self) -> set[str]:
        """Every type name found in JSON-LD and microdata."""
        return {t for item in (*self.jsonld, *self.microdata) for node in walk(item) for t in type_names(node)}

    def resolve(self, node: Any, path: str) -> Any:
        if self._ids is None:
            self._ids = _index_ids(self.jsonld)
        return resolve_path(node, path, self._ids)


def _microdata(root: etree._Element, base_url: str | None) -> list[Any]:
    from extruct.uniform import _umicrodata_microformat
    from extruct.w3cmicrodata import MicrodataExtractor

    try:
        raw = MicrodataExtractor().extract_items(root, base_url=base_url)
        items: list[Any] = _umicrodata_microformat(raw, schema_context="http://schema.org")
        return items
    except Exception:  # malformed microdata (itemprop without itemscope, loops) is no data
        return []


def _opengraph(root: etree._Element) -> dict[str, Any]:
    from extruct.opengraph import OpenGraphExtractor

    props: dict[str, Any] = {}
    for item in OpenGraphExtractor().extract_items(root):
        for name, value in item.get("properties", []):
            if name in props:  # og:image and friends repeat: keep them all
                props[name] = [*props[name], value] if isinstance(props[name], list) else [props[name], value]
            else:
                props[name] = value
    return props


def structured_data(root: Any, base_url: str | None = None) -> StructuredData:
    """The structured data of an lxml document (a parsel Selector's ``root``), extracted lazily."""
    return StructuredData(root, base_url)
