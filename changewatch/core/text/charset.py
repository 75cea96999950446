"""Bytes that do not decode in a page's charset, each kept as a character of its own.

A page served with the wrong charset (windows-1252 bytes labelled UTF-8) decoded with the
``replace`` error handler turns every bad byte into the same U+FFFD: ``5 €`` and ``5 £`` both
read ``5 �``, and the change is lost. Here byte *b* becomes U+10DC00 + *b* (U+10DC80…U+10DCFF
for the bytes a UTF-8 decoder rejects): the low surrogates Python's ``surrogateescape`` uses,
moved to the supplementary private-use plane B. Unlike lone surrogates they encode to UTF-8 and
lxml and lexbor take them; unlike the BMP private-use area (and plane 15, Material Design
Icons' font) no icon font draws them; unlike a visible escape (``\\x80``) they keep a JSON-LD
string valid JSON. :func:`readable` writes them as ``\\x80`` where a person reads them (diffs).

A valid page never reaches the error handler, so its text is exactly what ``replace`` gives.
"""

from __future__ import annotations

import codecs
import re
import threading

__all__ = ["ERRORS", "UNDECODABLE", "count_undecodable", "decode", "readable"]

ERRORS = "changewatch_undecodable"
_BASE = 0x10DC00
#: The characters undecodable bytes become (one per byte value).
UNDECODABLE = re.compile("[\U0010dc00-\U0010dcff]")
_READABLE = {_BASE + b: f"\\x{b:02x}" for b in range(256)}
_count = threading.local()


def _undecodable(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    bad = exc.object[exc.start:exc.end]
    # The Encoding Standard's GB18030 decoder reads a lone 0x80 as the euro sign (w3lib does too).
    if bad[:1] == b"\x80" and codecs.lookup(exc.encoding).name == "gb18030":
        return "\u20ac", exc.start + 1
    _count.n = getattr(_count, "n", 0) + len(bad)
    return "".join(map(chr, (_BASE + b for b in bad))), exc.end


codecs.register_error(ERRORS, _undecodable)


def decode(body: bytes, encoding: str) -> tuple[str, int]:
    """*body* decoded as *encoding*, and how many of its bytes did not decode (each is the
    character U+10DC00 + byte in the text).

    >>> decode(b"5 \\x80 or 5 \\xa3, caf\\xc3\\xa9", "utf-8")
    ('5 \\U0010dc80 or 5 \\U0010dca3, café', 2)
    """
    _count.n = 0
    text = body.decode(encoding, ERRORS)
    return text, _count.n


def count_undecodable(text: str) -> int:
    """How many undecodable bytes *text* holds (0 at the cost of one scan when it holds none)."""
    return len(UNDECODABLE.findall(text))


def readable(text: str) -> str:
    r"""*text* with each undecodable byte written as ``\x..``, for a person to read.

    >>> readable("5 \U0010dc80")
    '5 \\x80'
    """
    return text.translate(_READABLE) if UNDECODABLE.search(text) else text
