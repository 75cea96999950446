"""A site watch (docs/watchlist.md, "Watching a whole site"): how its page set is found
(:class:`SiteSpec`), which of the URLs found are watched and followed (:func:`allowed`,
:func:`followed`), and each page's own watch (:func:`page_watch`: the site watch's page options,
the first matching rule applied, under :func:`page_key`)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.urls import canonical_url

if TYPE_CHECKING:
    from .watch import Watch

__all__ = ["DEFAULT_DEPTH", "DEFAULT_MAX_PAGES", "KEY_SEPARATOR", "PageRule", "SiteSpec", "allowed", "followed",
           "page_key", "page_options", "page_watch", "site_of_key"]

#: between a site watch's key and a page's canonical URL in the page's key (no watch key has one)
KEY_SEPARATOR = "|"
DEFAULT_DEPTH = 3
DEFAULT_MAX_PAGES = 10_000


@dataclass(frozen=True, slots=True)
class SiteSpec:
    """Where a site watch's pages are found: a sitemap (a sitemap index, ``.xml.gz`` or
    robots.txt) or, in link mode, start URLs whose links are followed. Exactly one of the two."""

    sitemap: str | None = None
    start: tuple[str, ...] = ()
    #: regular expressions searched in a URL found: the pages watched (none: every page found)
    allow: tuple[str, ...] = ()
    #: never requested, neither watched nor followed
    deny: tuple[str, ...] = ()
    #: link mode: pages requested to find more pages, not watched themselves
    follow: tuple[str, ...] = ()
    #: link mode: link hops from a start URL
    depth: int = DEFAULT_DEPTH
    #: at most this many pages are watched (the first ones in a stable order)
    max_pages: int = DEFAULT_MAX_PAGES
    #: how often the page set is discovered again, in seconds (None: every run)
    every: float | None = None

    @property
    def url(self) -> str:
        """The sitemap, or the first start URL: the ``url`` of the page set's records."""
        return self.sitemap if self.sitemap is not None else self.start[0]


@dataclass(frozen=True, slots=True)
class PageRule:
    """``rules:`` entry of a site watch: pages whose URL *match* (``re.search``) finds are
    watched with *watch*'s options: the site watch's, with the *options* the rule names replaced
    (a rule's ``null`` unsets one)."""

    match: str
    #: the options the rule gives, as the watchlist names them
    options: tuple[str, ...]
    #: the page options with the rule applied (its url and key are empty: :func:`page_watch` sets them)
    watch: Watch
    #: the text options (include, ignore) the rule sets to a value (a ``null`` unsets, and sets none)
    text_options: tuple[str, ...] = ()


def _any(patterns: Iterable[str], url: str) -> bool:
    return any(re.search(pattern, url) for pattern in patterns)


def allowed(spec: SiteSpec, url: str) -> bool:
    """Whether *url* is a page of the site to watch: an ``allow`` pattern (if any) finds it and no
    ``deny`` pattern does.

    >>> spec = SiteSpec(sitemap="https://s.example/sitemap.xml", allow=("/guide/",), deny=("/archive/",))
    >>> allowed(spec, "https://s.example/guide/a"), allowed(spec, "https://s.example/guide/archive/a")
    (True, False)
    """
    return (not spec.allow or _any(spec.allow, url)) and not _any(spec.deny, url)


def followed(spec: SiteSpec, url: str) -> bool:
    """Link mode: whether *url* is requested to find more pages: a page watched (:func:`allowed`)
    or one a ``follow`` pattern finds, and no ``deny`` pattern finds it.

    >>> spec = SiteSpec(start=("https://b.example/",), allow=(r"/posts/[^/]+$",), follow=(r"/page/\\d+$",))
    >>> followed(spec, "https://b.example/page/2"), allowed(spec, "https://b.example/page/2")
    (True, False)
    """
    if _any(spec.deny, url):
        return False
    return not spec.allow or _any(spec.allow, url) or _any(spec.follow, url)


def page_key(site_key: str, url: str, keep: Iterable[str] = (), drop: Iterable[str] = ()) -> str:
    """A site page's key: the site watch's key, ``|``, the page's canonical URL (tracking
    parameters and fragment stripped; *keep* and *drop* as the watch's keep_params and drop_params).

    >>> page_key("docs", "https://docs.example/guide/?utm_source=x#top")
    'docs|https://docs.example/guide/'
    """
    return f"{site_key}{KEY_SEPARATOR}{canonical_url(url, keep=keep, drop=drop)}"


def site_of_key(key: str) -> str | None:
    """The site watch's key of a page's key (None: the key is not a site page's).

    >>> site_of_key("docs|https://docs.example/guide/"), site_of_key("https://docs.example/")
    ('docs', None)
    """
    site, separator, _ = key.partition(KEY_SEPARATOR)
    return site if separator else None


def page_options(site: Watch, url: str) -> Watch:
    """The watch whose page options the page at *url* of *site* has: the first rule's whose
    ``match`` finds the URL, else the site watch itself (its url and key are not the page's)."""
    return next((rule.watch for rule in site.rules if re.search(rule.match, url)), site)


def page_watch(site: Watch, url: str) -> Watch:
    """The watch of the page at *url* of the site watch *site*: the site watch's page options,
    those of the first rule whose ``match`` finds the URL in their place; ``url`` the page's,
    ``key`` :func:`page_key`, ``site_watch`` the site watch's key."""
    key = page_key(site.key, url, site.keep_params, site.drop_params)
    return dataclasses.replace(page_options(site, url), url=url, key=key, site_watch=site.key, site=None, rules=(),
                               canary=None)
