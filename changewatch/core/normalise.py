"""Visible-text extraction and normalisation.

``normalise`` turns an HTML page into the text a reader sees, one block-level element per line,
whitespace collapsed and volatile fragments (clock times, dates, relative times, tokens, long ids)
removed, so that two fetches of an unchanged page give the same string. Case and punctuation are
kept as the page wrote them: "SIMDJSON" is not "simdjson", and a diff shows the page's own words.
The patterns match in any case.

Two parsers, picked by measurement (docs/architecture.md, "Cost model"): a whole page is parsed
by lexbor (selectolax), an HTML5 parser that builds, strips and walks a 230 KB page's tree in
about a millisecond, three to four times faster than libxml2 (lxml) with the clean-up pass lxml
needs; a *region* is selected with lxml and cssselect, whose selector semantics the watchlists
were written against. A page nested too deeply for either (libxml2 truncates its tree; lexbor's
tree building is quadratic in the nesting depth) is read by a streaming tokenizer instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from html.parser import HTMLParser as _Tokenizer
from typing import TYPE_CHECKING

from selectolax.lexbor import LexborHTMLParser
from w3lib.encoding import html_body_declared_encoding, html_to_unicode, read_bom, resolve_encoding

from . import charset
from .text_options import VERBATIM, TextOptions, include_lines, without_ignored_lines
from .volatile_languages import (
    DAY_FIRST,
    OTHER_LANGUAGES,
    OTHER_LANGUAGES_NEEDS,
    WEEKDAY_WORDS,
    name_starts,
    words_before_numbers,
)

# Worker processes read whole pages with lexbor: lxml (regions, include and ignore, pages nested
# too deeply for lexbor) and NumPy (the depth estimate of long pages) are imported where they are
# needed, not by every process that imports this module (~45 ms of each worker's start-up).
if TYPE_CHECKING:
    import numpy as np
    from lxml import etree

__all__ = ["RegionError", "VisibleText", "decode_page", "decode_page_counted", "escape_undecodable",
           "legacy_stable_text", "normalise", "normalise_text", "visible_text"]

# Elements whose content is never visible text.
_DROPPED = frozenset(
    {"script", "style", "noscript", "svg", "template", "head", "iframe", "object", "canvas", "math"}
)
# Elements that start a new line: the diff works on these blocks, not on one giant line.
_BLOCKS = frozenset(
    """address article aside blockquote body br caption dd details dialog div dl dt fieldset
    figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr html li main nav ol option p pre
    section summary table tbody td tfoot th thead title tr ul""".split()
)

_WS = re.compile(r"\s+")
_MONTHS = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_WEEKDAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# "sat", "sun", "wed", "mon" are words too: an abbreviation only goes in front of a date or time.
_WEEKDAY_ABBRS = r"(?:mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)"
# Zone abbreviations spelled out: "[a-z]{2,4}t" also took "most", "next", "first", "best"…
_ZONES = r"(?:utc|gmt|[ecmpa][sd]t|bst|jst|kst|hkt|sgt|msk|cet|cest|eet|eest|aest|aedt|acst|acdt|awst|nzst|nzdt)"
_ORD = r"(?:st|nd|rd|th)?"
def _without_leading_boundary(pattern: str) -> str:
    # Not for the key=value pattern: "[a-z_]*token" without its boundary retries inside every word.
    return pattern if pattern.startswith(r"\b(?:[a-z_]*") else pattern.removeprefix(r"\b")


# Order matters: the longest, most specific patterns run first. They run over the whole text
# at once (lines joined by newlines, each line's whitespace already collapsed to single spaces),
# so "\s" in them is compiled as a plain space: a fragment never spans two lines.
#
# A leading "\b" stops Python's regex engine from skipping ahead to the pattern's possible first
# characters, which makes every scan several times slower: it is compiled without it and
# _at_word_start() checks the boundary for the few matches instead.
def _digit_first(pattern: str) -> str:
    # "\d" alone first lets the regex engine skip ahead to the next digit; "\d{1,2}" first does not
    # (a tenth to a third faster each, the same matches).
    for repeat, same in ((r"\d{1,2}", r"\d\d?"), (r"\d{4}", r"\d\d{3}"), (r"\d+", r"\d\d*")):
        if pattern.startswith(repeat):
            return same + pattern.removeprefix(repeat)
    return pattern


_ENGLISH_VOLATILE = (
    # key=value secrets and session ids in visible text or echoed URLs
    r"\b(?:[a-z_]*token|csrf[a-z_]*|nonce|session(?:_?id)?|sid|jsessionid|phpsessid|sig|signature|auth)"
    r"\s*[=:]\s*[^\s&\"'<>]+",
    # UUIDs, long hex ids, base64-ish blobs (must contain a digit to spare long words)
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
    r"\b[0-9a-f]{16,}\b",
    # ISO 8601 timestamps and dates
    r"\b\d{4}-\d{2}-\d{2}(?:[t ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?\b",
    # numeric dates 30/11/2026, 11.30.26
    r"\b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\b",
    # written dates: "mon, 30 nov 2026", "november 30th, 2026", "30 november", "nov 30"
    rf"\b{_WEEKDAYS}\b\.?,?",
    rf"\b{_WEEKDAY_ABBRS}\b\.?,?(?=\s*(?:\d|{_MONTHS}\b))",
    rf"\b\d{{1,2}}{_ORD}\s+(?:of\s+)?{_MONTHS}\b\.?(?:,?\s+\d{{4}})?",
    rf"\b{_MONTHS}\b\.?\s+\d{{1,2}}{_ORD}\b(?:,?\s+\d{{4}})?",
    rf"\b{_MONTHS}\b\.?\s+\d{{4}}\b",
    # clock times with optional seconds, am/pm and zone
    rf"\b\d{{1,2}}:\d{{2}}(?::\d{{2}}(?:\.\d+)?)?(?:\s*(?:am|pm|a\.m\.|p\.m\.))?(?:\s*{_ZONES}\b)?",
    r"\b\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)(?!\w)",
    # relative times
    r"\b(?:\d+|an?|one|a few|several)\s+(?:sec(?:ond)?|min(?:ute)?|hour|hr|day|week|month|year)s?\s+ago\b",
    r"\b(?:just now|moments? ago|yesterday|today|tomorrow)\b",
    r"\b\d+\s*(?:s|m|h|d|w|mo|y)\s+ago\b",
)


def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(_digit_first(_without_leading_boundary(pattern.replace(r"[^\s", r"[^ \n").replace(r"\s", " "))))


_MONTH_STEMS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# What every match of each pattern above contains, one of (in order): a pattern none of whose
# words is in a page's candidate lines is not run over them (the tests check that each removed
# fragment contains its pattern's words). () for a pattern without such words.
_ENGLISH_NEEDS: list[tuple[str, ...] | frozenset[str]] = [
    ("token", "csrf", "nonce", "session", "sid", "sig", "auth"), ("-",), (), ("-",), ("/", ".", "-"), ("day",),
    ("mon", "tue", "wed", "thu", "fri", "sat", "sun"), _MONTH_STEMS, _MONTH_STEMS, _MONTH_STEMS,
    (":",), ("am", "pm", "a.m", "p.m"), ("ago",), ("now", "ago", "day", "tomorrow"), ("ago",),
]
# The patterns are written in lower case and run over a lower-cased copy of the text (a flag to
# ignore case made them three to ten times slower); what they match is removed from the text as
# written, at the same places (_remove_volatile). The other languages' weekdays and dates that
# start with the day go before the English written dates, which would otherwise take "November
# 2026" out of "30. November 2026"; the rest after them ("November 2026" is Dutch too, and would
# leave "30th" of "30th November 2026").
_ENGLISH = [_compiled(p) for p in _ENGLISH_VOLATILE]
_OTHER = [_compiled(p) for p in OTHER_LANGUAGES]
_VOLATILE = _ENGLISH[:5] + _OTHER[:DAY_FIRST] + _ENGLISH[5:] + _OTHER[DAY_FIRST:]
_NEEDS = (_ENGLISH_NEEDS[:5] + list(OTHER_LANGUAGES_NEEDS[:DAY_FIRST]) + _ENGLISH_NEEDS[5:]
          + list(OTHER_LANGUAGES_NEEDS[DAY_FIRST:]))
# What NORMALISER_VERSION 1 ran, over case-folded text: see legacy_stable_text.
_LEGACY_VOLATILE, _LEGACY_NEEDS = _ENGLISH, _ENGLISH_NEEDS


class RegionError(ValueError):
    """The region is not a valid CSS selector."""


class VisibleText:
    """Text of a page as lines: ``raw`` is collapsed (case and punctuation as written); ``stable``
    has volatile fragments removed too (and is sorted when *sort_lines*). ``stable`` is a function
    of ``raw`` and *sort_lines* alone, computed on first use: a page whose raw text is the one
    already stored needs no more than ``raw``."""

    __slots__ = ("_stable", "raw", "sort_lines", "undecodable")

    def __init__(self, raw: str, stable: str | None = None, *, sort_lines: bool = False, undecodable: int = 0):
        self.raw = raw
        self.sort_lines = sort_lines
        self._stable = stable
        #: Bytes of the page that did not decode in its charset (see core/charset.py); counted
        #: only when its visible text showed some.
        self.undecodable = undecodable

    @property
    def stable(self) -> str:
        if self._stable is None:
            raw = self.raw
            if VERBATIM in raw:  # include: URL lines, compared as written (core/text_options.py)
                verbatim = [line for line in raw.split("\n") if line.startswith(VERBATIM)]
                text = "\n".join(line for line in raw.split("\n") if not line.startswith(VERBATIM))
                lines = _stable_text(text) if text else []
                lines += [line.removeprefix(VERBATIM) for line in verbatim]
            else:
                lines = _stable_text(raw)
            if self.sort_lines:
                lines.sort()
            self._stable = "\n".join(lines)
        return self._stable

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, VisibleText):
            return NotImplemented
        return (self.raw, self.stable) == (other.raw, other.stable)

    def __hash__(self) -> int:
        return hash(self.raw)

    def __repr__(self) -> str:
        return f"VisibleText(raw={self.raw!r}, stable={self.stable!r})"


@lru_cache(maxsize=256)
def _region_xpath(region: str) -> etree.XPath:
    from lxml import etree
    from parsel.csstranslator import HTMLTranslator

    try:
        return etree.XPath(HTMLTranslator().css_to_xpath(region))
    except Exception as exc:  # cssselect raises several unrelated types
        raise RegionError(f"invalid region selector {region!r}: {exc}") from exc


def check_region(region: str) -> None:
    """Raise :class:`RegionError` when *region* is not a valid CSS selector."""
    _region_xpath(region)


def _undeclared_encoding(body: bytes) -> str:
    # Nothing declared: UTF-8 when the bytes are valid UTF-8, else windows-1252 (a superset of
    # latin-1), as browsers in Western locales guess; a blanket UTF-8 turned every accented
    # letter into the same U+FFFD, so changes to them went unseen. (Scrapy's response.text asks
    # charset_normalizer instead, which reads a short French windows-1252 page as cp1250:
    # "crème" became "crčme".)
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return "cp1252"
    return "utf-8"


def _scrapy_undeclared_encoding(body: bytes) -> str | None:
    """Nothing declared, as Scrapy's TextResponse infers it: ASCII, UTF-8, then charset_normalizer's
    best guess (None: w3lib's default, windows-1252). What a page compared by its text was read
    with before it crossed to the worker as bytes: the same text, so no baseline changes."""
    for candidate in ("ascii", "utf-8"):
        try:
            body.decode(candidate)
        except UnicodeError:
            continue
        return resolve_encoding(candidate)
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # a Scrapy dependency: only without Scrapy
        return "cp1252"
    match = from_bytes(body).best()
    return resolve_encoding(match.encoding) if match else None


def _to_unicode(html: str | bytes, encoding: str | None = None, like_scrapy: bool = False) -> str:
    """*html* decoded: a BOM first, then *encoding* (the response's, or its Content-Type's
    charset), then the page's own declaration (a <meta> in its first 4 KB), then UTF-8 if the
    bytes are valid UTF-8, else windows-1252 (see _undeclared_encoding), or *like_scrapy* what
    Scrapy would infer (_scrapy_undeclared_encoding). Bytes that do not decode are each a
    character of their own (core/charset.py)."""
    return _decode(html, encoding, like_scrapy)[0]


def _decode(html: str | bytes, encoding: str | None = None, like_scrapy: bool = False) -> tuple[str, int]:
    """:func:`_to_unicode`, and how many bytes did not decode."""
    if isinstance(html, bytes):
        infer = _scrapy_undeclared_encoding if like_scrapy else _undeclared_encoding
        used, text = html_to_unicode(f"charset={encoding}" if encoding else None, html, auto_detect_fun=infer,
                                     default_encoding="cp1252" if like_scrapy else "utf8")
        return escape_undecodable(html, used, text)
    return html, 0


def escape_undecodable(body: bytes, encoding: str, text: str) -> tuple[str, int]:
    """*text*, which w3lib decoded from *body* as *encoding* with U+FFFD for what did not decode,
    with each such byte a character of its own instead, and how many there were. A text without
    U+FFFD (every valid page but those that write it) is returned as it is, not decoded again."""
    if "\ufffd" not in text:
        return text, 0
    bom_encoding, bom = read_bom(body)  # a BOM wins over any declaration, as in w3lib
    if bom_encoding and bom:
        return charset.decode(body[len(bom):], bom_encoding)
    # w3lib reads a UTF-16 or UTF-32 without a BOM as big-endian (Python's codec: the machine's order)
    return charset.decode(body, encoding + "-be" if encoding in ("utf-16", "utf-32") else encoding)


def decode_page(html: str | bytes, encoding: str | None = None, *, like_scrapy: bool = False) -> str:
    """*html* as text, decoded as :func:`visible_text` decodes it (see there for *encoding*)."""
    return _to_unicode(html, encoding, like_scrapy)


def decode_page_counted(html: str | bytes, encoding: str | None = None, *,
                        like_scrapy: bool = False) -> tuple[str, int]:
    """:func:`decode_page`, and how many bytes did not decode (each one character of its own)."""
    return _decode(html, encoding, like_scrapy)


_UTF8_BOM = b"\xef\xbb\xbf"


def _utf8_markup(html: str | bytes, encoding: str | None, like_scrapy: bool = False) -> tuple[bytes, int | None]:
    """*html* as the UTF-8 bytes lexbor reads, decoded as :func:`_to_unicode` decodes it, and how
    many bytes did not decode (None: not known, the bytes are passed as they are and lexbor reads
    what is not UTF-8 as U+FFFD). A UTF-8 body (most of the web) is passed as it is: no
    decoding, no copy."""
    if isinstance(html, bytes):
        bom, _ = read_bom(html)
        declared = bom or encoding or html_body_declared_encoding(html)
        if declared is None:
            if html.isascii():
                declared = "utf-8"
            elif like_scrapy:
                declared = _scrapy_undeclared_encoding(html) or "cp1252"
            else:
                declared = _undeclared_encoding(html)
        if resolve_encoding(declared) == "utf-8":
            return (html[3:] if html.startswith(_UTF8_BOM) else html), None
        text, bad = _decode(html, declared, like_scrapy)
        return text.encode("utf-8", "replace"), bad
    return html.encode("utf-8", "replace"), 0


def _lexbor_visible_text(html: str | bytes, encoding: str | None, like_scrapy: bool,
                         sort_lines: bool) -> VisibleText | bytes:
    """The visible text of a whole page by lexbor, or the UTF-8 markup when the page is nested
    too deeply for it. Bytes that are not UTF-8 are read again, each as a character of its own,
    only when the text shows the U+FFFD lexbor made of them: a valid page is decoded once."""
    utf8, bad = _utf8_markup(html, encoding, like_scrapy)
    if _maybe_deep(utf8):
        return utf8  # read by lxml, which decodes (and counts) the bytes itself
    visible = _split_collapsed(_lexbor_collapsed(utf8), _LEXBOR_MARK, sort_lines)
    if bad is None:
        if "\ufffd" not in visible.raw:
            return visible
        text, bad = charset.decode(utf8, "utf-8")
        if not bad:
            return visible  # the page writes U+FFFD itself
        visible = _split_collapsed(_lexbor_collapsed(text.encode("utf-8")), _LEXBOR_MARK, sort_lines)
    return _counted(visible) if bad else visible


def _counted(visible: VisibleText) -> VisibleText:
    visible.undecodable = charset.count_undecodable(visible.raw)
    return visible


# Characters that are never visible and that lxml refuses in text it is given (C0 controls, lone
# surrogates, U+FFFE/U+FFFF), and our own block marker.
_INVISIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ue000\ufffe\uffff]")
_BLOCK_MARK = "\ue000"


def _clean_markup(html: str) -> str:
    return _INVISIBLE.sub("", html.encode("utf-8", "replace").decode("utf-8"))


def _parse(html: str) -> tuple[etree._Element | None, bool]:
    """Parse *html*; the flag says libxml2 hit a resource limit (nesting deeper than it allows)
    and the tree is truncated."""
    from lxml import etree
    from lxml import html as lxml_html

    if not html.strip():
        return None, False
    parser = lxml_html.HTMLParser(remove_comments=True, remove_pis=True, huge_tree=True)
    try:
        tree = lxml_html.document_fromstring(html, parser=parser)
    except (etree.ParserError, ValueError):
        return None, False
    truncated = any(e.type_name == "ERR_RESOURCE_LIMIT" for e in parser.error_log)
    return tree, truncated


class _TokenizerText(_Tokenizer):
    """Streaming text extraction for documents nested too deeply for libxml2's tree."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self._parts: list[str] = []
        self._skip: list[str] = []

    def _flush(self) -> None:
        if self._parts:
            self.lines.append("".join(self._parts))
            self._parts.clear()

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag in _DROPPED:
            self._skip.append(tag)
        elif tag in _BLOCKS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if self._skip and self._skip[-1] == tag:
            self._skip.pop()
        elif tag in _BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self._parts.append(data)

    def parse_marked_section(self, i: int, report: bool = True) -> int:
        # html.parser raises AssertionError on "<![foo": browsers treat it as a bogus comment.
        try:
            return super().parse_marked_section(i, report)
        except AssertionError:
            end = self.rawdata.find(">", i + 3)
            return -1 if end < 0 else end + 1


def _tokenizer_lines(html: str) -> list[str]:
    extractor = _TokenizerText()
    extractor.feed(html)
    extractor.close()
    extractor._flush()
    return extractor.lines


def _text_lines(roots: list[etree._Element]) -> list[str]:
    """Text of *roots* split at block elements. Iterative, so deep nesting cannot overflow."""
    from lxml import etree

    lines: list[str] = []
    parts: list[str] = []

    def flush() -> None:
        if parts:
            lines.append("".join(parts))
            parts.clear()

    for root in roots:
        skip_depth = 0
        for event, el in etree.iterwalk(root, events=("start", "end")):
            tag = el.tag if isinstance(el.tag, str) else ""
            tag = tag.rsplit("}", 1)[-1].lower()
            if event == "start":
                if skip_depth or tag in _DROPPED or not tag:
                    skip_depth += 1
                    continue
                if tag in _BLOCKS:
                    flush()
                if el.text:
                    parts.append(el.text)
            else:
                if skip_depth:
                    skip_depth -= 1
                elif tag in _BLOCKS:
                    flush()
                if el.tail and el is not root and not skip_depth:
                    parts.append(el.tail)
        flush()
    return lines


def _marked_text_lines(roots: list[etree._Element]) -> list[str]:
    """Same lines as :func:`_text_lines`, with the work done in C: drop invisible elements, mark
    where each block starts and ends, serialise as text, split at the marks. Mutates the tree
    (each page's tree is parsed for this one use); regions are selected before anything is dropped,
    so positional selectors see the page as served."""
    from lxml import etree

    lines: list[str] = []
    for root in roots:
        etree.strip_elements(root, *_DROPPED, with_tail=False)
        if not isinstance(root.tag, str) or root.tag in _DROPPED:
            continue
        for el in root.iter(*_BLOCKS):
            el.text = _BLOCK_MARK + el.text if el.text else _BLOCK_MARK
            if el is not root:
                el.tail = _BLOCK_MARK + el.tail if el.tail else _BLOCK_MARK
        lines.extend(etree.tostring(root, method="text", encoding=str, with_tail=False).split(_BLOCK_MARK))
    return lines


# The line mark of the lexbor walk: a NUL is never text in an HTML5 tree (the parser drops or
# replaces every NUL of the page), so the mark cannot collide with the page's own characters.
_LEXBOR_MARK = "\x00"
_LEXBOR_DROPPED = tuple(sorted(_DROPPED))
# "html" and "title" are left out: the title lives in the dropped head, and a mark next to
# <html> would be text before <head> (which the HTML5 parser moves into the body).
_LEXBOR_BLOCKS = tuple(sorted(_BLOCKS - {"html", "title"}))
# Nesting depth past which lexbor is not used: its tree building scans the stack of open
# elements for each block start tag, quadratic in the depth (100,000 nested divs take 25 s;
# 10,000 a quarter of a second). The depth is estimated from the tags alone (_maybe_deep): the
# corpus's deepest page comes to 400.
LEXBOR_MAX_DEPTH = 4000
# Void elements, by their first three letters (a space for "br"/"hr" and a letter past them):
# they never nest.
_VOID_STEMS = ("br", "hr", "img", "inp", "met", "lin", "sou", "wbr", "are", "bas", "emb", "tra", "par")
_VISIBLE_IN_TEXT = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f\ue000\ufffe\uffff]")
# Of those, the ones str.split() takes for whitespace (which a collapse would turn into a space
# where removing them joins their neighbours)
_SPLIT_INVISIBLE = "\x0b\x0c\x1c\x1d\x1e\x1f"


def _letters(codes: np.ndarray) -> np.ndarray:
    """Where *codes* (bytes as a NumPy array) are ASCII letters."""
    return (codes | 0x20) - 0x61 < 26  # a-z, A-Z (unsigned: below "a" wraps past 26)


def _maybe_deep(markup: bytes) -> bool:
    """Whether the tags may nest deeper than LEXBOR_MAX_DEPTH, from the tags alone, with NumPy
    (~0.2 ms for 230 KB): the running count of start tags ("<" and a letter, void elements and
    self-closed "/>" tags aside) less end tags ("</"). An overestimate at worst (an unclosed
    <p> or <li> counts as open): such a page takes the slower, exact way."""
    if len(markup) < 3 * LEXBOR_MAX_DEPTH or markup.count(b"<") <= LEXBOR_MAX_DEPTH:
        return False
    import numpy as np

    data = np.frombuffer(markup, np.uint8)
    at = np.flatnonzero(data[:-1] == 0x3C)  # "<"
    if len(at) <= LEXBOR_MAX_DEPTH:
        return False
    padded = np.concatenate((data, np.zeros(4, np.uint8)))
    first, second, third = (padded[at + i] | 0x20 for i in (1, 2, 3))
    void = np.zeros(len(at), bool)
    for stem in _VOID_STEMS:
        codes = stem.encode()
        match = (first == codes[0]) & (second == codes[1])
        void |= match & (~_letters(third) if len(codes) == 2 else third == codes[2])
    opening = _letters(first) & ~void
    opens = at[opening]
    if len(opens) <= LEXBOR_MAX_DEPTH:
        return False
    # "/>" closes the tag it ends only when that tag was counted as opened (not "<br/>")
    self_closed = np.flatnonzero((data[:-1] == 0x2F) & (data[1:] == 0x3E))
    owner = np.searchsorted(at, self_closed, side="right") - 1
    self_closed = self_closed[(owner >= 0) & opening[np.maximum(owner, 0)]]
    closes = np.concatenate((at[first == 0x2F], self_closed))
    positions = np.concatenate((opens, closes))
    steps = np.concatenate((np.ones(len(opens), np.int32), np.full(len(closes), -1, np.int32)))
    return int(np.cumsum(steps[np.argsort(positions, kind="stable")]).max()) > LEXBOR_MAX_DEPTH


def _lexbor_lines(markup: bytes) -> list[str]:
    return _lexbor_text(markup).split(_LEXBOR_MARK)


def _lexbor_text(markup: bytes) -> str:
    """The page's text with a mark (NUL) where :func:`_marked_text_lines` splits it: parsed
    by lexbor, invisible elements dropped, a mark put before and after each block element, the
    text taken in one C call. The characters the lxml path removes from the markup before
    parsing (C0 controls that lxml refuses, U+E000, the non-characters U+FFFE/U+FFFF) are
    removed from the text: the same result."""
    text = _lexbor_marked(markup)
    return _VISIBLE_IN_TEXT.sub("", text) if _VISIBLE_IN_TEXT.search(text) else text


def _lexbor_marked(markup: bytes) -> str:
    """:func:`_lexbor_text` before the invisible characters are removed."""
    tree = lexbor_dropped(markup)
    return lexbor_marked_text(tree) if tree is not None else ""


def lexbor_dropped(markup: bytes) -> LexborHTMLParser | None:
    """*markup* parsed by lexbor, the invisible elements removed (None: no tree)."""
    tree = LexborHTMLParser(markup)
    if tree.root is None:
        return None
    # Elements found by tag name (lexbor's own tree walk, one per name) rather than by one CSS
    # selector list: the selector engine tests every element against each of the ~45 names,
    # twice the cost (bench: parse 4.5M instructions a corpus page, css() 4.3M, tags() 1.9M).
    # Removed, not destroyed: a dropped element inside another one is found no more once its
    # ancestor is gone.
    for tag in _LEXBOR_DROPPED:
        for node in tree.tags(tag):
            node.decompose(recursive=False)
    return tree


def lexbor_marked_text(tree: LexborHTMLParser) -> str:
    """The text of a tree :func:`lexbor_dropped` gave, a mark before and after each block."""
    for tag in _LEXBOR_BLOCKS:
        for node in tree.tags(tag):
            node.insert_before(_LEXBOR_MARK)
            node.insert_after(_LEXBOR_MARK)
    root = tree.root
    return root.text(deep=True) if root is not None else ""


def _lexbor_collapsed(markup: bytes) -> str:
    """:func:`_lexbor_text` collapsed as :func:`_finish_marked` collapses it."""
    return _collapse_marked(_lexbor_marked(markup))


def lexbor_visible_text(marked: str, sort_lines: bool) -> VisibleText:
    """The visible text of a page from its marked text (:func:`lexbor_marked_text`), as
    :func:`visible_text` reads a whole page of valid UTF-8 (passed to lexbor as it is)."""
    return _split_collapsed(_collapse_marked(marked), _LEXBOR_MARK, sort_lines)


def _collapse_marked(text: str) -> str:
    """A marked text collapsed. The invisible characters are looked for in the collapsed text (a
    tenth of the whole, mostly whitespace, on a real page) and removed from the whole text only
    when there are any: a collapse keeps every one of them but those str.split() takes for
    whitespace, which are looked for apart."""
    collapsed = " ".join(text.split())
    if _VISIBLE_IN_TEXT.search(collapsed) or any(c in text for c in _SPLIT_INVISIBLE):
        collapsed = " ".join(_VISIBLE_IN_TEXT.sub("", text).split())
    return collapsed


# Base64-ish blobs: 24+ characters with a digit and a letter. Hyphenated prose such as
# "covid-19-vaccination-programme" qualifies too, so _kept_blob() keeps a candidate unless one of its
# hyphen/underscore-separated segments mixes letters and digits (as encoded ids do).
_BLOB = re.compile(r"(?<![\w/+=-])(?=[a-z0-9+/_-]*\d)(?=[a-z0-9+/_-]*[a-z])[a-z0-9+/_-]{24,}={0,2}(?![\w/+=-])")
_SEGMENTS = re.compile(r"[-_]")
_MIXED = re.compile(r"(?=.*\d)(?=.*[a-z])")


def _kept_blob(match: re.Match[str]) -> bool:
    return not any(len(seg) >= 6 and _MIXED.match(seg) for seg in _SEGMENTS.split(match.group(0)))


_SPACES = re.compile(" {2,}")
_LINE_TRIM = " ,.;:|-·•"


def _not_at_word_start(match: re.Match[str]) -> bool:
    """Whether a match does not start at a word boundary (what the patterns' dropped leading \\b
    would have refused): such a match is kept. Chinese and Japanese write without spaces, so a
    date or time right after an ideograph or kana starts a word ("更新2026-11-30")."""
    start = match.start()
    return bool(start) and _is_word(before := match.string[start - 1]) and not _WITHOUT_SPACES.match(before) \
        and _is_word(match.string[start])


def _legacy_not_at_word_start(match: re.Match[str]) -> bool:
    start = match.start()
    return bool(start) and _is_word(match.string[start - 1]) and _is_word(match.string[start])


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


# Kana, CJK ideographs, fullwidth forms
_WITHOUT_SPACES = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


# Every volatile pattern needs a digit, "=" or ":", or one of these words (checked by the tests):
# lines without any are left alone, which spares most of a page's text the scans.
_TRIGGER = re.compile(r"[\d=:]|day|now|ago|tomorrow|星期|曜日")
_LEGACY_TRIGGER = re.compile(r"[\d=:]|day|now|ago|tomorrow")


def _remove(matches: Iterable[re.Match[str]], kept: Callable[[re.Match[str]], bool], folded: str,
            text: str) -> tuple[str, str]:
    """Each of *matches* in *folded* that is not *kept*, replaced by a space in *folded* and at
    the same place in *text* (the same string in another case, of the same length)."""
    folded_parts: list[str] = []
    text_parts: list[str] = []
    at = 0
    for match in matches:
        if kept(match):
            continue
        start, end = match.span()
        folded_parts += (folded[at:start], " ")
        text_parts += (text[at:start], " ")
        at = end
    if not at:
        return folded, text
    folded_parts.append(folded[at:])
    text_parts.append(text[at:])
    return "".join(folded_parts), "".join(text_parts)


def _anchored(pattern: re.Pattern[str], starts: Iterable[int], folded: str) -> Iterator[re.Match[str]]:
    """The matches of *pattern* that start at one of *starts* (in order), none overlapping."""
    end = 0
    for start in starts:
        if start >= end and (match := pattern.match(folded, start)):
            end = match.end()
            yield match


def _remove_volatile(folded: str, text: str, patterns: list[re.Pattern[str]],
                     needs: list[tuple[str, ...] | frozenset[str]],
                     kept: Callable[[re.Match[str]], bool] = _not_at_word_start) -> str:
    """*text* without its volatile fragments, found in *folded* (its lower-case twin). A pattern
    whose words are a frozenset runs only when one of them is the word before a number."""
    before_numbers: set[str] | None = None
    for pattern, words in zip(patterns, needs, strict=True):
        matches: Iterable[re.Match[str]]
        if isinstance(words, frozenset):
            if before_numbers is None:
                before_numbers = words_before_numbers(folded)
            if words.isdisjoint(before_numbers):
                continue
            matches = _anchored(pattern, name_starts(folded, words), folded)
        elif words and not any(word in folded for word in words):
            continue
        else:
            matches = pattern.finditer(folded)
        folded, text = _remove(matches, kept, folded, text)
    folded, text = _remove(_BLOB.finditer(folded), _kept_blob, folded, text)
    return _SPACES.sub(" ", text)


def _lower_same_length(text: str) -> str:
    """*text* in lower case, character for character ("İ" lowers to two characters: kept)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(low := c.lower()) != 1 else low for c in text)


def _stable_text(raw: str) -> list[str]:
    """Stable lines of *raw* (collapsed lines joined by newlines). The patterns run once each
    over the candidate lines joined together: a call per line and pattern costs more than the
    matching, and no pattern matches a newline, so lines map back one to one. A line that a
    fragment was removed from the end (or start) of loses the separators left there ("Updated:
    10:32" → "Updated"); everything else keeps its punctuation."""
    lines = raw.split("\n")
    folded_lines = _lower_same_length(raw).split("\n")
    candidates = [i for i, line in enumerate(folded_lines) if _TRIGGER.search(line)]
    if candidates:
        text = _remove_volatile("\n".join([folded_lines[i] for i in candidates]),
                                "\n".join([lines[i] for i in candidates]), _VOLATILE, _NEEDS)
        for i, line in zip(candidates, text.split("\n"), strict=True):
            # A removed fragment leaves a space where it was (the raw lines have none at their
            # ends): only such an end loses its separators.
            if line.startswith(" "):
                line = line.lstrip(_LINE_TRIM)
            if line.endswith(" "):
                line = line.rstrip(_LINE_TRIM)
            lines[i] = line
    return [line for line in lines if line]


def legacy_stable_text(raw: str, *, sort_lines: bool = False) -> str:
    """The stable text NORMALISER_VERSION 1 made of the page whose raw text is *raw*: case
    folded, the English patterns of then, separators trimmed from every line, and each run of
    undecodable bytes one U+FFFD (charset.replaced). Only for the first comparison with a
    snapshot stored by that version (docs/architecture.md, "Upgrading the normaliser"), so
    that a change made meanwhile is still seen."""
    lines = charset.replaced(raw.replace(VERBATIM, "")).casefold().split("\n")
    candidates = [i for i, line in enumerate(lines) if _LEGACY_TRIGGER.search(line)]
    if candidates:
        text = "\n".join([lines[i] for i in candidates])
        text = _remove_volatile(text, text, _LEGACY_VOLATILE, _LEGACY_NEEDS, _legacy_not_at_word_start)
        for i, line in zip(candidates, text.split("\n"), strict=True):
            lines[i] = line
    stable = [s for s in (line.strip(_LINE_TRIM) for line in lines) if s]
    if sort_lines:
        stable.sort()
    return "\n".join(stable)


# What version 1 left of "30. November 2026": its English pattern took "november 2026" and left
# the day with its dot before a separator ("stand: montag, 30. , vor 5 minuten"). Bridged only
# after a weekday ("schritt 1. - teig" is a list's number), and not at a line's end, where
# version 1 trimmed the dot too ("stand: montag, 30" is a number like any other).
_V1_DAY_LEFT = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, WEEKDAY_WORDS), key=len, reverse=True))
                          + r"),? \d{1,2}\.(?= ?[,;:)\-\u2013\u2014])")


def upgrade_bridge_text(folded: str, *, sort_lines: bool = False) -> str:
    """*folded* (a stable text of version 1, or a page read that way: legacy_stable_text) with
    what the new patterns remove removed too, and so the days version 1 left of a date whose
    month and year it took ("montag, 30. ,"): two such texts are equal when the old and the new page differ only in
    dates and relative times that version 1 did not see (other languages'). Only for the first
    comparison with a version 1 snapshot (docs/architecture.md, "Upgrading the normaliser")."""
    # The month and year are written back (any: they are removed with the day and a weekday
    # before it), so that the new patterns take the date whole.
    text = _V1_DAY_LEFT.sub(r"\g<0> november 2026", folded)
    stable = [s for s in (line.strip(_LINE_TRIM) for line in _stable_text(text)) if s]
    if sort_lines:
        stable.sort()
    return "\n".join(stable)


def _finish(raw_lines: list[str], sort_lines: bool) -> VisibleText:
    return _finish_marked(_BLOCK_MARK.join(raw_lines).replace("\x00", ""), _BLOCK_MARK, sort_lines)


def _finish_marked(text: str, mark: str, sort_lines: bool) -> VisibleText:
    """Collapse the whole text at once (the mark is not whitespace), then split it at the marks.
    str.split() splits where the _WS pattern matches (both use Unicode's whitespace), in C."""
    return _split_collapsed(" ".join(text.split()), mark, sort_lines)


def _split_collapsed(collapsed: str, mark: str, sort_lines: bool) -> VisibleText:
    raw = [c for c in (line.strip() for line in collapsed.split(mark)) if c]
    return VisibleText("\n".join(raw), sort_lines=sort_lines)


def visible_text(html: str | bytes, region: str | None = None, *, sort_lines: bool = False,
                 encoding: str | None = None, like_scrapy: bool = False, options: TextOptions | None = None,
                 url: str = "") -> VisibleText:
    """Visible text of *html* (optionally only the *region* CSS selector) as raw and stable lines.
    *encoding* is how to decode *html* when it is bytes (what the response was given or its
    Content-Type declares); a BOM wins, and without either the page's own <meta> declaration,
    else UTF-8 if the bytes are valid UTF-8, else windows-1252 as browsers guess, or with
    *like_scrapy* what Scrapy's ``response.text`` would guess (charset_normalizer): how an
    observation's bytes are read, so its text is the one Scrapy would have given.

    *options*: a text watch's ``include`` and ``ignore`` (:mod:`.text_options`); *url* is the
    page's, which its links are joined with.

    Never raises on bad markup: malformed, truncated, empty or binary input gives what text can
    be found (possibly none). Raises :class:`RegionError` for an invalid *region*, and
    :class:`~.text_options.TextOptionsError` for *options* that cannot be applied (a pattern
    over its time budget).
    """
    if options is not None:
        return _options_visible_text(html, region, sort_lines, encoding, like_scrapy, options, url)
    if not region:
        found = _lexbor_visible_text(html, encoding, like_scrapy, sort_lines)
        if isinstance(found, VisibleText):
            return found
        html, encoding = found, "utf-8"
    return _lxml_visible_text(html, region, sort_lines, encoding, like_scrapy)


def _lxml_visible_text(html: str | bytes, region: str | None, sort_lines: bool,
                       encoding: str | None, like_scrapy: bool = False) -> VisibleText:
    from lxml import etree

    xpath = _region_xpath(region) if region else None
    text, bad = _decode(html, encoding, like_scrapy)
    markup = _clean_markup(text)
    tree, truncated = _parse(markup)
    if truncated and xpath is None:
        visible = _finish(_tokenizer_lines(markup), sort_lines)
    elif tree is None:
        return VisibleText("", "", sort_lines=sort_lines)
    else:
        roots = [n for n in xpath(tree) if isinstance(n, etree._Element)] if xpath is not None else [tree]
        try:
            lines = _marked_text_lines(roots)
        except ValueError:  # text lxml refuses to take back: the slower walk never writes any
            lines = _text_lines(roots)
        visible = _finish(lines, sort_lines)
    return _counted(visible) if bad else visible


def _options_visible_text(html: str | bytes, region: str | None, sort_lines: bool, encoding: str | None,
                          like_scrapy: bool, options: TextOptions, url: str) -> VisibleText:
    """Visible text with ``include`` and ``ignore`` applied: the lxml way, so that ignore selectors
    mean what ``region`` selectors mean. The region and the ignored elements are both selected
    from the page as served; the included parts are taken after the ignored elements are gone."""
    from lxml import etree

    xpath = _region_xpath(region) if region else None
    decoded, bad = _decode(html, encoding, like_scrapy)
    tree, _ = _parse(_clean_markup(decoded))
    if tree is None:
        return VisibleText("", "", sort_lines=sort_lines)
    roots = [n for n in xpath(tree) if isinstance(n, etree._Element)] if xpath is not None else [tree]
    options.drop_ignored(tree)
    roots = [r for r in roots if r is tree or tree in r.iterancestors()]  # a region inside an ignored part is gone
    before, after = include_lines(tree, roots, url, options.include) if options.include else ([], [])
    try:
        lines = _marked_text_lines(roots)
    except ValueError:  # text lxml refuses to take back: the slower walk never writes any
        lines = _text_lines(roots)
    text = _finish(lines, sort_lines).raw
    if region and not text:
        # a region without text is an error (it matched nothing, or the page is a block page),
        # never a change to what include adds alone
        return VisibleText("", "", sort_lines=sort_lines)
    all_lines = [*before, *(text.split("\n") if text else ()), *after]
    visible = VisibleText("\n".join(without_ignored_lines(all_lines, options.patterns)), sort_lines=sort_lines)
    return _counted(visible) if bad else visible


def normalise(html: str | bytes, region: str | None = None, *, sort_lines: bool = False) -> str:
    """Normalised visible text of an HTML page: the string that change detection compares.
    Raises :class:`RegionError` for an invalid *region* only (see :func:`visible_text`).

    >>> normalise("<p>Updated 10:32 PM</p><script>x=1</script><p>Price  <b>89</b></p>")
    'Updated\\nPrice 89'
    """
    return visible_text(html, region, sort_lines=sort_lines).stable


def normalise_text(text: str, *, sort_lines: bool = False, options: TextOptions | None = None) -> VisibleText:
    """Normalise plain text (already extracted by a spider) the same way as page text; of
    *options*, only the ignore patterns apply to it. Never raises, but for *options* over their
    time budget (:class:`~.text_options.TextOptionsError`)."""
    visible = _finish(text.replace("\x00", "").splitlines(), sort_lines)
    if options is None or not options.patterns or not visible.raw:
        return visible
    return VisibleText("\n".join(without_ignored_lines(visible.raw.split("\n"), options.patterns)),
                       sort_lines=sort_lines)
