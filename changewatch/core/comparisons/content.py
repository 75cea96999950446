"""Content: a page's stable text (visible text, volatile fragments removed), compared by hash,
then measured by simhash distance, then shown as a capped line diff."""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping
from hashlib import blake2b, sha256
from typing import Any, ClassVar

from .. import charset
from ..diff import line_diff
from ..documents import DOCUMENT_TYPES
from ..evidence import COMPRESSION, compress, decompress
from ..learned import Learned
from ..linewise import keeps_a_line_whole, same_stable_text, stable_text_longer_than
from ..normalise import (
    RegionError,
    VisibleText,
    _utf8_markup,
    decode_page_counted,
    legacy_stable_text,
    normalise_text,
    upgrade_bridge_text,
    visible_text,
)
from ..observation import Observation
from ..simhash import distance as hamming
from ..simhash import simhash
from ..text_options import VERBATIM, TextOptions, TextOptionsError
from ..textbound import first_page_read
from .base import CompareContext, Difference, Kind, Status, Unobservable, respecified, spec_digest
from .noise import learned_difference

__all__ = ["TEXT_SPEC_OPTIONS", "ContentComparison", "ContentPart", "UnreadableStoredText", "blocked",
           "first_text_passes", "text_spec"]


class UnreadableStoredText(ValueError):
    """A stored part's text or body does not decompress (or decode): the snapshot is damaged. Found
    only when the text is needed (it is decompressed on use); the key starts again from the
    observation being judged (runtime/offload.py), as with a snapshot that cannot be decoded."""


def _inflate(blob: bytes, what: str) -> str:
    try:
        return zlib.decompress(blob).decode("utf-8", "surrogatepass")
    except (zlib.error, UnicodeDecodeError) as exc:
        raise UnreadableStoredText(f"its stored {what} does not decompress: {exc}") from None

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
# Level 3: 0.19 ms for a corpus page's 13 KB of text, 39% of its size; level 6 took 0.33 ms for 37%.
_ZLIB_LEVEL = 3
#: a first page is kept unread when it surely has this many characters of text that are not
#: whitespace or digits: twice what a block page may have (core/textbound.py)
UNREAD_MIN_CHARS = 2 * BLOCKED_MAX_CHARS


def _digest(text: str) -> str:
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


#: Bumped whenever the same bytes can normalise to another text (a new volatile pattern, another
#: parser): a body hash of an older normaliser then never matches, and the page is read again.
#: 2: case and punctuation kept, dates and relative times of more languages removed.
#: 3: each byte that does not decode is a character of its own (core/charset.py), not U+FFFD.
NORMALISER_VERSION = 3


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


#: the options that decide which text a page gives (besides its region): editing one of them
#: makes the text another one, compared afresh
TEXT_SPEC_OPTIONS = ("sort_lines", "type", "include", "ignore", "rendered")


def _given(value: Any) -> Any:
    """*value* without what means "the default" (None, False, empty), at every level."""
    if isinstance(value, Mapping):
        value = {str(k): _given(v) for k, v in value.items()}
        value = {k: v for k, v in value.items() if v is not None}
    elif isinstance(value, list | tuple):
        value = [_given(v) for v in value]
    return None if value is False or (not value and value != 0) else value


def text_spec(obs: Observation) -> str:
    """How *obs*'s text is read: its region and the options that shape the text, each as given
    (absent, None, false or empty: the default). Equal specs mean the texts can be compared.

    >>> plain = Observation("k", "https://example.com/", text="x")
    >>> text_spec(plain) == text_spec(Observation("k", "https://example.com/", options={"sort_lines": False}))
    True
    >>> text_spec(plain) == text_spec(Observation("k", "https://example.com/", region="main"))
    False
    """
    given = _given({"region": obs.region, **{name: obs.options.get(name) for name in TEXT_SPEC_OPTIONS
                                             if obs.options.get(name) is not None}})
    return spec_digest(given) if given else _DEFAULT_TEXT_SPEC


_DEFAULT_TEXT_SPEC = spec_digest({})


class _Page:
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


def raw_hash(visible: VisibleText) -> str:
    """The hash of the raw text, with how its stable text is made (sorted lines or not): equal
    raw hashes mean equal stable texts."""
    return _digest(visible.raw + "\n\x00sorted" if visible.sort_lines else visible.raw)


class ContentPart:
    """The text of a page: its raw text (visible text, whitespace collapsed), the hashes of its
    raw and stable text, its simhash, and the text itself for diffs, kept compressed as stored and
    decompressed only when a diff or a check needs it.

    A part digested from a page computes its text, hashes and simhash on first use: when the
    page's body is the stored one's, nothing but the body hash is needed (not even a parse); when
    its raw text is, nothing but the raw hash; when it differs from the stored raw text in a few
    lines, the volatile patterns run over those lines only to tell whether the stable texts are
    the same (core/linewise.py), and the stable text, its hash and simhash are computed only
    when they are not. So a part keeps its **raw** text (part version 6), from which its stable
    text is made again whenever one is needed; its content hash, length and fingerprint are kept
    when they were computed, and None when not yet (a baseline whose text never changes never
    needs them). A part of versions 1 to 5 kept its stable text only (``stable_only``).

    A part *case_folded* was stored by NORMALISER_VERSION 1 (part versions 1 and 2): its text is
    case folded and trimmed of punctuation at line ends, so it is compared with the new page
    read that way (:meth:`ContentComparison.compare`). A part *fffd_decoded* was stored by
    NORMALISER_VERSION 2 or earlier (part versions 1 to 4), which read every byte that did not
    decode as U+FFFD: compared once with the new page read that way.

    *spec* says how the text was read (:func:`text_spec`; None: a part stored before specs were
    kept): a text read another way is not compared with it. *reading* says what the response
    was read as: "html" (a page's visible text) or a document's content type ("text", "json",
    "pdf": core/documents.py); None: stored before content types, when every response was read
    as a page."""

    __slots__ = ("_compressed", "_content_hash", "_fingerprint", "_length", "_page", "_raw", "_raw_compressed",
                 "_raw_hash", "_same_as", "_text", "_undecodable", "_untrusted", "_visible", "body_hash", "case_folded",
                 "fffd_decoded", "keeps_body", "learned", "reading", "sort_lines", "spec", "stored_as_body")

    def __init__(self, *, raw_hash: str | None = None, content_hash: str | None = None,
                 fingerprint: int | None = None, length: int | None = None, text: str | None = None,
                 compressed: bytes | None = None, visible: VisibleText | None = None, page: _Page | None = None,
                 body_hash: str | None = None, case_folded: bool = False, spec: str | None = None,
                 reading: str | None = None, fffd_decoded: bool = False, undecodable: int | None = None,
                 raw: str | None = None, raw_compressed: bytes | None = None, sort_lines: bool = False,
                 learned: Learned | None = None, keeps_body: bool = False, stored_as_body: bool = False):
        stable = (text is not None or compressed is not None) and content_hash is not None and length is not None
        if visible is None and page is None and raw_hash is None:
            raise ValueError("a content part needs its text (raw, stable, visible or a page) and its hashes")
        if visible is None and page is None and not stable and raw is None and raw_compressed is None:
            raise ValueError("a content part needs its text (raw, stable, visible or a page) and its hashes")
        self.body_hash = body_hash
        #: what is learned of the page's variation (core/learned.py); None: nothing
        self.learned = learned
        #: a page that may be kept as its body while it is not read: it surely has more text than a
        #: block page, and is valid UTF-8 (so no byte of it can be undecodable)
        self.keeps_body = keeps_body
        #: the part was stored as its body, unread (part version 8)
        self.stored_as_body = stored_as_body
        #: whether a part stored as its body failed a first page's checks once read (None: not read)
        self._untrusted: bool | None = None
        #: the last part this one's stable text was told against, and the answer
        self._same_as: tuple[ContentPart, bool | None] | None = None
        self.case_folded = case_folded
        self.spec = spec
        self.reading = reading
        self.fffd_decoded = fffd_decoded
        self.sort_lines = visible.sort_lines if visible is not None else page.sort_lines if page else sort_lines
        self._undecodable = undecodable
        self._page = page
        self._raw_hash = raw_hash
        self._content_hash = content_hash
        self._fingerprint = fingerprint
        self._length = length
        self._text = text
        self._compressed = compressed
        self._visible = visible
        self._raw = raw
        self._raw_compressed = raw_compressed

    @classmethod
    def of(cls, visible: VisibleText, spec: str | None = None, reading: str | None = None) -> ContentPart:
        return cls(raw_hash=raw_hash(visible), visible=visible, spec=spec, reading=reading)

    @classmethod
    def of_page(cls, html: str | bytes, encoding: str | None, sort_lines: bool, spec: str | None = None,
                options: TextOptions | None = None, url: str = "") -> ContentPart:
        """A whole page's part: its body hashed now, read only if that is not the stored one.
        Reading it may raise TextOptionsError (an ignore pattern over its time budget)."""
        key = options.key(url) if options is not None else ""
        return cls(page=_Page(html, encoding, sort_lines, options, url),
                   body_hash=body_hash(html, encoding, sort_lines, key), spec=spec, reading="html")

    @property
    def page(self) -> _Page | None:
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
        read as UTF-8 and valid UTF-8, with UNREAD_MIN_CHARS of text (core/textbound.py)."""
        page = self._page
        if self.keeps_body:
            return True
        if page is None or self._visible is not None or page.options is not None or self.reading != "html":
            return False
        html = page.html
        if not isinstance(html, bytes) or len(html) < UNREAD_MIN_CHARS:
            return False
        markup, bad = _utf8_markup(html, page.encoding, like_scrapy=True)
        if bad is not None or not (markup.isascii() or _valid_utf8(markup)):
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
            self._untrusted = _first_page_problem(self) is not None
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
    def raw(self) -> str | None:
        """The raw text (None for a part stored with its stable text only: versions 1 to 5)."""
        if self._raw is None:
            if (visible := self.visible) is not None:
                self._raw = visible.raw
            elif self._raw_compressed is not None:
                self._raw = _inflate(self._raw_compressed, "raw text")
        return self._raw

    @property
    def stable_only(self) -> bool:
        """Whether the part knows its stable text but not its raw text (stored by part versions
        1 to 5, or made from a stable text)."""
        return self._visible is None and self._page is None and self._raw is None and self._raw_compressed is None

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
            if (visible := self.visible) is not None:
                self._text = visible.stable
            elif self._compressed is not None:
                self._text = _inflate(self._compressed, "text")
            else:
                raw = self.raw
                assert raw is not None
                self._text = VisibleText(raw, sort_lines=self.sort_lines).stable
        return self._text

    @property
    def content_hash(self) -> str:
        if self._content_hash is None:
            self._content_hash = _digest(self.text)
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
        (core/linewise.py); None when that cannot be told so (a part without its raw text)."""
        if (self.stable_only or old.stable_only or self.sort_lines != old.sort_lines
                or self.case_folded or old.case_folded or self.fffd_decoded or old.fffd_decoded):
            return None
        if self._content_hash is not None and old._content_hash is not None:
            return self._content_hash == old._content_hash
        if self._same_as is not None and self._same_as[0] is old:
            return self._same_as[1]  # told once already (the checks, then the comparison)
        raw, old_raw = self.raw, old.raw
        assert raw is not None and old_raw is not None
        same = same_stable_text(old_raw, raw, sort_lines=self.sort_lines)
        self._same_as = (old, same)
        return same

    def compressed(self) -> bytes:
        """The stable text, compressed."""
        if self._compressed is None:
            self._compressed = zlib.compress(self.text.encode("utf-8", "surrogatepass"), _ZLIB_LEVEL)
        return self._compressed

    def blob(self) -> bytes:
        """What the store keeps of the text: the raw text compressed, or the stable text of a part
        that has no raw text."""
        if self.stable_only:
            return self.compressed()
        if self._raw_compressed is None:
            raw = self.raw
            assert raw is not None
            self._raw_compressed = zlib.compress(raw.encode("utf-8", "surrogatepass"), _ZLIB_LEVEL)
        return self._raw_compressed

    def with_raw_hash(self, raw_hash: str, body_hash: str | None = None, *,
                      undecodable: int | None = None) -> ContentPart:
        """This text under another raw hash and body hash (the same stable text: its compressed
        form is reused). Only for a part that keeps its stable text alone."""
        return ContentPart(raw_hash=raw_hash, content_hash=self.content_hash, fingerprint=self._fingerprint,
                           length=self.length, text=self._text, compressed=self._compressed, visible=self._visible,
                           body_hash=body_hash, spec=self.spec, reading=self.reading, undecodable=undecodable,
                           learned=self.learned)

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
        """This part, said to be read as *spec* and *reading* (a part kept across an upgrade that
        added specs or readings)."""
        return ContentPart(raw_hash=self._raw_hash, content_hash=self._content_hash, fingerprint=self._fingerprint,
                           length=self._length, text=self._text, compressed=self._compressed, visible=self._visible,
                           page=self._page, body_hash=self.body_hash, case_folded=self.case_folded, spec=spec,
                           reading=reading, fffd_decoded=self.fffd_decoded, undecodable=self._undecodable,
                           raw=self._raw, raw_compressed=self._raw_compressed, sort_lines=self.sort_lines,
                           learned=self.learned, keeps_body=self.keeps_body, stored_as_body=self.stored_as_body)

    def with_learned(self, learned: Learned | None) -> ContentPart:
        """This part, with *learned* as what is learned of the page's variation."""
        part = self.with_spec(self.spec, self.reading)
        part.learned = None if learned is None or learned.empty else learned
        return part

    def _identity(self) -> tuple[Any, ...]:
        # A stable text is a function of the raw text (and of sort_lines, part of the spec): a
        # part with its raw text is told by its raw hash; one without, by its content hash.
        # (The fingerprint is a function of the stable text, which the content hash stands for.)
        # A part kept (or to be kept) as its body is told by its body hash: never read for this.
        if self.stored_as_body or self.kept_unread:
            return ("body", self.body_hash, self.sort_lines, self.spec, self.reading)
        text = self.content_hash if self.stable_only else None
        return (self.raw_hash, text, self.body_hash, self.case_folded, self.fffd_decoded, self.spec, self.reading)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ContentPart):
            return NotImplemented
        return (self.stable_only == other.stable_only and self._identity() == other._identity()
                and self.learned == other.learned)

    def __hash__(self) -> int:
        return hash(self._identity())

    def __repr__(self) -> str:
        return (f"ContentPart(raw_hash={self._raw_hash!r}, body_hash={self.body_hash!r}, "
                f"content_hash={self._content_hash!r})")


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _first_page_problem(part: ContentPart) -> str | None:
    """Why *part* cannot be a first page (a baseline): no text, or a block page's."""
    raw = part.raw
    if raw is not None and first_text_passes(raw):
        return None
    text = part.text
    if not text.strip():
        return "empty: no visible text"
    return blocked(text)


def first_text_passes(raw: str) -> bool:
    """Whether the stable text of the raw text *raw* surely passes a first page's checks (not
    empty, not a block page's), told without making it: it is longer than a block page can be
    (:func:`~changewatch.core.linewise.stable_text_longer_than`), or it keeps a line whole (no
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


def page_text(html: str | bytes | None, text: str | None, region: str | None, sort_lines: bool,
              encoding: str | None = None, options: TextOptions | None = None, url: str = "") -> VisibleText:
    """The visible text of a page's HTML, or of text a spider extracted. CPU-bound."""
    if html is not None:
        return visible_text(html, region, sort_lines=sort_lines, encoding=encoding, like_scrapy=True,
                            options=options, url=url)
    return normalise_text(text or "", sort_lines=sort_lines, options=options)


UNDECODABLE_MIN = 16


def undecodable(html: bytes, encoding: str | None, visible: VisibleText) -> str | None:
    """Why a page shipped as bytes is garbage: much of it did not decode (a wrong or lying
    charset), and comparing it would report a change that is only an encoding accident. The
    page's visible text is looked at first; the body is decoded whole only when that text holds
    more than a few undecodable bytes (each a character of its own: core/charset.py)."""
    if visible.undecodable <= UNDECODABLE_MIN:
        return None
    text, bad = decode_page_counted(html, encoding, like_scrapy=True)
    if bad <= UNDECODABLE_MIN or bad * 10 <= len(text):
        return None
    return f"unsupported: undecodable text ({bad} of {len(text)} characters are not valid {encoding or 'utf-8'})"


def _same_body(old: ContentPart, new: ContentPart) -> bool:
    # The same bytes read another way (another region, sort_lines, include…) are another text.
    return new.body_hash is not None and old.body_hash == new.body_hash and not respecified(old.spec, new.spec)


class ContentComparison:
    name: ClassVar[str] = "content"
    kind: ClassVar[Kind] = Kind.CONTENT
    rank: ClassVar[int] = 30
    # 2: the fingerprint may be null (not computed yet: a baseline needs none until the page's
    # text changes, then it is computed from the stored text), and a body hash may be kept.
    # Version 1 parts read as ever.
    # 3: the text keeps its case and punctuation (NORMALISER_VERSION 2). Parts of versions 1 and 2
    # are read as case folded, and so is a part of version 3 that says so (one kept as the
    # baseline of a change under the threshold).
    # 4: the text's spec is kept (how it was read: region, sort_lines, type, include, ignore).
    # Parts of versions 1 to 3 have none: compared as before, once, then stored with it.
    # 5: undecodable bytes are characters of their own (NORMALISER_VERSION 3). Parts of versions
    # 1 to 4 are read as fffd_decoded, and so is a part of version 5 that says so.
    # 6: a part keeps its raw text, not its stable text (made again from it when needed), so that
    # the next page is told from the lines it does not share with it; its content hash, length
    # and fingerprint may be null (not computed yet). Parts of versions 1 to 5 (and a part of
    # version 6 without "raw") keep their stable text, as ever.
    # 7: a part may keep what is learned of the page's variation ("learned": core/learned.py).
    # Parts of versions 1 to 6 have nothing learned.
    # 8: a first page whose body surely has more text than a block page is kept as its body
    # ("body": its compression), unread, until a later body differs from it (read then, and kept
    # as its text from then on). Parts of versions 1 to 7 are never kept so.
    part_version: ClassVar[int] = 8

    def digest(self, obs: Observation) -> ContentPart | None:
        if obs.html is None and obs.text is None:
            return None
        sort_lines = bool(obs.options.get("sort_lines", False))
        spec = text_spec(obs)
        try:
            options = TextOptions.of(obs.options)  # include, ignore (None: neither; the common case)
        except TextOptionsError as exc:
            raise Unobservable(str(exc)) from None
        if obs.html is not None and not obs.region:
            # Read when needed (check, compare, encode): not at all when the body is the stored one's
            return ContentPart.of_page(obs.html, obs.encoding, sort_lines, spec, options, obs.url)
        try:
            visible = page_text(obs.html, obs.text, obs.region, sort_lines, obs.encoding, options, obs.url)
        except RegionError as exc:
            raise Unobservable(f"region: {exc}") from None
        except TextOptionsError as exc:
            raise Unobservable(str(exc)) from None
        if isinstance(obs.html, bytes) and (why := undecodable(obs.html, obs.encoding, visible)):
            raise Unobservable(why)
        if obs.region and obs.html is not None and not visible.stable:
            self._explain_empty_region(obs.html, obs.region, obs.encoding)
        reading = obs.options.get("content_type")
        return ContentPart.of(visible, spec, reading if obs.html is None and reading in DOCUMENT_TYPES else "html")

    @staticmethod
    def _explain_empty_region(html: str | bytes, region: str, encoding: str | None = None) -> None:
        """A region with no text: a blocked page says so outside the region; a redesign leaves
        the region matching nothing. Either is an error, never a change to empty."""
        whole = visible_text(html, encoding=encoding, like_scrapy=True).stable
        if whole and (why := blocked(whole)):
            raise Unobservable(why)
        if whole:
            raise Unobservable(f"extraction: region {region!r} matched nothing")

    def check(self, old: ContentPart | None, new: ContentPart) -> str | None:
        try:
            return self._check(old, new)
        except TextOptionsError as exc:  # a page read here, first (ignore.text over its time budget)
            return str(exc)

    def _check(self, old: ContentPart | None, new: ContentPart) -> str | None:
        # A text read another way (the watch was edited) is a new one: it did not collapse from the
        # old one, and passed no check as it. The old text still says which phrases are the page's.
        # So is a text read as another type (a server now serves the page as a PDF).
        fresh = old is not None and (respecified(old.spec, new.spec) or old.reading != new.reading)
        if old is not None and _same_body(old, new):
            return None  # the last good page, byte for byte: it passed these checks
        if old is not None and old.untrusted():
            old, fresh = None, False  # a first page kept unread that, read now, was none: this one is first
        if (old is None or fresh) and new.keep_unread_if_long():
            return None  # surely too long to be empty or a block page: kept unread, as its body
        if old is not None and not fresh and old.raw_hash == new.raw_hash:
            return None  # the page reads as the last good one did, which passed these checks
        page = new.page
        if page is not None and isinstance(page.html, bytes) and new.visible is not None and (
                why := undecodable(page.html, page.encoding, new.visible)):
            return why
        if old is not None and not fresh:
            if new.same_stable_text(old):
                return None  # its stable text is the last good page's, which passed these checks
        elif (raw := new.raw) is not None and first_text_passes(raw):
            return None  # a first text (or one read anew) surely not empty, nor a block page's
        text = new.text
        if not text.strip():
            return "empty: no visible text"
        if why := blocked(text, old):
            return why
        if (old is not None and not fresh and old.length >= COLLAPSE_MIN_CHARS
                and new.length < COLLAPSE_RATIO * old.length):
            return (f"collapsed: visible text fell to {new.length} characters "
                    f"from {old.length} on the last good page")
        return None

    def compare(self, old: ContentPart, new: ContentPart, context: CompareContext) -> Difference:
        if respecified(old.spec, new.spec):
            # The watch reads another text now (region, sort_lines, include…): it starts afresh, as
            # a new watch's would, and is kept as read now (the page is read even if its body is
            # the stored one's).
            return Difference(Status.NONE, keep=new, counters={"rebaselined": 1})
        if old.reading is None and new.reading in DOCUMENT_TYPES:
            # Stored before content types, when a text file, a JSON document or a PDF was read as
            # a page (a text file's lines collapsed into one): the new reading cannot be compared
            # with that one, and becomes the baseline, silently, once. A document read as another
            # type since (a page that a server now serves as a PDF) is compared as any text.
            return Difference(Status.NONE, keep=new, counters={"rebaselined": 1})
        if not _same_body(old, new) and old.untrusted():
            # The stored first page, kept unread, turns out empty or blocked now that it is read:
            # no baseline to compare with. This page (which passed a first page's checks) is one.
            return Difference(Status.NONE, keep=new, counters={"rebaselined": 1, "unread_baseline_replaced": 1})
        difference = self._compare(old, new, context)
        kept = difference.keep
        if kept is not None and (kept.spec, kept.reading) != (new.spec, new.reading):
            # a part stored before specs or readings: now it has them
            difference = Difference(difference.status, difference.members, kept.with_spec(new.spec, new.reading),
                                    difference.counters)
        return learned_difference(old, new, difference, context)

    def _compare(self, old: ContentPart, new: ContentPart, context: CompareContext) -> Difference:
        if old.case_folded:
            return self._compare_case_folded(old, new, context)
        if old.fffd_decoded:
            return self._compare_fffd_decoded(old, new, context)
        if _same_body(old, new):  # the same bytes: the same text, not even parsed
            new.same_body_as(old)
            return Difference(Status.NONE, keep=old)
        if old.raw_hash == new.raw_hash:  # the same raw text: the same stable text, not computed
            if old.stored_as_body:
                return Difference(Status.NONE, keep=new)  # kept as its text from now on: read once
            if old.body_hash is None and new.body_hash is not None:
                # a baseline from before body hashes: kept with this body's, once
                return Difference(Status.NONE, keep=old.with_raw_hash(old.raw_hash, new.body_hash,
                                                                          undecodable=new.undecodable))
            return Difference(Status.NONE, keep=old)
        same = new.same_stable_text(old)  # from the lines the raw texts do not share, when both have them
        if same is None:
            same = old.content_hash == new.content_hash
        if same and new.stable_only:
            return Difference(Status.NOISE, keep=old.with_raw_hash(new.raw_hash, new.body_hash,
                                                                     undecodable=new.undecodable))
        if same:  # kept with its own raw text, which the next page is told from
            return Difference(Status.NOISE, keep=new.with_stable_text_of(old))
        dist = hamming(old.fingerprint, new.fingerprint)
        threshold = context.option("threshold", context.threshold)
        if threshold is not None and dist <= threshold:
            # Keep the old text as the baseline, so slow drift adds up until it is reported.
            return Difference(Status.NOISE, {"distance": dist}, keep=old)
        return self._changed(old.text, new.text, dist, context)

    @staticmethod
    def _changed(old_text: str, new_text: str, dist: int, context: CompareContext) -> Difference:
        options = context.diff
        # An undecodable byte is shown as \x80: the character it is compared as has no glyph.
        diff = charset.readable(line_diff(old_text, new_text, context=options.context, max_lines=options.max_lines,
                                          max_chars=options.max_chars))
        return Difference(Status.CHANGED, {"distance": dist, "diff": diff})

    def _compare_case_folded(self, old: ContentPart, new: ContentPart, context: CompareContext) -> Difference:
        """The first comparison with a baseline of NORMALISER_VERSION 1: the new page is read as
        that version read it (case folded, its patterns, punctuation trimmed at line ends) and
        compared with it, so a change made since is reported while what only the new reading
        differs in (case, punctuation, other languages' dates) is not. The new part is kept, in
        the new form; its diff, this once, is of the folded texts."""
        visible = new.visible
        assert visible is not None  # a part digested from an observation has its text
        then = legacy_stable_text(visible.raw, sort_lines=visible.sort_lines)
        if _digest(then) == old.content_hash:
            return Difference(Status.NONE, keep=new)
        # Other languages' dates and relative times, which version 1 kept, moved meanwhile: the
        # new patterns (over both folded texts) tell that from a change.
        sort_lines = visible.sort_lines
        if upgrade_bridge_text(old.text, sort_lines=sort_lines) == upgrade_bridge_text(then, sort_lines=sort_lines):
            return Difference(Status.NONE, keep=new)
        dist = hamming(old.fingerprint, simhash(then))
        threshold = context.option("threshold", context.threshold)
        if threshold is not None and dist <= threshold:
            return Difference(Status.NOISE, {"distance": dist}, keep=old)
        return self._changed(old.text, then, dist, context)

    def _compare_fffd_decoded(self, old: ContentPart, new: ContentPart, context: CompareContext) -> Difference:
        """The first comparison with a baseline of NORMALISER_VERSION 2: the new page is read
        as that version read it (each run of undecodable bytes one U+FFFD) and compared with it,
        so a page that was always mis-encoded is no change (its bad bytes only read apart now)
        while a change made since is reported. The new part is kept, in the new form."""
        visible = new.visible
        assert visible is not None  # a part digested from an observation has its text
        then = VisibleText(charset.replaced(visible.raw), sort_lines=visible.sort_lines)
        if raw_hash(then) == old.raw_hash or _digest(then.stable) == old.content_hash:
            return Difference(Status.NONE, keep=new)
        dist = hamming(old.fingerprint, simhash(then.stable))
        threshold = context.option("threshold", context.threshold)
        if threshold is not None and dist <= threshold:
            return Difference(Status.NOISE, {"distance": dist}, keep=old)
        return self._changed(old.text, then.stable, dist, context)

    def counters(self, part: ContentPart) -> Mapping[str, int]:
        # A page not read (its body was the stored one's) says what it said when it was read.
        counted = {"charset/undecodable_pages": 1} if part.undecodable else {}
        if part.kept_unread and not part.stored_as_body:
            counted["kept_unread"] = 1  # a first page kept as its body: surely long, not read
        return counted

    def encode(self, part: ContentPart) -> tuple[Any, bytes | None]:
        # A fingerprint not computed yet stays so (simhash is 0.36 ms of a corpus page: a baseline
        # whose text never changes never needs it). Two's complement: SQLite and PostgreSQL
        # integers (and most JSON readers) are signed 64-bit.
        if part.kept_unread:
            return self._encode_body(part)
        fp = part.known_fingerprint
        signed = None if fp is None else fp - (1 << 64) * (fp >> 63)
        # A part keeps its raw text (its stable text is made again when needed); its content hash
        # and length only once computed. A part without its raw text keeps the stable text.
        data: dict[str, Any] = {"raw_hash": part.raw_hash, "content_hash": part.known_content_hash,
                                "fingerprint": signed, "length": part.known_length}
        if not part.stable_only:
            data["raw"] = True
            if part.sort_lines:
                data["sort_lines"] = True
        if part.body_hash is not None:
            data["body_hash"] = part.body_hash
        if part.case_folded:
            data["case_folded"] = True
        if part.spec is not None:
            data["spec"] = part.spec
        if part.reading is not None:
            data["reading"] = part.reading  # even "html": a part without it was stored before content types
        if part.fffd_decoded:
            data["fffd_decoded"] = True
        if part.undecodable:
            data["undecodable"] = part.undecodable
        if part.learned is not None:
            data["learned"] = part.learned.encode()
        return data, part.blob()

    @staticmethod
    def _encode_body(part: ContentPart) -> tuple[Any, bytes | None]:
        # A first page not read (part version 8): its body, compressed, and how to read it.
        page = part.page
        assert page is not None
        data: dict[str, Any] = {"body": COMPRESSION, "body_hash": part.body_hash, "encoding": page.encoding,
                                "reading": part.reading}
        if part.sort_lines:
            data["sort_lines"] = True
        if part.spec is not None:
            data["spec"] = part.spec
        if part.learned is not None:
            data["learned"] = part.learned.encode()
        return data, page.compressed()

    @staticmethod
    def _decode_body(data: dict[str, Any], blob: bytes) -> ContentPart | None:
        if data["body"] != COMPRESSION or not isinstance(data.get("body_hash"), str):
            return None
        spec, encoding = data.get("spec"), data.get("encoding")
        sort_lines = bool(data.get("sort_lines"))
        return ContentPart(page=_Page(None, encoding if isinstance(encoding, str) else None, sort_lines,
                                      compressed=blob),
                           body_hash=data["body_hash"], spec=spec if isinstance(spec, str) else None,
                           reading=data.get("reading"), undecodable=0,
                           learned=Learned.decode(data["learned"]) if "learned" in data else None,
                           keeps_body=True, stored_as_body=True)

    def decode(self, data: Any, blob: bytes | None, version: int) -> ContentPart | None:
        if version not in (1, 2, 3, 4, 5, 6, 7, 8) or not isinstance(data, dict) or blob is None:
            return None
        if version >= 8 and "body" in data:
            return self._decode_body(data, blob)
        spec = data.get("spec") if version >= 4 else None
        fp = data.get("fingerprint")
        known = {"raw_hash": data["raw_hash"], "fingerprint": None if fp is None else int(fp) & ((1 << 64) - 1),
                 "body_hash": data.get("body_hash"), "spec": spec if isinstance(spec, str) else None,
                 "reading": data.get("reading"), "undecodable": int(data.get("undecodable") or 0),
                 "learned": Learned.decode(data["learned"]) if version >= 7 and "learned" in data else None}
        if version >= 6 and data.get("raw"):
            length = data.get("length")
            return ContentPart(**known, content_hash=data.get("content_hash"),
                               length=None if length is None else int(length), raw_compressed=blob,
                               sort_lines=bool(data.get("sort_lines")), fffd_decoded=bool(data.get("fffd_decoded")))
        return ContentPart(**known, content_hash=data["content_hash"], length=int(data["length"]), compressed=blob,
                           case_folded=version < 3 or bool(data.get("case_folded")),
                           fffd_decoded=version < 5 or bool(data.get("fffd_decoded")))
