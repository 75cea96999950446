"""``changewatch preview --watchlist W --key KEY`` of a site watch: the pages it would watch, found
as a crawl finds them (its sitemap tree, or its links followed from the start URLs, each fetched
once under the crawl's SSRF policy, read by the crawl's own readers), with the page options rule
each one has. Nothing is stored; no page of the set is fetched but to find links."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .common import CommandError, json_line

__all__ = ["SitePreview", "preview_site", "site_json", "site_lines"]

#: pages fetched to find links at most, in link mode (a crawl follows further, up to max_pages)
LINK_FETCHES = 200
_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


@dataclass
class SitePreview:
    """The pages a site watch would watch: canonical URL → its sitemap ``<lastmod>`` (None in link
    mode or when not given), and what was left out."""

    watch: Any
    pages: dict[str, str | None] = field(default_factory=dict)
    found: int = 0  # pages the watch allows, before max_pages
    sitemaps: int = 0  # sitemaps (or robots.txt) read
    fetched: int = 0  # pages fetched for their links
    offsite: int = 0  # URLs on another host, not watched
    unfinished: str | None = None  # why the link crawl stopped before the end


class _Fetcher:
    def __init__(self, settings: Any, config: Any):
        self.settings, self.config = settings, config

    def response(self, url: str, max_bytes: int, size_setting: str) -> Any:
        """*url* fetched once under the SSRF policy, as a Scrapy response; CommandError (exit 1)."""
        from scrapy.http import Headers
        from scrapy.responsetypes import responsetypes

        from ..guard.fetch import FetchError, fetch_once

        try:
            fetched = fetch_once(url, self.config.guard.policy,
                                 timeout=self.settings.getfloat("DOWNLOAD_TIMEOUT") or 180, max_bytes=max_bytes,
                                 user_agent=self.settings.get("USER_AGENT") or "changewatch", accept=_ACCEPT,
                                 size_setting=size_setting)
        except FetchError as exc:
            raise CommandError(str(exc), 1) from None
        headers = Headers({"Content-Type": fetched.content_type} if fetched.content_type else {})
        cls = responsetypes.from_args(headers=headers, url=fetched.url, body=fetched.body)
        return cls(url=fetched.url, status=200, headers=headers, body=fetched.body)


def preview_site(watch: Any, settings: Any, config: Any) -> SitePreview:
    """The pages *watch* (a site watch) would watch now. CommandError (exit 1) when its discovery
    fails as a crawl's would (the sitemap cannot be fetched or is not whole, the start page fails)."""
    fetcher = _Fetcher(settings, config)
    preview = SitePreview(watch)
    if watch.site.sitemap is not None:
        listed = _sitemap_tree(preview, fetcher)
    else:
        listed = dict.fromkeys(_linked(preview, fetcher, settings))
    _judge(preview, listed)
    return preview


def _canonical(watch: Any, url: str) -> str:
    from ..core.urls import canonical_url

    return canonical_url(url, keep=watch.keep_params, drop=watch.drop_params)


def _judge(preview: SitePreview, listed: dict[str, str | None]) -> None:
    from ..core.siteset import bounded
    from ..watchlist.site import allowed

    watch = preview.watch
    canonical: dict[str, str | None] = {}
    for url, lastmod in listed.items():
        page = _canonical(watch, url)
        if allowed(watch.site, page):
            canonical.setdefault(page, lastmod)
    if not canonical:
        raise CommandError(f"site watch {watch.key}: empty: {'the sitemap lists' if watch.site.sitemap else 'found'} "
                           f"no page{' the watch allows' if listed else ''} ({watch.url})", 1)
    preview.found = len(canonical)
    pages, _ = bounded(canonical, watch.site.max_pages)
    preview.pages = {url: canonical[url] for url in pages}


def _sitemap_tree(preview: SitePreview, fetcher: _Fetcher) -> dict[str, str | None]:
    """Every page the sitemap tree lists (URL → lastmod), bounded as the crawl bounds it."""
    from ..core.sitemaps import MAX_CHILD_SITEMAPS, MAX_INDEX_DEPTH, MAX_SITEMAP_BYTES, SitemapError
    from ..extract.sitemaps import read_sitemap

    pages: dict[str, str | None] = {}
    todo, done, level = [preview.watch.site.sitemap], set[str](), 0
    while todo and level <= MAX_INDEX_DEPTH + 1 and len(done) <= MAX_CHILD_SITEMAPS:
        children: list[str] = []
        for url in todo[:MAX_CHILD_SITEMAPS + 1 - len(done)]:
            done.add(_canonical(preview.watch, url))
            try:
                read = read_sitemap(fetcher.response(url, MAX_SITEMAP_BYTES, "the sitemap protocol's 50 MB"))
            except SitemapError as exc:
                raise CommandError(f"site watch {preview.watch.key}: {exc} ({url}); a crawl would record this "
                                   "error and keep the last good set", 1) from None
            preview.sitemaps += 1
            preview.offsite += read.offsite
            children += read.children
            for page, lastmod in read.pages.items():
                pages.setdefault(page, lastmod)
        todo = [url for url in dict.fromkeys(children) if _canonical(preview.watch, url) not in done]
        level += 1
    return pages


def _linked(preview: SitePreview, fetcher: _Fetcher, settings: Any) -> Iterator[str]:
    """The pages found by following links from the start URLs (breadth first, ``depth`` hops),
    until max_pages pages are found or :data:`LINK_FETCHES` pages were fetched."""
    from ..extract.sitemaps import page_links
    from ..watchlist.site import allowed, followed

    watch, spec = preview.watch, preview.watch.site
    maxsize = settings.getint("DOWNLOAD_MAXSIZE") or 1 << 30
    queue = [(url, 0) for url in spec.start]
    seen = {_canonical(watch, url) for url in spec.start}
    found = 0
    while queue:
        url, hops = queue.pop(0)
        if allowed(spec, _canonical(watch, url)):
            found += 1
            yield url
        if hops >= spec.depth:
            continue
        if preview.fetched >= LINK_FETCHES or found >= spec.max_pages:
            preview.unfinished = (f"stopped after {preview.fetched} pages fetched" if found < spec.max_pages
                                  else f"stopped at max_pages ({spec.max_pages})")
            return
        try:
            response = fetcher.response(url, maxsize, "DOWNLOAD_MAXSIZE")
        except CommandError as exc:
            if hops == 0:
                raise CommandError(f"site watch {watch.key}: {exc} (the start page); a crawl would record this "
                                   "error and keep the last good set", 1) from None
            continue  # a page that fails hides its links: the crawl removes nothing for it
        preview.fetched += 1
        for link in page_links(response, spec.deny):
            page = _canonical(watch, link)
            if page not in seen and followed(spec, page):
                seen.add(page)
                queue.append((link, hops + 1))


def _rule(watch: Any, url: str) -> str:
    import re

    for n, rule in enumerate(watch.rules):
        if re.search(rule.match, url):
            return f"rule {n} ({rule.match})"
    return ""


def site_lines(preview: SitePreview) -> Iterator[str]:
    watch, spec = preview.watch, preview.watch.site
    how = (f"sitemap {spec.sitemap} ({preview.sitemaps} read)" if spec.sitemap is not None
           else f"links from {', '.join(spec.start)} ({preview.fetched} pages fetched, depth {spec.depth})")
    left = preview.found - len(preview.pages)
    yield (f"site watch {watch.key}: {how}: {len(preview.pages)} pages would be watched"
           + (f", {left} more beyond max_pages ({spec.max_pages})" if left else "")
           + (f", {preview.offsite} URLs on another host not watched" if preview.offsite else "")
           + (f"; {preview.unfinished}: a crawl follows further" if preview.unfinished else "") + "; nothing stored")
    for url, lastmod in preview.pages.items():
        extras = [part for part in (f"lastmod {lastmod}" if lastmod else "", _rule(watch, url)) if part]
        yield f"  {url}" + (f"  {'; '.join(extras)}" if extras else "")


def site_json(preview: SitePreview) -> str:
    from ..watchlist.site import page_key

    watch = preview.watch
    return json_line({
        "site_watch": watch.key, "url": watch.url, "mode": "sitemap" if watch.site.sitemap is not None else "links",
        "found": preview.found, "max_pages": watch.site.max_pages, "sitemaps_read": preview.sitemaps,
        "pages_fetched": preview.fetched, "offsite": preview.offsite, "unfinished": preview.unfinished,
        "pages": [{"url": url, "key": page_key(watch.key, url, watch.keep_params, watch.drop_params),
                   "lastmod": lastmod, "rule": _rule(watch, url) or None} for url, lastmod in preview.pages.items()],
    })
