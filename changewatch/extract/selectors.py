"""Extraction of tracked values from a page: CSS/XPath selectors (structured data: ``structured``)."""

from __future__ import annotations

import re

from lxml import etree
from parsel import Selector, SelectorList
from parsel.csstranslator import HTMLTranslator

from ..core.reprs import short_repr
from .structured import find_nodes, resolve_path

__all__ = ["SelectorError", "binary_body", "check_selector", "find_nodes", "is_xpath", "resolve_path", "select",
           "select_value", "value_of"]

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


def value_of(match: Selector) -> str:
    """A text or attribute node as is, an element as its visible text (whitespace collapsed)."""
    if isinstance(match.root, etree._Element):
        text = " ".join(match.xpath(".//text()[not(ancestor::script or ancestor::style)]").getall())
    else:
        text = str(match.get())
    return _WS.sub(" ", text).strip()


def select_value(sel: Selector, query: str) -> str | None:
    """First match of *query* (see :func:`value_of`); None when nothing matches."""
    matches = select(sel, query)
    return value_of(matches[0]) if matches else None


_BINARY_MAGIC = {b"%PDF": "PDF", b"\x89PNG": "PNG image", b"GIF8": "GIF image", b"\xff\xd8\xff": "JPEG image",
                 b"PK\x03\x04": "ZIP archive", b"\x1f\x8b": "gzip data", b"RIFF": "binary data",
                 b"\x00\x00\x01\x00": "binary data"}


def binary_body(body: bytes) -> str | None:
    """What kind of binary *body* is (None: it looks like text)."""
    head = body[:1024]
    for magic, kind in _BINARY_MAGIC.items():
        if head.startswith(magic):
            return kind
    if head.count(b"\x00") > len(head) // 8 and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "binary data (NUL bytes)"
    return None
