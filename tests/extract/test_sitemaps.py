"""Reading a site watch's discovery responses with Scrapy's Sitemap and LinkExtractor (extract/sitemaps.py)."""

from __future__ import annotations

import gzip

import pytest
from scrapy.http import HtmlResponse, Response, TextResponse, XmlResponse

from changewatch.core.sitemaps import SitemapError
from changewatch.extract.sitemaps import page_links, read_sitemap

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml"'


def urlset(*rows: str) -> bytes:
    return f'<?xml version="1.0"?><urlset {NS}>{"".join(rows)}</urlset>'.encode()


def test_pages_with_lastmod_alternates_and_offsite_urls():
    body = urlset('<url><loc>https://s.example/a</loc><lastmod>2026-11-29</lastmod>'
                  '<xhtml:link rel="alternate" hreflang="de" href="https://s.example/de/a"/></url>',
                  "<url><loc>https://s.example/b</loc></url>",
                  "<url><loc>https://elsewhere.example/c</loc></url>")
    read = read_sitemap(XmlResponse("https://s.example/sitemap.xml", body=body))
    assert read.pages == {"https://s.example/a": "2026-11-29", "https://s.example/de/a": "2026-11-29",
                          "https://s.example/b": None}
    assert read.offsite == 1 and read.children == []


def test_index_and_gzip_and_robots():
    index = (f'<sitemapindex {NS}><sitemap><loc>https://s.example/s1.xml.gz</loc></sitemap>'
             '<sitemap><loc>https://cdn.example/s2.xml</loc></sitemap></sitemapindex>').encode()
    read = read_sitemap(XmlResponse("https://s.example/sitemap.xml", body=index))
    assert read.children == ["https://s.example/s1.xml.gz"] and read.offsite == 1
    packed = gzip.compress(urlset("<url><loc>https://s.example/a</loc></url>"))
    read = read_sitemap(Response("https://s.example/s1.xml.gz", body=packed))
    assert list(read.pages) == ["https://s.example/a"]
    robots = b"User-agent: *\nDisallow: /x\nSitemap: https://s.example/sitemap.xml\n"
    read = read_sitemap(TextResponse("https://s.example/robots.txt", body=robots, encoding="utf-8"))
    assert read.children == ["https://s.example/sitemap.xml"]
    with pytest.raises(SitemapError, match=r"^empty: .* names no sitemap"):
        read_sitemap(TextResponse("https://s.example/robots.txt", body=b"User-agent: *\n", encoding="utf-8"))


def test_a_cut_off_sitemap_is_an_error_not_a_shorter_list():
    body = urlset(*(f"<url><loc>https://s.example/{i}</loc></url>" for i in range(100)))
    with pytest.raises(SitemapError, match=r"^truncated: "):
        read_sitemap(XmlResponse("https://s.example/sitemap.xml", body=body[: len(body) // 2]))
    with pytest.raises(SitemapError, match=r"^truncated: "):
        read_sitemap(Response("https://s.example/s.xml.gz", body=gzip.compress(body)[:200]))


def test_page_links_stay_on_the_host_and_skip_denied_and_nofollow():
    html = (b'<a href="/posts/1?utm_source=x">1</a><a href="/tag/a">t</a><a rel="nofollow" href="/posts/2">2</a>'
            b'<a href="https://other.example/posts/3">3</a><a href="/posts/4#c">4</a>')
    links = page_links(HtmlResponse("http://127.0.0.1:8000/", body=html), ("/tag/",))
    assert links == ["http://127.0.0.1:8000/posts/1?utm_source=x", "http://127.0.0.1:8000/posts/4#c"]
