"""Extraction of tracked values from a page: CSS/XPath selectors (structured data: ``structured``)."""

from __future__ import annotations

import re

from lxml import etree
from parsel import Selector

from ..core.selectors import select
from .structured import find_nodes, resolve_path

__all__ = ["binary_body", "find_nodes", "resolve_path", "select_value", "value_of"]

_WS = re.compile(r"\s+")


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
