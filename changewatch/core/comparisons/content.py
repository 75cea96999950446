"""Content: a page's stable text (visible text, volatile fragments removed), compared by hash,
then measured by simhash distance, then shown as a capped line diff. The part it keeps is
:mod:`.content_part`; what a page must not be, :mod:`.block_pages`; what is learned of a page's
variation, :mod:`.noise`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

from ..diff import line_diff
from ..documents import DOCUMENT_TYPES
from ..observation import Observation
from ..simhash import distance as hamming
from ..text import charset
from ..text.lxml_walker import RegionError
from ..text.clock_times import parse_fetch_time
from ..text.normalise import NORMALISER_VERSION, normalise_text, visible_text
from ..text.options import TextOptions, TextOptionsError
from ..text.visible import VisibleText
from .base import CompareContext, Difference, Kind, Status, Unobservable, respecified, spec_digest
from .block_pages import COLLAPSE_MIN_CHARS, COLLAPSE_RATIO, blocked, first_text_passes, undecodable
from .content_part import ContentPart
from .content_store import decode_part, encode_part
from .noise import learned_difference

__all__ = ["TEXT_SPEC_OPTIONS", "ContentComparison", "page_text", "text_spec"]


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


def page_text(html: str | bytes | None, text: str | None, region: str | None, sort_lines: bool,
              encoding: str | None = None, options: TextOptions | None = None, url: str = "") -> VisibleText:
    """The visible text of a page's HTML, or of text a spider extracted. CPU-bound."""
    if html is not None:
        return visible_text(html, region, sort_lines=sort_lines, encoding=encoding, like_scrapy=True,
                            options=options, url=url)
    return normalise_text(text or "", sort_lines=sort_lines, options=options)


def _same_body(old: ContentPart, new: ContentPart) -> bool:
    # The same bytes read another way (another region, sort_lines, include…) are another text.
    return new.body_hash is not None and old.body_hash == new.body_hash and not respecified(old.spec, new.spec)


class ContentComparison:
    name: ClassVar[str] = "content"
    kind: ClassVar[Kind] = Kind.CONTENT
    rank: ClassVar[int] = 30
    # The part's format (content_store.py): a part of another version is not read, and the key
    # starts again from its next observation, silently.
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
            return ContentPart.of_page(obs.html, obs.encoding, sort_lines, spec, options, obs.url,
                                       fetched=parse_fetch_time(obs.observed_at))
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
        return ContentPart.of(visible, spec, reading if obs.html is None and reading in DOCUMENT_TYPES else "html",
                              fetched=parse_fetch_time(obs.observed_at))

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
        fresh = old is not None and (respecified(old.spec, new.spec) or old.reading != new.reading
                                     or old.normaliser != NORMALISER_VERSION)
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
        elif first_text_passes(new.raw):
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
        if old.normaliser != NORMALISER_VERSION:
            # Read by another normaliser (which left out other fragments): the page starts afresh
            # as read now, silently, with nothing learned of the old reading.
            return Difference(Status.NONE, keep=new.with_learned(None), counters={"rebaselined": 1})
        if not _same_body(old, new) and old.untrusted():
            # The stored first page, kept unread, turns out empty or blocked now that it is read:
            # no baseline to compare with. This page (which passed a first page's checks) is one.
            return Difference(Status.NONE, keep=new, counters={"rebaselined": 1, "unread_baseline_replaced": 1})
        difference = self._compare(old, new, context)
        kept = difference.keep
        if kept is not None and (kept.spec, kept.reading) != (new.spec, new.reading):
            # the text kept was read as another type (a server now serves the page as a PDF): it
            # says how the page reads now
            difference = dataclasses.replace(difference, keep=kept.with_spec(new.spec, new.reading))
        return learned_difference(old, new, difference, context)

    def _compare(self, old: ContentPart, new: ContentPart, context: CompareContext) -> Difference:
        if _same_body(old, new):  # the same bytes: the same text, not even parsed
            new.same_body_as(old)
            return Difference(Status.NONE, keep=old)
        if old.raw_hash == new.raw_hash:  # the same raw text: the same stable text, not computed
            new.carry_clock(old)
            if old.stored_as_body:
                return Difference(Status.NONE, keep=new)  # kept as its text from now on: read once
            return Difference(Status.NONE, keep=old)
        same = new.same_stable_text(old)  # from the lines the raw texts do not share
        if same is None:
            same = old.content_hash == new.content_hash
        if same:  # kept with its own raw text, which the next page is told from
            return Difference(Status.NOISE, keep=new.with_stable_text_of(old))
        dist = hamming(old.fingerprint, new.fingerprint)
        threshold = context.option("threshold", context.threshold)
        if threshold is not None and dist <= threshold:
            # Keep the old text as the baseline, so slow drift adds up until it is reported (or
            # until the page is kept as a version for another change: its text is then this one).
            return Difference(Status.NOISE, {"distance": dist}, keep=old, keep_as_version=new)
        return self._changed(old.text, new.text, dist, context)

    @staticmethod
    def _changed(old_text: str, new_text: str, dist: int, context: CompareContext) -> Difference:
        options = context.diff
        # An undecodable byte is shown as \x80: the character it is compared as has no glyph.
        diff = charset.readable(line_diff(old_text, new_text, context=options.context, max_lines=options.max_lines,
                                          max_chars=options.max_chars))
        return Difference(Status.CHANGED, {"distance": dist, "diff": diff})

    def counters(self, part: ContentPart) -> Mapping[str, int]:
        # A page not read (its body was the stored one's) says what it said when it was read.
        counted = {"charset/undecodable_pages": 1} if part.undecodable else {}
        if part.kept_unread and not part.stored_as_body:
            counted["kept_unread"] = 1  # a first page kept as its body: surely long, not read
        return counted

    def encode(self, part: ContentPart) -> tuple[Any, bytes | None]:
        return encode_part(part)

    def decode(self, data: Any, blob: bytes | None, version: int) -> ContentPart | None:
        return decode_part(data, blob) if version == self.part_version else None
