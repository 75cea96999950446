"""Whether a sitemap's bytes can be trusted as the whole list of a site's pages (pure: lxml only).

Scrapy's ``Sitemap`` parses in lxml's recover mode: a file cut off halfway reads as the half it
holds, and a page set judged from it would report the other half ``removed``. So a sitemap is
read only once :func:`check_sitemap` has seen it whole, in a streaming parse that keeps no tree
(its memory does not grow with the file):

- empty, or an HTML page (a login wall, a soft 404, a captcha): ``not a sitemap``;
- entity declarations (``<!ENTITY``: an XML bomb; no sitemap needs one): refused, never expanded;
- not well-formed to its last byte (truncated, a broken tag): ``truncated``;
- a root element other than ``urlset`` or ``sitemapindex``: ``not a sitemap``;
- more than :data:`MAX_SITEMAP_BYTES` (the protocol's 50 MB, uncompressed): ``too large``.
"""

from __future__ import annotations

import io
import re

from lxml import etree

__all__ = ["MAX_CHILD_SITEMAPS", "MAX_INDEX_DEPTH", "MAX_SITEMAP_BYTES", "SitemapError", "check_sitemap",
           "sitemap_root"]

#: the sitemap protocol's limit on one file, uncompressed (sitemaps.org)
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
#: child sitemaps read of one site's indexes (the protocol allows 50,000 per index: a bound, said once)
MAX_CHILD_SITEMAPS = 1000
#: an index listing indexes: at most this many levels below the sitemap named in the watchlist
MAX_INDEX_DEPTH = 2

_ROOTS = ("urlset", "sitemapindex")
_HTML_START = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b",
                         re.IGNORECASE | re.DOTALL)


class SitemapError(ValueError):
    """A sitemap that cannot be trusted as a whole list; its message starts with the error's
    class (``empty:``, ``not a sitemap:``, ``refused:``, ``truncated:``, ``too large:``)."""


def sitemap_root(body: bytes) -> str | None:
    """The local name of the root element of a whole, well-formed *body* (None: it is not one)."""
    try:
        return _root(body)
    except SitemapError:
        return None


def check_sitemap(body: bytes, *, max_bytes: int = MAX_SITEMAP_BYTES) -> str:
    """The root element's name (``urlset`` or ``sitemapindex``) of a sitemap *body* (already
    decompressed) that is whole; else :class:`SitemapError` saying why not.

    >>> check_sitemap(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://a.example/</loc></url></urlset>')
    'urlset'
    >>> check_sitemap(b'<urlset><url><loc>https://a.example/</loc></url><url><lo')
    Traceback (most recent call last):
    ...
    changewatch.core.sitemaps.SitemapError: truncated: the sitemap is not whole XML (...)
    """
    if len(body) > max_bytes:
        raise SitemapError(f"too large: the sitemap is {len(body):,} bytes uncompressed, over the "
                           f"protocol's {max_bytes:,}")
    if not body.strip():
        raise SitemapError("empty: the sitemap is empty")
    if _HTML_START.match(body[:4096]):
        raise SitemapError("not a sitemap: an HTML page was served")
    if b"<!ENTITY" in body:
        raise SitemapError("refused: the sitemap declares XML entities (an XML bomb?); they are never expanded")
    root = _root(body)
    if root == "html":
        raise SitemapError("not a sitemap: an HTML page was served")
    if root not in _ROOTS:
        raise SitemapError(f"not a sitemap: its root element is <{root[:40]}>, not <urlset> or <sitemapindex>")
    return root


def _root(body: bytes) -> str:
    """The root's local name, after a strict streaming parse of all of *body*."""
    root: str | None = None
    try:
        events = etree.iterparse(io.BytesIO(body), events=("start",), resolve_entities=False, no_network=True,
                                 huge_tree=False, load_dtd=False, recover=False, remove_comments=True)
        for _, element in events:
            if root is None:
                root = etree.QName(element).localname.lower()
            # nothing is kept: the tree under the root is cleared as it is read
            if element.getparent() is not None and element.getparent().getparent() is None:
                previous = element.getprevious()
                while previous is not None:
                    element.getparent().remove(previous)
                    previous = element.getprevious()
    except etree.XMLSyntaxError as exc:
        raise SitemapError(f"truncated: the sitemap is not whole XML ({_short(str(exc))})") from None
    if root is None:
        raise SitemapError("truncated: the sitemap has no root element")
    return root


def _short(message: str) -> str:
    return message if len(message) <= 120 else message[:117] + "..."
