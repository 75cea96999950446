"""Extraction of tracked values from a page: CSS/XPath selectors and JSON-LD (via extruct)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from extruct.jsonld import JsonLdExtractor
from lxml import etree
from parsel import Selector, SelectorList
from parsel.csstranslator import HTMLTranslator

from .reprs import short_repr

__all__ = ["JsonLd", "SelectorError", "check_selector", "find_nodes", "jsonld", "resolve_path", "select",
           "select_value"]

_WS = re.compile(r"\s+")
_PROBE = '<html><head><title>t</title></head><body><main><p class="a">x<a href="/y">y</a></p></main></body></html>'


class SelectorError(ValueError):
    """A CSS or XPath selector does not compile."""


def is_xpath(query: str) -> bool:
    """CSS, or XPath when the query starts with ``/`` or ``(``."""
    return query.lstrip().startswith(("/", "("))


def check_selector(query: str) -> None:
    """Raise :class:`SelectorError` (and nothing else) when *query* is not a valid CSS or XPath
    selector. XPath is also evaluated once on a small page: undefined variables or namespace
    prefixes and type errors (``//p | 1``) compile, and would only fail on the first real page."""
    if not isinstance(query, str) or not query.strip():
        raise SelectorError(f"selector must be a non-empty string, not {short_repr(query)}")
    try:
        if is_xpath(query):
            etree.XPath(query)
        else:
            HTMLTranslator().css_to_xpath(query)
        select(Selector(text=_PROBE, type="html"), query)
    except Exception as exc:  # cssselect, lxml and parsel raise several unrelated types
        raise SelectorError(f"invalid {'XPath' if is_xpath(query) else 'CSS'} selector {short_repr(query)}: "
                            f"{exc}") from exc


def select(sel: Selector | SelectorList[Selector], query: str) -> SelectorList[Selector]:
    """Matches of *query* (checked by :func:`check_selector`: then it does not raise)."""
    return sel.xpath(query) if is_xpath(query) else sel.css(query)


def select_value(sel: Selector, query: str) -> str | None:
    """First match of *query* in an HTML selector (``type="html"``): a text or attribute node as
    is, an element as its visible text (whitespace collapsed); None when nothing matches. Never
    raises for a *query* that passed :func:`check_selector`, whatever the page."""
    matches = select(sel, query)
    if not matches:
        return None
    first = matches[0]
    if isinstance(first.root, etree._Element):
        text = " ".join(first.xpath(".//text()[not(ancestor::script or ancestor::style)]").getall())
    else:
        text = str(first.get())
    return _WS.sub(" ", text).strip()


class _LenientJsonLd(JsonLdExtractor):  # type: ignore[misc]
    """extruct's JSON-LD extractor, one block at a time: an invalid block is counted and
    skipped instead of failing the whole page."""

    def __init__(self) -> None:
        self.invalid = 0

    def _extract_items(self, node: Any) -> list[Any]:
        try:
            return list(super()._extract_items(node))
        except Exception:  # invalid JSON in one block must not hide the others
            self.invalid += 1
            return []


@dataclass(frozen=True, slots=True)
class JsonLd:
    items: list[Any]
    invalid_blocks: int


def jsonld(sel: Selector) -> JsonLd:
    """The page's JSON-LD items; an invalid block is counted and skipped. Never raises."""
    extractor = _LenientJsonLd()
    root = sel.root
    items = extractor.extract_items(root) if isinstance(root, etree._Element) else []
    return JsonLd(items, extractor.invalid)


def _type_names(node: dict[str, Any]) -> set[str]:
    types = node.get("@type")
    values = types if isinstance(types, list) else [types]
    return {str(t).rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1] for t in values if t}


def _walk(value: Any) -> Iterator[dict[str, Any]]:
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            yield current
            stack.extend(reversed(list(current.values())))
        elif isinstance(current, list):
            stack.extend(reversed(current))


def find_nodes(items: Iterable[Any], types: Iterable[str]) -> list[dict[str, Any]]:
    """Every JSON-LD node (top level, inside ``@graph``, lists or nested) of one of *types*.
    Never raises on JSON data."""
    wanted = set(types)
    return [node for item in items for node in _walk(item) if _type_names(node) & wanted]


def resolve_path(node: Any, path: str) -> Any:
    """Value at dotted *path*; lists along the way are mapped over. A single result is returned
    as a scalar, none as None. Never raises on JSON data.

    >>> resolve_path({"offers": [{"price": "9.99"}]}, "offers.price")
    '9.99'
    >>> resolve_path({"offers": [{"price": 1}, {"price": 2}]}, "offers.price")
    [1, 2]
    """
    current: list[Any] = [node]
    for part in path.split("."):
        nxt: list[Any] = []
        for value in current:
            if isinstance(value, dict) and part in value:
                found = value[part]
                nxt.extend(found if isinstance(found, list) else [found])
        current = nxt
    if isinstance(node, dict) and current and all(isinstance(v, dict) and "@value" in v for v in current):
        current = [v["@value"] for v in current]
    if not current:
        return None
    return current[0] if len(current) == 1 else current
