"""``changewatch preview`` of a site watch: the pages it would watch, from its sitemap tree (an
index, robots.txt) or its links, with allow/deny, max_pages and rules applied, from a local
server; a sitemap that is not whole is an error, as a crawl's discovery would be; nothing stored."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..e2e.hostile import HostileSite, page
from ._learned import Capture, run

LOCAL = ("-s", "CHANGEWATCH_ALLOW_PRIVATE=True")


def urlset(base: str, *paths: str, lastmod: str = "2026-11-20") -> bytes:
    urls = "".join(f"<url><loc>{base}{p}</loc><lastmod>{lastmod}</lastmod></url>" for p in paths)
    return f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'.encode()


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HostileSite]:
    monkeypatch.chdir(tmp_path)  # outside any project: nothing could be stored here unseen
    served = HostileSite()
    base = served.base
    xml = "application/xml"
    index = (f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>{base}/a.xml</loc>'
             f"</sitemap><sitemap><loc>{base}/b.xml.gz</loc></sitemap><sitemap><loc>{base}/index.xml</loc></sitemap>"
             "</sitemapindex>").encode()
    served.good["/index.xml"] = page(index, ctype=xml)  # it lists itself too: read once
    served.good["/a.xml"] = page(urlset(base, "/guide/a?utm_source=x", "/guide/b", "/archive/old", "/blog/1"),
                                 ctype=xml)
    served.good["/b.xml.gz"] = page(gzip.compress(urlset(base, "/guide/c", "/guide/a")), ctype="application/gzip")
    served.good["/robots.txt"] = page(f"User-agent: *\nSitemap: {base}/index.xml\n".encode(), ctype="text/plain")
    served.good["/cut.xml"] = page(urlset(base, "/guide/a", "/guide/b")[:-30], ctype=xml)
    links = "".join(f'<a href="{p}">{p}</a>' for p in ("/posts/1", "/posts/2", "/page/2", "/tag/x", "/about"))
    served.good["/"] = page(f"<html><body>{links}</body></html>".encode())
    served.good["/page/2"] = page(b'<html><body><a href="/posts/3">3</a><a href="/page/3">more</a></body></html>')
    served.good["/page/3"] = page(b'<html><body><a href="/posts/4">4</a></body></html>')
    yield served
    served.stop()


def watchlist(tmp_path: Path, site: dict[str, object], **options: object) -> str:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"watches": [{"key": "docs", "site": site, **options}]}))
    return str(path)


def test_a_sitemap_tree_lists_the_pages_it_would_watch(site: HostileSite, tmp_path: Path, capsys: Capture) -> None:
    w = watchlist(tmp_path, {"sitemap": site.base + "/robots.txt", "deny": "/archive/"}, region="main",
                  rules=[{"match": "/blog/", "region": None}])
    code, out, err = run(capsys, "preview", "--watchlist", w, "--key", "docs", *LOCAL)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == (f"site watch docs: sitemap {site.base}/robots.txt (4 read): 4 pages would be watched; "
                        "nothing stored")
    assert lines[1:] == [f"  {site.base}/blog/1  lastmod 2026-11-20; rule 0 (/blog/)",
                         f"  {site.base}/guide/a  lastmod 2026-11-20", f"  {site.base}/guide/b  lastmod 2026-11-20",
                         f"  {site.base}/guide/c  lastmod 2026-11-20"]
    assert site.hits["/index.xml"] == 1 and site.hits["/guide/a"] == 0  # pages are not fetched
    assert list(tmp_path.iterdir()) == [tmp_path / "w.json"]
    w = watchlist(tmp_path, {"sitemap": site.base + "/index.xml", "allow": "/guide/", "max_pages": 2})
    code, out, _ = run(capsys, "preview", "--watchlist", w, "--key", "docs", "--json", *LOCAL)
    found = json.loads(out)
    assert code == 0 and found["found"] == 3 and found["mode"] == "sitemap"
    assert [p["key"] for p in found["pages"]] == [f"docs|{site.base}/guide/a", f"docs|{site.base}/guide/b"]


def test_links_are_followed_as_the_watch_says(site: HostileSite, tmp_path: Path, capsys: Capture) -> None:
    w = watchlist(tmp_path, {"start": site.base + "/", "allow": r"/posts/\d+$", "follow": r"/page/\d+$",
                             "deny": "/tag/", "depth": 2})
    code, out, err = run(capsys, "preview", "--watchlist", w, "--key", "docs", *LOCAL)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith(f"site watch docs: links from {site.base}/ (2 pages fetched, depth 2): 3 pages would")
    assert lines[1:] == [f"  {site.base}/posts/{n}" for n in (1, 2, 3)]  # /posts/4 is 3 hops away
    assert site.hits["/tag/x"] == 0 and site.hits["/about"] == 0  # denied, and neither watched nor followed
    assert site.hits["/page/3"] == 0  # 2 hops: found, not read for links


def test_a_site_page_is_previewed_by_its_key(site: HostileSite, tmp_path: Path, capsys: Capture) -> None:
    w = watchlist(tmp_path, {"start": site.base + "/"})
    code, out, _ = run(capsys, "preview", "--watchlist", w, "--key", f"docs|{site.base}/page/2", *LOCAL)
    assert code == 0 and out.startswith(f"{site.base}/page/2: key docs|{site.base}/page/2; text/html")


def test_a_sitemap_that_is_not_whole_is_an_error(site: HostileSite, tmp_path: Path, capsys: Capture) -> None:
    w = watchlist(tmp_path, {"sitemap": site.base + "/cut.xml"})
    code, out, err = run(capsys, "preview", "--watchlist", w, "--key", "docs", *LOCAL)
    assert (code, out) == (1, "")
    assert "site watch docs: truncated: the sitemap is not whole XML" in err and len(err.splitlines()) == 1
    w = watchlist(tmp_path, {"sitemap": site.base + "/missing.xml"})
    code, _, err = run(capsys, "preview", "--watchlist", w, "--key", "docs", *LOCAL)
    assert code == 1 and "404" in err
    code, _, err = run(capsys, "preview", "--watchlist", w, "--key", "docs")  # the guard: a private address
    assert code == 1 and "refused" in err
    code, _, err = run(capsys, "preview", "--watchlist", w, "--key", "docs", "--store", "sqlite:///x.db", *LOCAL)
    assert code == 2 and "preview a page of site watch docs by its key" in err
