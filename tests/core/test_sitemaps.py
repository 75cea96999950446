"""A sitemap is trusted as a whole list only when it is whole (core/sitemaps.py)."""

from __future__ import annotations

import pytest

from changewatch.core.sitemaps import SitemapError, check_sitemap, sitemap_root

NS = b'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(n: int) -> bytes:
    rows = b"".join(b"<url><loc>https://a.example/p/%d</loc><lastmod>2026-11-29</lastmod></url>" % i for i in range(n))
    return b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset ' + NS + b">" + rows + b"</urlset>\n"


def test_whole_urlset_and_index_are_read():
    assert check_sitemap(urlset(3)) == "urlset"
    index = b"<sitemapindex " + NS + b"><sitemap><loc>https://a.example/s1.xml</loc></sitemap></sitemapindex>"
    assert check_sitemap(index) == "sitemapindex"
    assert sitemap_root(urlset(1)) == "urlset"


@pytest.mark.parametrize("cut", [10, 100, 500, -2, -12])
def test_truncated_sitemap_is_an_error_wherever_it_is_cut(cut):
    body = urlset(20)
    with pytest.raises(SitemapError, match=r"^truncated: "):
        check_sitemap(body[:cut])


@pytest.mark.parametrize("body", [
    b"<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>captcha</body></html>",
    b"\n  <html><body>Sign in</body></html>",
    b"<!-- cdn --><HTML><BODY>soft 404</BODY></HTML>",
])
def test_html_is_not_a_sitemap(body):
    with pytest.raises(SitemapError, match=r"^not a sitemap: an HTML page"):
        check_sitemap(body)


def test_empty_and_foreign_roots():
    with pytest.raises(SitemapError, match=r"^empty: "):
        check_sitemap(b"  \n")
    with pytest.raises(SitemapError, match=r"^not a sitemap: its root element is <rss>"):
        check_sitemap(b"<rss><channel/></rss>")


def test_xml_bomb_is_refused_before_any_parse():
    bomb = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
            + b"".join(b'<!ENTITY lol%d "%s">' % (i, b"&lol%d;" % (i - 1) * 10 if i else b"&lol;" * 10)
                       for i in range(1, 10))
            + b"]><urlset " + NS + b"><url><loc>https://a.example/&lol9;</loc></url></urlset>")
    with pytest.raises(SitemapError, match=r"^refused: .*entities"):
        check_sitemap(bomb)


def test_over_the_protocols_size_is_too_large():
    with pytest.raises(SitemapError, match=r"^too large: "):
        check_sitemap(urlset(50), max_bytes=1000)
