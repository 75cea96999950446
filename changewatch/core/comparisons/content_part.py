"""The content part: a page's text as the snapshot keeps it (raw text, hashes, simhash), computed
on first use and told from the stored part with as little work as each case allows."""

from __future__ import annotations

import zlib
from datetime import datetime
from hashlib import blake2b
from typing import Any

from ..learned import Learned
from ..simhash import simhash
from ..text.clock_times import Clock
from ..text.decoding import utf8_markup, valid_utf8
from ..text.linewise import learned_clock, same_stable_text
from ..text.normalise import NORMALISER_VERSION, visible_text
from ..text.options import TextOptions
from ..text.textbound import first_page_read
from ..text.visible import VisibleText, stable_text
from .block_pages import UNREAD_MIN_CHARS, first_page_problem
from .content_page import PageBody, body_hash, inflate

__all__ = ["ContentPart", "digest_text", "raw_hash"]

_NO_CLOCK = Clock(None)

# Level 3: 0.19 ms for a corpus page's 13 KB of text, 39% of its size; level 6 took 0.33 ms for 37%.
_ZLIB_LEVEL = 3


def digest_text(text: str) -> str:
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def raw_hash(visible: VisibleText) -> str:
    """The hash of the raw text, with how its stable text is made (sorted lines or not): equal
    raw hashes mean equal stable texts."""
    return digest_text(visible.raw + "\n\x00sorted" if visible.sort_lines else visible.raw)


class ContentPart:
    """The text of a page: its raw text (visible text, whitespace collapsed), the hashes of its
    raw and stable text, its simhash, and the text itself for diffs, kept compressed as stored and
    decompressed only when a diff or a check needs it.

    A part digested from a page computes its text, hashes and simhash on first use: when the
    page's body is the stored one's, nothing but the body hash is needed (not even a parse); when
    its raw text is, nothing but the raw hash; when it differs from the stored raw text in a few
    lines, the volatile patterns run over those lines only to tell whether the stable texts are
    the same (core/text/linewise.py), and the stable text, its hash and simhash are computed
    only when they are not. So a part keeps its **raw** text, from which its stable text is made
    again whenever one is needed; its content hash, length and fingerprint are kept when they were
    computed, and None when not yet (a baseline whose text never changes never needs them).

    *spec* says how the text was read (:func:`~.content.text_spec`): a text read another way is
    not compared with it. *reading* says what the response was read as: "html" (a page's visible
    text) or a document's content type ("text", "json", "pdf": core/documents.py).

    *clock* says when the page was fetched and the offset its bare times of day were learned to
    show (core/text/clock_times.py): a time that tracks the fetch time is left out of the stable
    text. *normaliser* is the NORMALISER_VERSION the part was read by (None: a part stored before
    it was kept)."""

    __slots__ = ("_clock_from", "_content_hash", "_fingerprint", "_length", "_page", "_raw", "_raw_compressed",
                 "_raw_hash", "_same_as", "_text", "_undecodable", "_untrusted", "_visible", "body_hash", "clock",
                 "keeps_body", "learned", "normaliser", "reading", "sort_lines", "spec", "stored_as_body")

    def __init__(self, *, raw_hash: str | None = None, content_hash: str | None = None,
                 fingerprint: int | None = None, length: int | None = None, text: str | None = None,
                 visible: VisibleText | None = None, page: PageBody | None = None,
                 body_hash: str | None = None, spec: str | None = None,
                 reading: str | None = None, undecodable: int | None = None,
                 raw: str | None = None, raw_compressed: bytes | None = None, sort_lines: bool = False,
                 learned: Learned | None = None, keeps_body: bool = False, stored_as_body: bool = False,
                 clock: Clock | None = None, normaliser: int | None = NORMALISER_VERSION):
        if visible is None and page is None and (raw_hash is None or (raw is None and raw_compressed is None)):
            raise ValueError("a content part needs its raw text (as it is, compressed, visible or a page)")
        self.body_hash = body_hash
        self.clock = clock if clock is not None else _NO_CLOCK
        self.normaliser = normaliser
        #: the old part this one's clock offset was learned against
        self._clock_from: ContentPart | None = None
        #: what is learned of the page's variation (core/learned.py); None: nothing
        self.learned = learned
        #: a page that may be kept as its body while it is not read: it surely has more text than a
        #: block page, and is valid UTF-8 (so no byte of it can be undecodable)
        self.keeps_body = keeps_body
        #: the part was stored as its body, unread
        self.stored_as_body = stored_as_body
        #: whether a part stored as its body failed a first page's checks once read (None: not read)
        self._untrusted: bool | None = None
        #: the last part this one's stable text was told against, and the answer
        self._same_as: tuple[ContentPart, bool | None] | None = None
        self.spec = spec
        self.reading = reading
        self.sort_lines = visible.sort_lines if visible is not None else page.sort_lines if page else sort_lines
        self._undecodable = undecodable
        self._page = page
        self._raw_hash = raw_hash
        self._content_hash = content_hash
        self._fingerprint = fingerprint
        self._length = length
        #: the stable text, once made (from the raw text)
        self._text = text
        self._visible = visible
        self._raw = raw
        self._raw_compressed = raw_compressed

    @classmethod
    def of(cls, visible: VisibleText, spec: str | None = None, reading: str | None = None,
           fetched: datetime | None = None) -> ContentPart:
        return cls(raw_hash=raw_hash(visible), visible=visible, spec=spec, reading=reading, clock=Clock(fetched))

    @classmethod
    def of_page(cls, html: str | bytes, encoding: str | None, sort_lines: bool, spec: str | None = None,
                options: TextOptions | None = None, url: str = "", fetched: datetime | None = None) -> ContentPart:
        """A whole page's part: its body hashed now, read only if that is not the stored one.
        Reading it may raise TextOptionsError (an ignore pattern over its time budget)."""
        key = options.key(url) if options is not None else ""
        return cls(page=PageBody(html, encoding, sort_lines, options, url),
                   body_hash=body_hash(html, encoding, sort_lines, key), spec=spec, reading="html",
                   clock=Clock(fetched))

    @property
    def page(self) -> PageBody | None:
        return self._page

    @property
    def unread(self) -> bool:
        """A part of a page whose body has not been read (parsed) yet."""
        return self._page is not None and self._visible is None

    @property
    def kept_unread(self) -> bool:
        """Whether the store keeps this part as its body (compressed), not as its text."""
        return self.keeps_body and self.unread

    def keep_unread_if_long(self) -> bool:
        """Whether this first page's body (unread) surely has more text than a block page, and can
        be kept as its body until a later one differs from it: a whole page (no include or ignore),
        read as UTF-8 and valid UTF-8, with UNREAD_MIN_CHARS of text (core/text/textbound.py)."""
        page = self._page
        if self.keeps_body:
            return True
        if page is None or self._visible is not None or page.options is not None or self.reading != "html":
            return False
        html = page.html
        if not isinstance(html, bytes) or len(html) < UNREAD_MIN_CHARS:
            return False
        markup, bad = utf8_markup(html, page.encoding, like_scrapy=True)
        if bad is not None or not (markup.isascii() or valid_utf8(markup)):
            return False
        long, visible = first_page_read(markup, UNREAD_MIN_CHARS, page.sort_lines)
        if not long:
            if visible is not None:
                self._visible = visible  # read from the same parse: the page is not parsed twice
            return False
        self.keeps_body, self._undecodable = True, 0
        return True

    def offer_compressed(self, body: bytes, compressed: bytes) -> None:
        """*compressed* is *body* as evidence keeps it: the very bytes to keep if this part is kept
        unread and *body* is its page's."""
        if self._page is not None:
            self._page.offer_compressed(body, compressed)

    def untrusted(self) -> bool:
        """Whether this part, kept unread as a first page, fails a first page's checks now that it
        is read (an empty or blocked page that looked long): then it is no baseline to compare
        with, and the next good page takes its place, silently."""
        if not self.stored_as_body:
            return False
        if self._untrusted is None:
            self._untrusted = first_page_problem(self) is not None
        return self._untrusted

    @property
    def visible(self) -> VisibleText | None:
        """The page's visible text (None for a part read from the store)."""
        if self._visible is None and self._page is not None:
            page = self._page
            self._visible = visible_text(page.html, sort_lines=page.sort_lines, encoding=page.encoding,
                                         like_scrapy=True, options=page.options, url=page.url)
        return self._visible

    @property
    def raw(self) -> str:
        """The raw text (decompressed, or read from the page, on first use)."""
        if self._raw is None:
            if (visible := self.visible) is not None:
                self._raw = visible.raw
            else:
                assert self._raw_compressed is not None
                self._raw = inflate(self._raw_compressed, "raw text")
        return self._raw

    @property
    def undecodable(self) -> int | None:
        """Bytes of the visible text that did not decode (None: not known, the page was not read)."""
        if self._undecodable is None and self._visible is not None:
            self._undecodable = self._visible.undecodable
        return self._undecodable

    def same_body_as(self, old: ContentPart) -> None:
        """This part's body is *old*'s, byte for byte: what was learnt reading it holds."""
        if self._undecodable is None:
            self._undecodable = old.undecodable

    @property
    def raw_hash(self) -> str:
        if self._raw_hash is None:
            visible = self.visible
            assert visible is not None
            self._raw_hash = raw_hash(visible)
        return self._raw_hash

    @property
    def text(self) -> str:
        """The stable text (the volatile patterns run over the raw text, when not known yet)."""
        if self._text is None:
            self._text = stable_text(self.raw, self.sort_lines, self.clock)
        return self._text

    @property
    def content_hash(self) -> str:
        if self._content_hash is None:
            self._content_hash = digest_text(self.text)
        return self._content_hash

    @property
    def known_content_hash(self) -> str | None:
        return self._content_hash

    @property
    def fingerprint(self) -> int:
        if self._fingerprint is None:
            self._fingerprint = simhash(self.text)
        return self._fingerprint

    @property
    def known_fingerprint(self) -> int | None:
        """The fingerprint if it was computed or stored (None: not yet)."""
        return self._fingerprint

    @property
    def length(self) -> int:
        if self._length is None:
            self._length = len(self.text)
        return self._length

    @property
    def known_length(self) -> int | None:
        if self._length is None and self._text is not None:
            self._length = len(self._text)
        return self._length

    def same_stable_text(self, old: ContentPart) -> bool | None:
        """Whether this part's stable text is *old*'s, told from the raw lines they do not share
        (core/text/linewise.py); None when that cannot be told so (texts sorted one way and not
        the other)."""
        if self.sort_lines != old.sort_lines:
            return None
        self.learn_clock(old)
        if self._content_hash is not None and old._content_hash is not None:
            return self._content_hash == old._content_hash
        if self._same_as is not None and self._same_as[0] is old:
            return self._same_as[1]  # told once already (the checks, then the comparison)
        same = same_stable_text(old.raw, self.raw, sort_lines=self.sort_lines, old_clock=old.clock,
                                new_clock=self.clock)
        self._same_as = (old, same)
        return same

    def learn_clock(self, old: ContentPart) -> None:
        """Learn the page's clock (the offset and lines of its bare times of day) from *old* (the
        stored part) and this one, which differ in their raw text (core/text/linewise.py), and
        give it to both: each one's stable text is made with it from now on. Once per pair."""
        if self._clock_from is old:
            return
        self._clock_from = old
        learned = old.clock
        if self.clock.fetched is not None and old.clock.fetched is not None:
            learned = learned_clock(old.raw, old.clock, self.raw, self.clock)
        self.set_clock(learned.offset, learned.lines)
        old.set_clock(learned.offset, learned.lines)

    def carry_clock(self, old: ContentPart) -> None:
        """This part's page reads as *old*'s did: the clock learned so far holds."""
        self.set_clock(old.clock.offset, old.clock.lines)

    def set_clock(self, offset: int | None, lines: tuple[str, ...]) -> None:
        """Make the stable text with *offset* and *lines* as the page's learned clock (what was
        made with another is made again)."""
        if (offset, lines) == (self.clock.offset, self.clock.lines):
            return
        self.clock = Clock(self.clock.fetched, offset, lines)
        self._text = self._content_hash = self._fingerprint = self._length = None
        self._same_as = None

    def blob(self) -> bytes:
        """What the store keeps of the text: the raw text, compressed."""
        if self._raw_compressed is None:
            self._raw_compressed = zlib.compress(self.raw.encode("utf-8", "surrogatepass"), _ZLIB_LEVEL)
        return self._raw_compressed

    def with_stable_text_of(self, old: ContentPart) -> ContentPart:
        """This part, said to have *old*'s stable text (found the same): what is known of that
        text (its hash, length, fingerprint) is carried over, so it is not computed again."""
        part = self.with_spec(self.spec, self.reading)
        if old._content_hash is not None:
            part._content_hash = old._content_hash
        part._fingerprint = part._fingerprint if part._fingerprint is not None else old._fingerprint
        if (length := old.known_length) is not None:
            part._length = length
        return part

    def with_spec(self, spec: str | None, reading: str | None) -> ContentPart:
        """This part, said to be read as *spec* and *reading*."""
        return ContentPart(raw_hash=self._raw_hash, content_hash=self._content_hash, fingerprint=self._fingerprint,
                           length=self._length, text=self._text, visible=self._visible, page=self._page,
                           body_hash=self.body_hash, spec=spec, reading=reading, undecodable=self._undecodable,
                           raw=self._raw, raw_compressed=self._raw_compressed, sort_lines=self.sort_lines,
                           learned=self.learned, keeps_body=self.keeps_body, stored_as_body=self.stored_as_body,
                           clock=self.clock, normaliser=self.normaliser)

    def with_learned(self, learned: Learned | None) -> ContentPart:
        """This part, with *learned* as what is learned of the page's variation."""
        part = self.with_spec(self.spec, self.reading)
        part.learned = None if learned is None or learned.empty else learned
        return part

    def _identity(self) -> tuple[Any, ...]:
        # A stable text is a function of the raw text (and of sort_lines, part of the spec): a
        # part is told by its raw hash. A part kept (or to be kept) as its body is told by its
        # body hash: never read for this.
        if self.stored_as_body or self.kept_unread:
            return ("body", self.body_hash, self.sort_lines, self.spec, self.reading)
        return (self.raw_hash, self.body_hash, self.spec, self.reading)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ContentPart):
            return NotImplemented
        return self._identity() == other._identity() and self.learned == other.learned

    def __hash__(self) -> int:
        return hash(self._identity())

    def __repr__(self) -> str:
        return (f"ContentPart(raw_hash={self._raw_hash!r}, body_hash={self.body_hash!r}, "
                f"content_hash={self._content_hash!r})")
