"""Feeds (RSS 2.0, RSS 1.0/RDF, Atom, JSON Feed) as entity sets: one entity per entry, keyed by its
id/guid (else its link), with its ``title``, ``link``, ``updated`` and ``published`` as fields.

XML is read by lxml with a parser that resolves no entities, loads no DTD and touches no network,
so an entity bomb stays one unexpanded reference and an external entity is never fetched. lxml,
not feedparser: it reads a feed of 10,000 entries ~15 times faster (~0.1 s against 1.5-2 s here:
docs/watchlist.md, "Feeds"), on the crawl's thread, and it refuses broken XML instead of guessing at
it: a half-read feed would report its missing entries as removed.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from hashlib import blake2b
from typing import Any
from urllib.parse import urljoin

from lxml import etree

from ..core.urls import canonical_url

__all__ = ["FEED_CONTENT_TYPES", "FEED_KINDS", "FeedError", "is_feed", "parse_feed"]

#: content types that say "feed" on their own
FEED_CONTENT_TYPES = frozenset({"application/rss+xml", "application/atom+xml", "application/feed+json",
                                "application/rdf+xml"})
#: content types whose body is sniffed (None: no Content-Type at all)
_XML_TYPES = frozenset({"text/xml", "application/xml"})
_JSON_TYPES = frozenset({"application/json"})
#: how the entry fields compare: dates as instants (RFC 822 and RFC 3339 spellings of one time are
#: equal), titles and links as written
FEED_KINDS = {"title": "text", "link": "text", "updated": "date", "published": "date"}

_ATOM = "{http://www.w3.org/2005/Atom}"
_RDF = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}"
_RSS1 = ("{http://purl.org/rss/1.0/}", "{http://my.netscape.com/rdf/simple/0.9/}")
_DC_DATE = "{http://purl.org/dc/elements/1.1/}date"
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
#: how much of the body the sniff reads: a feed's root element comes after at most a declaration,
#: a few comments and a stylesheet instruction
_SNIFF_BYTES = 4096
_PROLOG = re.compile(rb"\s*(?:<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>\[]*(?:\[.*?\])?\s*>)", re.DOTALL)
_ROOT = re.compile(rb"\s*<([A-Za-z_][\w.:-]*)([^>]*)")
_JSON_FEED = re.compile(rb'^\{.*?"version"\s*:\s*"https?://jsonfeed\.org/version/', re.DOTALL)
_JSON_FEED_VERSION = re.compile(r"^https?://jsonfeed\.org/version/")


class FeedError(ValueError):
    """A body that is not a feed we can read; the message starts with its class (``unsupported:``)."""


def _media_type(content_type: str | None) -> str | None:
    if content_type is None:
        return None
    return content_type.split(";", 1)[0].strip().lower() or None


def _unwrapped(body: bytes) -> bytes:
    """*body* after a UTF-8 byte order mark and leading whitespace (a PHP feed's stray newline
    before ``<?xml`` is a fatal error to an XML parser)."""
    if body.startswith(_BOMS[0]):
        body = body[3:]
    return body.lstrip()


def _sniff_xml(head: bytes) -> bool:
    if head.startswith(_BOMS[1:]):  # UTF-16: rare for a feed; decoded for the sniff only
        head = head.decode("utf-16", "replace").encode("utf-8", "replace")
    head = _unwrapped(head)
    pos = 0
    while match := _PROLOG.match(head, pos):
        if match.end() == pos:
            break
        pos = match.end()
    root = _ROOT.match(head, pos)
    if root is None:
        return False
    name, attrs = root.group(1).split(b":")[-1], root.group(2)
    if name == b"rss":
        return True
    if name == b"feed":
        return b"http://www.w3.org/2005/Atom" in attrs
    if name == b"RDF":
        return b"purl.org/rss/1.0/" in attrs or b"my.netscape.com/rdf/simple/0.9/" in attrs
    return False


def is_feed(content_type: str | None, body: bytes) -> bool:
    """Whether *body* is a feed: its content type says so, or a generic XML or JSON type (or none)
    whose root element is ``rss``, an Atom ``feed`` or an RSS ``rdf:RDF``, or whose JSON has a
    JSON Feed ``version``.

    >>> is_feed("application/rss+xml; charset=utf-8", b"")
    True
    >>> is_feed("text/xml", b'\\xef\\xbb\\xbf\\n<?xml version="1.0"?><rss version="2.0"/>')
    True
    >>> is_feed("application/json", b'{"version": "https://jsonfeed.org/version/1.1", "items": []}')
    True
    >>> is_feed("application/xml", b"<sitemap/>"), is_feed("text/html", b"<rss/>")
    (False, False)
    """
    media = _media_type(content_type)
    if media in FEED_CONTENT_TYPES:
        return True
    head = body[:_SNIFF_BYTES]
    if media is None or media in _JSON_TYPES:
        if _JSON_FEED.match(_unwrapped(head)):
            return True
    if media is None or media in _XML_TYPES:
        return _sniff_xml(head)
    return False


def _parser() -> etree.XMLParser:
    # No entity is substituted (an entity bomb stays one reference), no DTD is loaded, nothing is
    # fetched; huge_tree stays off (libxml2's limits on depth and text node size hold).
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
                           huge_tree=False, remove_comments=True, remove_pis=True)


def _text(element: etree._Element | None) -> str | None:
    if element is None:
        return None
    # the common case, one text node, without walking the subtree
    raw = (element.text or "") if len(element) == 0 else "".join(element.itertext(with_tail=True))
    text = " ".join(raw.split())
    return text or None


def _children(entry: etree._Element) -> dict[Any, etree._Element]:
    """The first child element of each tag: one pass over an entry instead of a find() per field."""
    found: dict[Any, etree._Element] = {}
    for child in entry:
        found.setdefault(child.tag, child)
    return found


def _first_text(children: dict[Any, etree._Element], *tags: str) -> str | None:
    for tag in tags:
        text = _text(children.get(tag))
        if text is not None:
            return text
    return None


def _fields(**given: str | None) -> dict[str, str]:
    return {name: value for name, value in given.items() if value is not None}


Entry = tuple[str | None, dict[str, str]]


def _rss2_entries(root: etree._Element, url: str) -> Iterator[Entry]:
    channel = root.find("channel")
    for item in (channel if channel is not None else root).iterfind("item"):
        children = _children(item)
        guid_el = children.get("guid")
        guid = _text(guid_el)
        link = _first_text(children, "link")
        if link is None and guid and guid_el is not None and guid_el.get("isPermaLink", "true") != "false" \
                and "://" in guid:
            link = guid  # RSS 2.0: a guid is the item's permalink unless it says it is not
        yield guid or link, _fields(title=_first_text(children, "title"), link=_absolute(url, link),
                                    updated=_first_text(children, f"{_ATOM}updated", _DC_DATE),
                                    published=_first_text(children, "pubDate"))


def _rss1_entries(root: etree._Element, url: str) -> Iterator[Entry]:
    for ns in _RSS1:
        for item in root.iterfind(f"{ns}item"):
            children = _children(item)
            link = _first_text(children, f"{ns}link")
            # dc:date is the item's date; feedparser calls it "updated", and so do we
            yield item.get(f"{_RDF}about") or link, _fields(title=_first_text(children, f"{ns}title"),
                                                            link=_absolute(url, link),
                                                            updated=_first_text(children, _DC_DATE))


def _atom_link(entry: etree._Element, url: str) -> str | None:
    for link in entry.iterfind(f"{_ATOM}link"):
        href = link.get("href")
        if link.get("rel", "alternate") == "alternate" and href:
            # xml:base (lxml's .base) matters only to a relative link, and costs a walk up the tree
            return _absolute(url, href) if "://" in href else _absolute(link.base or url, href)
    return None


def _atom_entries(root: etree._Element, url: str) -> Iterator[Entry]:
    for entry in root.iterfind(f"{_ATOM}entry"):
        children = _children(entry)
        link = _atom_link(entry, url)
        yield _first_text(children, f"{_ATOM}id") or link, _fields(
            title=_first_text(children, f"{_ATOM}title"), link=link,
            updated=_first_text(children, f"{_ATOM}updated"), published=_first_text(children, f"{_ATOM}published"))


def _absolute(base: str, link: str | None) -> str | None:
    if not link:
        return None
    if link.startswith(("https://", "http://")):
        return link.strip()
    try:
        return urljoin(base, link.strip())
    except ValueError:  # "http://[oops": kept as written rather than sinking the feed
        return link.strip()


_XML_READERS: dict[str, Callable[[etree._Element, str], Iterator[Entry]]] = {
    "rss": _rss2_entries, f"{_RDF}RDF": _rss1_entries, f"{_ATOM}feed": _atom_entries}


def _xml_entries(body: bytes, url: str) -> list[Entry]:
    if body.startswith(_BOMS[0]) or not body.startswith(_BOMS[1:]):
        body = _unwrapped(body)
    if not body:
        raise FeedError("empty: the response body is empty")
    try:
        root = etree.fromstring(body, _parser(), base_url=url)
    except etree.XMLSyntaxError as exc:
        raise FeedError(f"unsupported: the feed is not well-formed XML ({exc})") from None
    reader = _XML_READERS.get(root.tag) if isinstance(root.tag, str) else None
    if reader is None:
        raise FeedError(f"unsupported: the XML is not RSS, RDF or Atom (its root element is {root.tag!r})")
    return list(reader(root, url))


def _json_entries(body: bytes, url: str) -> list[Entry]:
    try:
        data = json.loads(body.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise FeedError(f"unsupported: the JSON Feed is not JSON ({exc})") from None
    except RecursionError:  # nested deeper than the interpreter's stack: no feed is
        raise FeedError("unsupported: the JSON Feed is nested too deeply to read") from None
    if not isinstance(data, dict) or not _JSON_FEED_VERSION.match(str(data.get("version", ""))):
        raise FeedError("unsupported: the JSON is not a JSON Feed (no https://jsonfeed.org/version/ version)")
    items = data.get("items")
    if not isinstance(items, list):
        raise FeedError("unsupported: the JSON Feed has no items array")
    entries = []
    for item in items:
        if not isinstance(item, dict):
            continue
        link = _absolute(url, _json_text(item.get("url")))
        key = _json_text(item.get("id")) or link
        entries.append((key, _fields(title=_json_text(item.get("title")), link=link,
                                     updated=_json_text(item.get("date_modified")),
                                     published=_json_text(item.get("date_published")))))
    return entries


def _json_text(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    text = " ".join(str(value).split())
    return text or None


def _is_json(content_type: str | None, body: bytes) -> bool:
    media = _media_type(content_type)
    if media == "application/feed+json" or media in _JSON_TYPES:
        return True
    return _unwrapped(body[:_SNIFF_BYTES]).startswith(b"{")


def _identity(key: str) -> str:
    """*key* as the entity set will know it: a URL canonicalised (no fragment, sorted query, no
    tracking parameters). Only a URL with a query or a fragment can differ much from that, and
    canonicalising costs ~10 us: the others are taken as they are."""
    if "://" in key and ("#" in key or "?" in key):
        try:
            return canonical_url(key)
        except ValueError:
            return key
    return key


def _disambiguated(entries: list[Entry]) -> list[dict[str, Any]]:
    """Entity dicts; entries whose ids are one entity key (the same guid, or URLs that differ only
    by their fragment, as WordPress's comment guids ``…/post/#comment-7``) are each keyed by the id
    and their link and title, so a new entry that shares an id is still seen as new. Exact
    repeats keep one key: the comparison counts them as duplicates."""
    identities = [_identity(key) if key else None for key, _ in entries]
    counts = Counter(identity for identity in identities if identity)
    out = []
    for (key, fields), identity in zip(entries, identities, strict=True):
        if identity and counts[identity] > 1:
            digest = blake2b(repr((key, fields.get("link"), fields.get("title"))).encode(), digest_size=8)
            key = f"dup:{digest.hexdigest()}"
        out.append({"key": key, "fields": fields})
    return out


def parse_feed(body: bytes, *, url: str, content_type: str | None) -> list[dict[str, Any]]:
    """The entries of the feed in *body* as entity dicts (``{"key": ..., "fields": {...}}``, in
    feed order) for :func:`changewatch.core.entities.build_entities`. Raises :class:`FeedError`
    for a body that is not a feed (HTML served as XML, broken XML, an unknown root element)."""
    if _is_json(content_type, body):
        return _disambiguated(_json_entries(body, url))
    return _disambiguated(_xml_entries(body, url))
