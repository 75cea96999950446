"""What a page must not be to be compared (or kept as a baseline): empty, a block page (a
captcha, "access denied"), collapsed to a fraction of the last good page, or undecodable."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..text.decoding import decode_page_counted
from ..text.linewise import keeps_a_line_whole, stable_text_longer_than
from ..text.options import VERBATIM
from ..text.visible import VisibleText

if TYPE_CHECKING:
    from .content_part import ContentPart

__all__ = ["BLOCKED_MAX_CHARS", "COLLAPSE_MIN_CHARS", "COLLAPSE_RATIO", "UNDECODABLE_MIN", "UNREAD_MIN_CHARS",
           "blocked", "first_page_problem", "first_text_passes", "undecodable"]

# What a block page says. Each is a few words separated by single spaces, an optional word written
# "(?:word )?", and "." escaped: the words a phrase cannot do without are told from it
# (_BLOCK_WORDS), so that a first text none of whose phrases can match needs no stable text.
_BLOCK_PHRASES = (
    r"access denied", r"access to this page has been denied", r"captcha", r"are you a robot", r"are you human",
    r"verify you are (?:a )?human", r"unusual traffic", r"request (?:was )?blocked", r"you have been blocked",
    r"attention required", r"just a moment\.\.\.", r"enable javascript and cookies", r"too many requests",
    r"403 forbidden", r"pardon our interruption", r"bot detection", r"checking your browser", r"security check",
)
_BLOCKED = re.compile("|".join(_BLOCK_PHRASES), re.IGNORECASE)
#: the words each phrase must contain, as the regex reads them in lower case
_BLOCK_WORDS = tuple(tuple(re.sub(r"\(\?:[^)]*\)\?", "", phrase).replace("\\", "").split())
                     for phrase in _BLOCK_PHRASES)
# Characters that re.IGNORECASE takes for an ASCII letter although str.lower() does not make them
# one: the dotless i and the long s (re's own case fixes), and the dotted capital I (lowered to
# two characters). A text with one is not told by its words.
_CASE_FIXES = ("\u0131", "\u017f", "\u0130")
BLOCKED_MAX_CHARS = 3000
COLLAPSE_MIN_CHARS = 400
COLLAPSE_RATIO = 0.1
#: a first page is kept unread when it surely has this many characters of text that are not
#: whitespace or digits: twice what a block page may have (core/text/textbound.py)
UNREAD_MIN_CHARS = 2 * BLOCKED_MAX_CHARS


def first_page_problem(part: ContentPart) -> str | None:
    """Why *part* cannot be a first page (a baseline): no text, or a block page's."""
    if first_text_passes(part.raw):
        return None
    text = part.text
    if not text.strip():
        return "empty: no visible text"
    return blocked(text)


def first_text_passes(raw: str) -> bool:
    """Whether the stable text of the raw text *raw* surely passes a first page's checks (not
    empty, not a block page's), told without making it: it is longer than a block page can be
    (:func:`~changewatch.core.text.linewise.stable_text_longer_than`), or it keeps a line whole (no
    volatile pattern can touch it) and no block phrase can be found in it.

    Why the words tell: the stable text is the raw text with fragments replaced by a space (and
    spaces collapsed, separators trimmed at line ends, lines sorted), so each run of it without a
    space or a line end is a run of the raw text. A phrase found in the stable text has each of
    its words in such a run: in the raw text too, as :data:`_BLOCKED` reads case. A page that is
    not surely long still runs the patterns over its text only when the words of one phrase are
    all in it (a shop's page that mentions a security check), or when no line is whole.

    >>> first_text_passes("Kettle\\nPrice 89.00"), first_text_passes("Updated 10:32")
    (True, False)
    >>> first_text_passes("Attention Required!\\nRay ID 8f2a"), first_text_passes("\\u017fecurity check\\nRay ID 8f2a")
    (False, False)
    """
    if stable_text_longer_than(raw, BLOCKED_MAX_CHARS):
        return True
    if VERBATIM in raw or not keeps_a_line_whole(raw) or any(c in raw for c in _CASE_FIXES):
        return False
    lowered = raw.lower()
    return not any(all(word in lowered for word in words) for words in _BLOCK_WORDS)


def blocked(text: str, baseline: ContentPart | None = None) -> str | None:
    """Why a short page looks like a block page. A phrase the last good page said too is part of
    the page (a form that mentions its captcha), not a block."""
    if len(text) <= BLOCKED_MAX_CHARS and (m := _BLOCKED.search(text)):
        if baseline is not None and m.group(0).casefold() in baseline.text.casefold():
            return None
        return f"blocked: page says {m.group(0)!r}"
    return None


UNDECODABLE_MIN = 16


def undecodable(html: bytes, encoding: str | None, visible: VisibleText) -> str | None:
    """Why a page shipped as bytes is garbage: much of it did not decode (a wrong or lying
    charset), and comparing it would report a change that is only an encoding accident. The
    page's visible text is looked at first; the body is decoded whole only when that text holds
    more than a few undecodable bytes (each a character of its own: core/text/charset.py)."""
    if visible.undecodable <= UNDECODABLE_MIN:
        return None
    text, bad = decode_page_counted(html, encoding, like_scrapy=True)
    if bad <= UNDECODABLE_MIN or bad * 10 <= len(text):
        return None
    return f"unsupported: undecodable text ({bad} of {len(text)} characters are not valid {encoding or 'utf-8'})"
