"""Visible-text extraction and normalisation: the entry points.

``normalise`` turns an HTML page into the text a reader sees, one block-level element per line,
whitespace collapsed and volatile fragments (relative times, tokens, long ids: :mod:`.volatile`)
removed, so that two fetches of an unchanged page give the same string. Dates and times are the
page's words; a time that tracks the fetch time is left out only when the fetch time is known
(a content part's :class:`~.clock_times.Clock`), which ``normalise`` does not know. Case and punctuation are
kept as the page wrote them: "SIMDJSON" is not "simdjson", and a diff shows the page's own words.

Two parsers, picked by measurement: a whole page is read by lexbor (:mod:`.lexbor_walker`); a
*region*, ``include`` and ``ignore``, and a page nested too deeply for lexbor by lxml
(:mod:`.lxml_walker`).
"""

from __future__ import annotations

from .lexbor_walker import page_visible_text
from .lxml_walker import lxml_visible_text, options_visible_text
from .options import TextOptions, without_ignored_lines
from .visible import VisibleText, finish

__all__ = ["NORMALISER_VERSION", "normalise", "normalise_text", "visible_text"]

#: Bumped whenever the same bytes can normalise to another text (a new volatile pattern, another
#: parser): a body hash of another normaliser then never matches, the page is read again, and a
#: watch's spec changes, so its first comparison sees the page, not a 304. A content part keeps
#: the version that read it: one read by another version re-baselines silently.
NORMALISER_VERSION = 6


def visible_text(html: str | bytes, region: str | None = None, *, sort_lines: bool = False,
                 encoding: str | None = None, like_scrapy: bool = False, options: TextOptions | None = None,
                 url: str = "") -> VisibleText:
    """Visible text of *html* (optionally only the *region* CSS selector) as raw and stable lines.
    *encoding* is how to decode *html* when it is bytes (what the response was given or its
    Content-Type declares); a BOM wins, and without either the page's own <meta> declaration,
    else UTF-8 if the bytes are valid UTF-8, else windows-1252 as browsers guess, or with
    *like_scrapy* what Scrapy's ``response.text`` would guess (charset_normalizer): how an
    observation's bytes are read, so its text is the one Scrapy would have given.

    *options*: a text watch's ``include`` and ``ignore`` (:mod:`.options`); *url* is the
    page's, which its links are joined with.

    Never raises on bad markup: malformed, truncated, empty or binary input gives what text can
    be found (possibly none). Raises :class:`RegionError` for an invalid *region*, and
    :class:`~.options.TextOptionsError` for *options* that cannot be applied (a pattern
    over its time budget).
    """
    if options is not None:
        return options_visible_text(html, region, sort_lines, encoding, like_scrapy, options, url)
    if not region:
        found = page_visible_text(html, encoding, like_scrapy, sort_lines)
        if isinstance(found, VisibleText):
            return found
        html, encoding = found, "utf-8"
    return lxml_visible_text(html, region, sort_lines, encoding, like_scrapy)


def normalise(html: str | bytes, region: str | None = None, *, sort_lines: bool = False) -> str:
    """Normalised visible text of an HTML page: the string that change detection compares.
    Raises :class:`RegionError` for an invalid *region* only (see :func:`visible_text`).

    >>> normalise("<p>Updated 3 minutes ago</p><script>x=1</script><p>Price  <b>89</b> from 10:32 PM</p>")
    'Updated\\nPrice 89 from 10:32 PM'
    """
    return visible_text(html, region, sort_lines=sort_lines).stable


def normalise_text(text: str, *, sort_lines: bool = False, options: TextOptions | None = None) -> VisibleText:
    """Normalise plain text (already extracted by a spider) the same way as page text; of
    *options*, only the ignore patterns apply to it. Never raises, but for *options* over their
    time budget (:class:`~.options.TextOptionsError`)."""
    visible = finish(text.replace("\x00", "").splitlines(), sort_lines)
    if options is None or not options.patterns or not visible.raw:
        return visible
    return VisibleText("\n".join(without_ignored_lines(visible.raw.split("\n"), options.patterns)),
                       sort_lines=sort_lines)
