"""A page's body as a content part keeps it until (and unless) it must be read: as it came, or as
the store kept it (compressed), with its hash, which tells an unchanged body without a parse."""

from __future__ import annotations

import zlib
from hashlib import sha256

from ..evidence import COMPRESSION, compress, decompress
from ..text.normalise import NORMALISER_VERSION
from ..text.options import TextOptions

__all__ = ["PageBody", "UnreadableStoredText", "body_hash", "inflate"]


class UnreadableStoredText(ValueError):
    """A stored part's text or body does not decompress (or decode): the snapshot is damaged. Found
    only when the text is needed (it is decompressed on use); the key starts again from the
    observation being judged (runtime/offload.py), as with a snapshot that cannot be decoded."""


def inflate(blob: bytes, what: str) -> str:
    try:
        return zlib.decompress(blob).decode("utf-8", "surrogatepass")
    except (zlib.error, UnicodeDecodeError) as exc:
        raise UnreadableStoredText(f"its stored {what} does not decompress: {exc}") from None


def body_hash(html: str | bytes, encoding: str | None, sort_lines: bool, options: str = "") -> str:
    """The hash of a page's body as it came (with what decides how it is read: *options* is
    :meth:`TextOptions.key`, include and ignore, and the URL links are joined with): equal body
    hashes mean equal texts, so a page whose body is the stored one's is not even parsed.
    SHA-256: ~0.13 ms for 230 KB with the CPU's SHA instructions, under blake2b's 0.24."""
    kind = "b" if isinstance(html, bytes) else "s"  # a str and its UTF-8 bytes may read differently
    # no options: the hash of before the options, so that no stored body hash changes
    read = f"{int(sort_lines)}\x00{options}" if options else f"{int(sort_lines)}"
    digest = sha256(f"{NORMALISER_VERSION}\x00{kind}\x00{encoding or ''}\x00{read}\x00".encode())
    digest.update(html if isinstance(html, bytes) else html.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


class PageBody:
    """What a part digested from a whole page needs to read it, when (and if) it must: the body as
    it came, or as the store kept it (*compressed*, decompressed on first use)."""

    __slots__ = ("_compressed", "_html", "encoding", "options", "sort_lines", "url")

    def __init__(self, html: str | bytes | None, encoding: str | None, sort_lines: bool,
                 options: TextOptions | None = None, url: str = "", compressed: bytes | None = None):
        if html is None and compressed is None:
            raise ValueError("a page needs its body")
        self._html, self._compressed, self.encoding, self.sort_lines = html, compressed, encoding, sort_lines
        self.options, self.url = options, url

    @property
    def html(self) -> str | bytes:
        if self._html is None:
            assert self._compressed is not None
            try:
                self._html = decompress(COMPRESSION, self._compressed)
            except ValueError as exc:
                raise UnreadableStoredText(f"its stored page: {exc}") from None
        return self._html

    def compressed(self) -> bytes:
        """The body (bytes) compressed as evidence is (a first page's evidence is the same bytes)."""
        if self._compressed is None:
            html = self.html
            assert isinstance(html, bytes)
            self._compressed = compress(html)
        return self._compressed

    def offer_compressed(self, body: bytes, compressed: bytes) -> None:
        """*compressed* is *body* compressed the same way (a baseline's evidence): used if *body*
        is this page's."""
        if self._compressed is None and self._html is not None and (body is self._html or body == self._html):
            self._compressed = compressed

