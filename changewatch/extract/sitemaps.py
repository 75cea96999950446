"""Reading a site watch's discovery responses with Scrapy's own parts: a sitemap (an index,
``.xml.gz``, ``alternate`` links) with ``scrapy.utils.sitemap.Sitemap``, robots.txt's
``Sitemap:`` lines with ``sitemap_urls_from_robots``, a page's links with ``LinkExtractor``.

A sitemap is read by ``Sitemap`` (lxml in recover mode) only after
:func:`changewatch.core.sitemaps.check_sitemap` has seen it whole: a truncated file must never
read as a shorter list of pages."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.utils.gz import gunzip, gzip_magic_number
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots

from ..core.sitemaps import MAX_SITEMAP_BYTES, SitemapError, check_sitemap

__all__ = ["SitemapRead", "is_robots", "page_links", "read_sitemap", "same_host"]


@dataclass(slots=True)
class SitemapRead:
    """What one sitemap response lists: child sitemaps (an index, robots.txt) or pages (URL →
    its ``<lastmod>`` text); URLs on another host than the sitemap's are counted, not kept."""

    children: list[str] = field(default_factory=list)
    pages: dict[str, str | None] = field(default_factory=dict)
    offsite: int = 0


def same_host(url: str, other: str) -> bool:
    """Whether two URLs are on one host (scheme and port aside: a sitemap may list https pages)."""
    return (urlsplit(url).hostname or "").lower() == (urlsplit(other).hostname or "").lower()


def is_robots(url: str) -> bool:
    return urlsplit(url).path.endswith("/robots.txt")


def _body(response: Response) -> bytes:
    body = response.body
    if gzip_magic_number(response):  # a .xml.gz file (a Content-Encoding was undone already)
        try:
            body = gunzip(body, max_size=MAX_SITEMAP_BYTES)
        except ValueError as exc:
            raise SitemapError(f"too large: the gzipped sitemap is over {MAX_SITEMAP_BYTES:,} bytes "
                               f"uncompressed ({exc})") from None
        except OSError as exc:
            raise SitemapError(f"truncated: the gzipped sitemap cannot be decompressed ({exc})") from None
    return body


def read_sitemap(response: Response, page: Callable[[str, str | None], None] | None = None) -> SitemapRead:
    """The sitemap (or robots.txt) in *response*; :class:`SitemapError` when it is not whole.
    *page*: called with each page (URL, ``<lastmod>`` text) as it is read, instead of keeping
    them in ``pages`` (a large sitemap's pages are then never held twice)."""
    read = SitemapRead()
    keep = page if page is not None else read.pages.setdefault
    if is_robots(response.url):
        for url in sitemap_urls_from_robots(response.body, base_url=response.url):
            _keep(read.children, read, response.url, url)
        if not read.children:
            raise SitemapError(f"empty: {response.url} names no sitemap")
        return read
    body = _body(response)
    root = check_sitemap(body)
    sitemap = Sitemap(body)
    for entry in sitemap:
        loc = (entry.get("loc") or "").strip()
        if not loc:
            continue
        url = urljoin(response.url, loc)
        if root == "sitemapindex":
            _keep(read.children, read, response.url, url)
            continue
        if same_host(url, response.url):
            keep(url, entry.get("lastmod"))
        else:
            read.offsite += 1
        for alternate in entry.get("alternate") or ():
            other = urljoin(response.url, alternate)
            if same_host(other, response.url):
                keep(other, entry.get("lastmod"))
    return read


def _keep(children: list[str], read: SitemapRead, base: str, url: str) -> None:
    if same_host(url, base):
        children.append(url)
    else:
        read.offsite += 1


def page_links(response: Response, deny: tuple[str, ...]) -> list[str]:
    """The links of an HTML page to pages on its own host that no *deny* pattern finds
    (``LinkExtractor``: duplicates once, ``rel=nofollow`` honoured; the crawl canonicalises them)."""
    if not isinstance(response, TextResponse):
        return []
    # LinkExtractor's allow_domains does not match an address literal (a local site): the host is
    # compared here
    extractor = LinkExtractor(deny=deny, unique=True)
    try:
        return [link.url for link in extractor.extract_links(response)
                if not link.nofollow and same_host(link.url, response.url)]
    except (ValueError, TypeError):  # not HTML after all
        return []
