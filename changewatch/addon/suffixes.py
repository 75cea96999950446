"""Scrapy's cookie middleware asks tldextract whether a cookie's domain is a public suffix, and
tldextract, with no list cached yet, fetches the Public Suffix List from the internet first: a
crawl with no internet (or whose egress allows only the watched sites) logged a traceback of that
fetch, then read the snapshot tldextract ships. A crawl reads that snapshot at once instead.

It is the list of tldextract's release, which is enough to refuse a cookie set for a public suffix
(``co.uk``, ``github.io``); ``TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS`` (tldextract's own variable, the
list's URLs or files, one a line) still names lists to fetch, and then nothing is changed."""

from __future__ import annotations

import os

__all__ = ["use_bundled_suffix_list"]


def use_bundled_suffix_list() -> bool:
    """Make Scrapy's cookie middleware read tldextract's bundled Public Suffix List, without
    fetching one (unless the environment names lists, or the list was already read); whether it
    was changed."""
    if "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS" in os.environ:
        return False
    from scrapy.downloadermiddlewares import cookies

    extractor = getattr(cookies, "_split_domain", None)
    if extractor is None or getattr(extractor, "_extractor", True) is not None:
        return False
    # read lazily, at the first cookie: no URL to try leaves tldextract its bundled snapshot
    extractor.suffix_list_urls = ()
    return True
