"""Whether a page surely has more visible text than a block page, at half the cost of reading it.

A first observation (a baseline) needs its text read for one reason only: to tell a blocked,
empty or collapsed page from a real one, which takes knowing whether its visible text is longer
than a block page's (``BLOCKED_MAX_CHARS``). A page that surely has more is kept as its body,
unread (core/comparisons/content_part.py), and read only when a later body differs from it: on a first
crawl of real pages that is most of the worker's time saved (docs/performance.md, "Cost model").

"Surely" is from below. The page is parsed as the normaliser parses it (lexbor), the elements it
drops are dropped, and the characters of the text that are neither whitespace nor digits are
counted: the normaliser's raw text has each of them (it only collapses whitespace and marks
lines), and its stable text loses to the volatile patterns (times, dates, relative times, tokens,
ids) mostly digits. The caller asks for a margin over what it needs (twice, for a block page).
What this does not do, and what makes reading a page cost twice as much: marking every block
element's lines, collapsing, splitting and hashing the text, compressing it for the store. A page
that is not surely long is read from the same parse: nothing is parsed twice.
"""

from __future__ import annotations

from .lexbor_walker import lexbor_dropped, lexbor_marked_text, lexbor_visible_text, maybe_deep
from .visible import VisibleText

__all__ = ["first_page_read", "text_chars_at_least"]

_DIGITS = "0123456789"
_CHUNK = 4096


def first_page_read(markup: bytes, chars: int, sort_lines: bool = False) -> tuple[bool, VisibleText | None]:
    """Whether the visible text of *markup* (a whole page's bytes, valid UTF-8) surely has at least
    *chars* characters that are not whitespace or digits; when it has not, its visible text, read
    from the same parse (the one :func:`~.normalise.visible_text` gives such a page), or None when
    the page is too short to be parsed for this, or nested too deeply for lexbor (the normaliser
    reads it another way)."""
    if len(markup) < chars or maybe_deep(markup):
        return False, None
    tree = lexbor_dropped(markup)
    if tree is None or tree.root is None:
        return False, lexbor_visible_text("", sort_lines)
    if _counted_at_least(tree.root.text(deep=True), chars):
        return True, None
    return False, lexbor_visible_text(lexbor_marked_text(tree), sort_lines)


def _counted_at_least(text: str, chars: int) -> bool:
    """Whether *text* has *chars* characters that are neither whitespace (as str.split() finds
    it) nor digits: counted a few thousand characters at a time, as far as needed (a long page's
    text is several times what the bound asks for)."""
    need = chars
    for at in range(0, len(text), _CHUNK):
        chunk = text[at:at + _CHUNK]
        need -= sum(map(len, chunk.split())) - sum(map(chunk.count, _DIGITS))
        if need <= 0:
            return True
    return need <= 0


def text_chars_at_least(markup: bytes, chars: int) -> bool:
    """The first half of :func:`first_page_read`.

    >>> page = b"<html><head><title>T</title></head><body><p>" + b"Words here. " * 40 + b"</p></body></html>"
    >>> text_chars_at_least(page, 400), text_chars_at_least(page, 500)
    (True, False)
    >>> text_chars_at_least(b"<body><script>" + b"var x = 'no text here';" * 100 + b"</script>7 8 9</body>", 10)
    False
    """
    return first_page_read(markup, chars)[0]
