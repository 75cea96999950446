"""The lexbor (selectolax) walker: a whole page's visible text, parsed, stripped and walked in
about a millisecond for 230 KB, three to four times faster than libxml2 with the clean-up pass
lxml needs (docs/performance.md, "Cost model"). A page nested too deeply for lexbor (its tree
building is quadratic in the depth) is left to :mod:`.lxml_walker`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from selectolax.lexbor import LexborHTMLParser

from . import charset
from .decoding import utf8_markup
from .visible import BLOCKS, DROPPED, VisibleText, collapse_marked, counted, split_collapsed

# NumPy (the depth estimate of long pages) is imported where it is needed, not by every worker.
if TYPE_CHECKING:
    import numpy as np

__all__ = ["LEXBOR_MAX_DEPTH", "lexbor_dropped", "lexbor_marked_text", "lexbor_visible_text", "maybe_deep",
           "page_visible_text"]

# The line mark of the lexbor walk: a NUL is never text in an HTML5 tree (the parser drops or
# replaces every NUL of the page), so the mark cannot collide with the page's own characters.
_LEXBOR_MARK = "\x00"
_LEXBOR_DROPPED = tuple(sorted(DROPPED))
# "html" and "title" are left out: the title lives in the dropped head, and a mark next to
# <html> would be text before <head> (which the HTML5 parser moves into the body).
_LEXBOR_BLOCKS = tuple(sorted(BLOCKS - {"html", "title"}))
# Nesting depth past which lexbor is not used: its tree building scans the stack of open
# elements for each block start tag, quadratic in the depth (100,000 nested divs take 25 s;
# 10,000 a quarter of a second). The depth is estimated from the tags alone (maybe_deep): the
# corpus's deepest page comes to 400.
LEXBOR_MAX_DEPTH = 4000
# Void elements, by their first three letters (a space for "br"/"hr" and a letter past them):
# they never nest.
_VOID_STEMS = ("br", "hr", "img", "inp", "met", "lin", "sou", "wbr", "are", "bas", "emb", "tra", "par")


def _letters(codes: np.ndarray) -> np.ndarray:
    """Where *codes* (bytes as a NumPy array) are ASCII letters."""
    return (codes | 0x20) - 0x61 < 26  # a-z, A-Z (unsigned: below "a" wraps past 26)


def maybe_deep(markup: bytes) -> bool:
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


def _lexbor_marked(markup: bytes) -> str:
    """The page's text with a mark (NUL) where the lxml walker splits it into lines: parsed by
    lexbor, invisible elements dropped, a mark put before and after each block element, the text
    taken in one C call. The characters the lxml walker removes from the markup before parsing
    (C0 controls that lxml refuses, U+E000, the non-characters U+FFFE/U+FFFF) are still in it:
    :func:`~.visible.collapse_marked` removes them, for the same result."""
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
    """:func:`_lexbor_marked` collapsed as :func:`~.visible.finish_marked` collapses it."""
    return collapse_marked(_lexbor_marked(markup))


def lexbor_visible_text(marked: str, sort_lines: bool) -> VisibleText:
    """The visible text of a page from its marked text (:func:`lexbor_marked_text`), as
    :func:`~.normalise.visible_text` reads a whole page of valid UTF-8 (passed to lexbor as it is)."""
    return split_collapsed(collapse_marked(marked), _LEXBOR_MARK, sort_lines)


def page_visible_text(html: str | bytes, encoding: str | None, like_scrapy: bool,
                      sort_lines: bool) -> VisibleText | bytes:
    """The visible text of a whole page by lexbor, or the UTF-8 markup when the page is nested
    too deeply for it. Bytes that are not UTF-8 are read again, each as a character of its own,
    only when the text shows the U+FFFD lexbor made of them: a valid page is decoded once."""
    utf8, bad = utf8_markup(html, encoding, like_scrapy)
    if maybe_deep(utf8):
        return utf8  # read by lxml, which decodes (and counts) the bytes itself
    visible = split_collapsed(_lexbor_collapsed(utf8), _LEXBOR_MARK, sort_lines)
    if bad is None:
        if "\ufffd" not in visible.raw:
            return visible
        text, bad = charset.decode(utf8, "utf-8")
        if not bad:
            return visible  # the page writes U+FFFD itself
        visible = split_collapsed(_lexbor_collapsed(text.encode("utf-8")), _LEXBOR_MARK, sort_lines)
    return counted(visible) if bad else visible

