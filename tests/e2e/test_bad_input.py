"""End to end: pages a real crawl meets that must not crash it, invent a change or lose a baseline."""

from __future__ import annotations

import json
from pathlib import Path

from changewatch.demo.site import DemoSite

from .crawl import Crawler, by_key

PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\n" + bytes(range(256)) * 20
PNG = b"\x89PNG\r\n\x1a\n" + bytes(500)


def product(price: str, *, extra_blocks: str = "", wrap: str = "graph") -> bytes:
    node = {"@type": "Product", "name": "Lamp", "offers": {"@type": "Offer", "price": price,
                                                          "availability": "https://schema.org/InStock"}}
    doc = {"@context": "https://schema.org", "@graph": [{"@type": "WebPage"}, node]} if wrap == "graph" else [
        {"@type": "BreadcrumbList"}, node]
    return (f'<html><head>{extra_blocks}<script type="application/ld+json">{json.dumps(doc)}</script></head>'
            f"<body><h1>Lamp</h1><p class=stock>In stock</p></body></html>").encode()


INVALID_BLOCKS = ('<script type="application/ld+json">{"@type": "Product", broken</script>'
                  '<script type="application/ld+json">{{{</script>')


def serve_bad_pages(site: DemoSite, price: str) -> None:
    o = site.overrides
    o["/pdf"] = (200, "text/html", PDF)
    o["/png"] = (200, "text/html; charset=utf-8", PNG)
    o["/empty"] = (200, "text/html", b"")
    o["/nul"] = (200, "text/html", b"\x00" * 5000)
    o["/missing"] = (404, "text/html", b"<h1>Not found</h1>")
    o["/nomatch"] = (200, "text/html", b"<html><body><p class=other>hi</p></body></html>")
    o["/invalid-jsonld"] = (200, "text/html", product(price, extra_blocks=INVALID_BLOCKS))
    o["/list-jsonld"] = (200, "text/html", product(price, wrap="list"))
    o["/latin1"] = (200, "text/html; charset=utf-8",
                    "<html><body><p>Café crème, prix très élevé: 12 EUR</p></body></html>".encode("latin-1"))
    o["/truncated"] = (200, "text/html", b"<html><body><div><p>Half a page<table><tr><td>cell")
    o["/deep"] = (200, "text/html", b"<p>top</p>" + b"<div>" * 10000 + b"deep text" + b"</div>" * 10000)
    o["/oneline"] = (200, "text/html", b"<p>" + b"word " * 200_000 + b"</p>")
    big = "".join(f"<p>Paragraph {i} of a very long page with plenty of text.</p>" for i in range(90_000))
    o["/huge"] = (200, "text/html", big.encode())  # ~5.4 MB


WATCHES = [
    {"url": "/pdf", "key": "pdf"},
    {"url": "/png", "key": "png"},
    {"url": "/empty", "key": "empty"},
    {"url": "/nul", "key": "nul"},
    {"url": "/missing", "key": "missing"},
    {"url": "/nomatch", "key": "nomatch", "fields": {"stock": "p.stock"}},
    {"url": "/invalid-jsonld", "key": "invalid-jsonld",
     "jsonld": {"type": "Product", "fields": ["name", "offers.price", "offers.availability"]}},
    {"url": "/list-jsonld", "key": "list-jsonld", "jsonld": {"type": "Product", "fields": ["offers.price"]}},
    {"url": "/latin1", "key": "latin1"},
    {"url": "/truncated", "key": "truncated"},
    {"url": "/deep", "key": "deep"},
    {"url": "/oneline", "key": "oneline"},
    {"url": "/huge", "key": "huge"},
]


def test_bad_pages(demo_site: tuple[DemoSite, str], tmp_path: Path) -> None:
    site, base = demo_site
    serve_bad_pages(site, "10.00")
    crawler = Crawler(tmp_path, [{**w, "url": base + w["url"]} for w in WATCHES])

    first = crawler.run()
    assert first.returncode == 0, first.stderr[-3000:]
    errors = {k: r["error"] for k, r in by_key(first.records).items()}
    assert all(r["kind"] == "error" for r in first.records)
    assert errors.keys() == {"pdf", "png", "empty", "nul", "missing", "nomatch"}
    assert errors["pdf"].startswith("unsupported: PDF")
    assert errors["png"].startswith("unsupported: PNG image")
    assert errors["empty"].startswith("empty")
    assert errors["nul"].startswith(("unsupported", "empty"))
    assert errors["missing"] == "http: HTTP 404"
    assert errors["nomatch"] == "extraction: field 'stock' (p.stock) matched nothing"
    assert first.stats["changewatch/commit/baseline"] == len(WATCHES) - len(errors)
    assert first.stats["changewatch/watch/jsonld_invalid_blocks"] == 2

    serve_bad_pages(site, "8.50")
    second = crawler.run()
    assert second.returncode == 0
    changes = {k: r for k, r in by_key(second.records).items()}
    # the valid JSON-LD beside invalid blocks, and JSON-LD given as a list, are still compared
    assert changes["invalid-jsonld"]["changes"] == {"offers.price": {"old": "10.00", "new": "8.50"}}
    assert changes["list-jsonld"]["changes"] == {"offers.price": {"old": "10.00", "new": "8.50"}}
    # everything else is unchanged, and the repeated errors are not reported again
    assert set(changes) == {"invalid-jsonld", "list-jsonld"}
