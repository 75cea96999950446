"""Scrapy's MetaRefreshMiddleware, reading only the head of a page it already knows the encoding of.

Scrapy looks for ``<meta http-equiv="refresh">`` in the first 4,096 characters of every HTML
response, but takes them from ``response.text``: the whole body decoded (0.4 ms for a 230 KB page
here) and that text then held by the response until it is freed. The crawl process never needs
the text otherwise (workers read the page), and the responses waiting for a worker held 8 to 22 MB
of it (docs/performance.md, "Memory"). The same 4,096 characters come from decoding the head
of the body when its encoding is declared (BOM, ``Content-Type``, a ``<meta charset>``):
that is :meth:`head_meta_refresh`. A page that declares none is left to Scrapy, which infers an
encoding from the whole body; so is any head that decodes to too few characters to be sure of
the first 4,096. The answer is Scrapy's in every case (tests/middlewares/test_metarefresh.py runs
both over the corpus and over edge cases of encodings); ``METAREFRESH_ENABLED``,
``METAREFRESH_IGNORE_TAGS`` and ``METAREFRESH_MAXDELAY`` mean what they mean in Scrapy.

:class:`changewatch.Addon` puts it in the place of Scrapy's (priority 580) unless the project's
``DOWNLOADER_MIDDLEWARES`` names Scrapy's own.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable
from typing import cast

from scrapy import Request, Spider
from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware as ScrapyMetaRefreshMiddleware
from scrapy.http import HtmlResponse, Response, TextResponse
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.response import get_meta_refresh
from w3lib import html
from w3lib.encoding import html_to_unicode

from .dropped import NotesRedirectLoops

__all__ = ["MetaRefreshMiddleware", "head_meta_refresh"]

_CHARS = 4096  # what Scrapy reads (scrapy.utils.response.get_meta_refresh, get_base_url)
#: bytes decoded: 4,096 characters take at most 16 KB in UTF-8, UTF-32 or GB 18030; a stateful
#: encoding (ISO-2022, UTF-7) may take more, and is caught by the length check
_HEAD = 32 * 1024
_MARGIN = 16  # characters past 4,096 that show the cut did not fall inside them
#: bytes that hold the first 4,096 characters in any scannable encoding (EUC-KR writes some Hangul
#: syllables in 8 bytes, no other more: tests/middlewares/test_metarefresh.py checks every codec)
_REFRESH_SCAN = 8 * _CHARS


#: the ASCII-compatible encodings of the web (WHATWG's Encoding Standard, by Python's codec names):
#: each ASCII character is its own byte, and nothing can be written between two of them (unlike
#: ISO-2022-JP's escape sequences, UTF-7's or Python's unicode_escape's), so a word their bytes lack
#: is a word their text lacks
_SCANNABLE = frozenset({
    "utf-8", "ascii", "iso8859-1", "cp866", "koi8-r", "koi8-u", "mac-roman", "mac-cyrillic", "cp874", "cp932", "cp949",
    *(f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 15, 16)), *(f"cp{n}" for n in range(1250, 1259)),
    "gbk", "gb2312", "gb18030", "big5", "big5hkscs", "euc_jp", "shift_jis", "euc_kr",
})


def _scannable(encoding: str) -> bool:
    """Whether *encoding* (Python's name or an alias) is one of :data:`_SCANNABLE`."""
    try:
        return codecs.lookup(encoding).name in _SCANNABLE
    except (LookupError, TypeError, ValueError):
        return False


def _declared_encoding(response: TextResponse) -> str | None:
    """The encoding the response declares (given, BOM, header, ``<meta>``), or None: Scrapy would
    infer one from the whole body. Scrapy's own answer, read from its private method; a Scrapy
    without it gets None, which is always safe (Scrapy's path)."""
    declared = getattr(response, "_declared_encoding", None)
    return declared() if callable(declared) else None


def head_meta_refresh(response: TextResponse, ignore_tags: Iterable[str] = ("script", "noscript"),
                      ) -> tuple[None, None] | tuple[float, str]:
    """``scrapy.utils.response.get_meta_refresh(response, ignore_tags)``, without decoding the
    whole body when its encoding is declared."""
    declared = _declared_encoding(response)
    if declared is not None and _scannable(declared) and response.body[:_REFRESH_SCAN].lower().find(b"refresh") < 0:
        # what Scrapy's test needs ("refresh" in a tag's attributes, lowered) is not in its bytes: it
        # has none in its text either (most pages; bytes.lower() and find(): 24 µs for 32 KB, where a
        # case-insensitive regex took 160)
        return None, None
    if declared is None or len(response.body) <= _HEAD:
        return get_meta_refresh(response, ignore_tags=ignore_tags)
    encoding = response.encoding
    # as TextResponse.text decodes (a BOM wins over the declared charset), on the head only
    head = html_to_unicode(f"charset={encoding}", response.body[:_HEAD])[1]
    if len(head) < _CHARS + _MARGIN:
        return get_meta_refresh(response, ignore_tags=ignore_tags)
    text = head[:_CHARS]
    base = html.get_base_url(text, response.url, encoding)
    return html.get_meta_refresh(text, base, encoding, ignore_tags=ignore_tags)


class MetaRefreshMiddleware(NotesRedirectLoops, ScrapyMetaRefreshMiddleware):
    """Scrapy's MetaRefreshMiddleware (same settings, same redirects), but the whole body is
    decoded only when the page does not declare its encoding; a loop it ends is noted
    (:mod:`changewatch.middlewares.dropped`)."""

    def process_response(self, request: Request, response: Response,
                         spider: Spider | None = None) -> Request | Response:
        if (request.meta.get("dont_redirect", False) or request.method == "HEAD"
                or not isinstance(response, HtmlResponse)
                or urlparse_cached(request).scheme not in {"http", "https"}):
            return response
        interval, url = head_meta_refresh(response, ignore_tags=self._ignore_tags)
        if not url:
            return response
        redirected = self._redirect_request_using_get(request, response, url)
        if urlparse_cached(redirected).scheme not in {"http", "https"}:
            return response
        if cast("float", interval) < self._maxdelay:
            return self._redirect(redirected, request, "meta refresh")
        return response
