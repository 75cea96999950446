"""How a page's bytes become text: a BOM, the response's charset, the page's own declaration,
then a guess (browsers' or Scrapy's); each byte that does not decode is a character of its own
(:mod:`.charset`)."""

from __future__ import annotations

from w3lib.encoding import html_body_declared_encoding, html_to_unicode, read_bom, resolve_encoding

from . import charset

__all__ = ["decode_page", "decode_page_counted", "escape_undecodable", "utf8_markup", "valid_utf8"]


def _undeclared_encoding(body: bytes) -> str:
    # Nothing declared: UTF-8 when the bytes are valid UTF-8, else windows-1252 (a superset of
    # latin-1), as browsers in Western locales guess; a blanket UTF-8 turned every accented
    # letter into the same U+FFFD, so changes to them went unseen. (Scrapy's response.text asks
    # charset_normalizer instead, which reads a short French windows-1252 page as cp1250:
    # "crème" became "crčme".)
    return "utf-8" if valid_utf8(body) else "cp1252"


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
    """*html* decoded: a BOM first, then *encoding* (the response's, or its Content-Type's
    charset), then the page's own declaration (a <meta> in its first 4 KB), then UTF-8 if the
    bytes are valid UTF-8, else windows-1252 (see _undeclared_encoding), or *like_scrapy* what
    Scrapy would infer (_scrapy_undeclared_encoding). Bytes that do not decode are each a
    character of their own (:mod:`.charset`)."""
    return decode_page_counted(html, encoding, like_scrapy=like_scrapy)[0]


def decode_page_counted(html: str | bytes, encoding: str | None = None, *,
                        like_scrapy: bool = False) -> tuple[str, int]:
    """:func:`decode_page`, and how many bytes did not decode (each one character of its own)."""
    if isinstance(html, bytes):
        infer = _scrapy_undeclared_encoding if like_scrapy else _undeclared_encoding
        used, text = html_to_unicode(f"charset={encoding}" if encoding else None, html, auto_detect_fun=infer,
                                     default_encoding="cp1252" if like_scrapy else "utf8")
        return escape_undecodable(html, used, text)
    return html, 0


_UTF8_BOM = b"\xef\xbb\xbf"


def utf8_markup(html: str | bytes, encoding: str | None, like_scrapy: bool = False) -> tuple[bytes, int | None]:
    """*html* as the UTF-8 bytes lexbor reads, decoded as :func:`decode_page` decodes it, and how
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
        text, bad = decode_page_counted(html, declared, like_scrapy=like_scrapy)
        return text.encode("utf-8", "replace"), bad
    return html.encode("utf-8", "replace"), 0


def valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
