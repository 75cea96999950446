"""End to end: pages a real crawl meets that must not crash it, invent a change or lose a baseline."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from changewatch.demo.site import DemoSite
from changewatch.store.sqlite import SQLiteStore
from tests.changes import field

from .crawl import Crawler, by_key
from .hostile import Handler, HostileSite, endless, gzip_bomb, huge_length, page, redirect

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
    assert errors["missing"] == "http: HTTP 404: the server has no page at this URL (Not Found)"
    assert errors["nomatch"] == "extraction: field 'stock' (p.stock) matched nothing"
    assert first.stats["changewatch/commit/baseline"] == len(WATCHES) - len(errors)
    assert first.stats["changewatch/watch/jsonld_invalid_blocks"] == 2

    serve_bad_pages(site, "8.50")
    second = crawler.run()
    assert second.returncode == 0
    changes = {k: r for k, r in by_key(second.records).items()}
    # the valid JSON-LD beside invalid blocks, and JSON-LD given as a list, are still compared
    assert changes["invalid-jsonld"]["changes"] == {"offers.price": field("10.00", "8.50", "10", "8.5")}
    assert changes["list-jsonld"]["changes"] == {"offers.price": field("10.00", "8.50", "10", "8.5")}
    # everything else is unchanged, and the repeated errors are not reported again, but for the
    # page missing on a second consecutive run: it is gone now (CHANGEWATCH_GONE_AFTER)
    assert changes["missing"]["error"] == ("gone: HTTP 404 on 2 consecutive runs: the server has no page at this URL "
                                           "(Not Found)")
    assert set(changes) == {"invalid-jsonld", "list-jsonld", "missing"}


# -- hostile responses: a good baseline, the bad variant, the good page again --------------------

MAIN = "".join(f"<p>Section {i}: the terms of this service, stated plainly and at length.</p>" for i in range(20))
GOOD_PAGE = f"<html><head><title>Terms</title></head><body><main>{MAIN}</main></body></html>".encode()
NESTED = ("<html><body>" + "<div>" * 10_000 + f"<main>{MAIN}</main>" + "</div>" * 10_000 + "</body></html>").encode()
# minified: all on one line, with a 1 MB inline image in it (the visible text is the good page's)
ONE_LINE = (f'<html><body><main>{MAIN}</main><img alt="" src="data:image/png;base64,{"QUFB" * 262_144}">'
            "</body></html>").encode()
INVALID_UTF8 = b"<html><body><main><p>" + b"\x80\xbf\xc0\xfe\xff terms " * 2000 + b"</p></main></body></html>"
DENIED = (b"<html><body><h1>Access Denied</h1><p>You don't have permission to access this page on this "
          b"server.</p><p>Reference #18.4f3e1702.1764500000.2a1b3c</p></body></html>")


def hostile_cases() -> dict[str, tuple[Handler, str | None]]:
    """key → (bad variant, a pattern its error record matches, or None for no record at all)."""
    twenty_mb = b"<html><body><main>" + b"<p>twenty megabytes of text, all real.</p>\n" * 500_000 + b"</main></body>"
    limit = 10 * 1024 * 1024
    return {
        "endless": (endless, rf"too large: the body grew past the {limit}-byte limit \(\d+ bytes arrived"),
        "1gb-content-length": (huge_length, f"too large: the response announces 1073741824 bytes, over the {limit}"),
        "gzip-bomb": (page(gzip_bomb(200), Content_Encoding="gzip"),
                      rf"too large: \d+ compressed bytes unpack to more than the {limit}-byte limit"),
        "redirect-loop": (redirect("/bad/redirect-loop"),
                          r"redirect: more than 20 redirections \(REDIRECT_MAX_TIMES\)"),
        "redirect-to-file": (redirect("file:///etc/passwd"), "refused: scheme: redirect to file:///etc/passwd"),
        "invalid-utf8": (page(INVALID_UTF8), r"unsupported: undecodable text \(\d+ of \d+ characters are not valid"),
        "nul-body": (page(b"\x00" * 100_000), r"unsupported: binary data \(NUL bytes\)"),
        "pdf": (page(PDF, ctype="application/pdf"), "unsupported: PDF"),
        "20mb-html": (page(twenty_mb), f"too large: the response announces {len(twenty_mb)} bytes"),
        "access-denied-200": (page(DENIED), "blocked: page says 'Access Denied'"),
        "429-retry-after": (page(b"<h1>Slow down</h1>", 429, Retry_After="120"),
                            r"blocked: HTTP 429: .+; it asks to try again after 120 s$"),
        # hostile structure, same substance: the right answer is silence, and no crash
        "10000-nested-tags": (page(NESTED), None),
        "1mb-on-one-line": (page(ONE_LINE), None),
        # a fields watch whose page turns into JSON (parsel would read it as a JSON document)
        "json-as-html": (page(b'{"title": "Terms", "price": 3}'),
                         r"extraction: field 'title' \(title\) matched nothing"),
    }


WATCH_OPTIONS: dict[str, dict[str, Any]] = {"json-as-html": {"fields": {"title": "title"}}}


def _baselines(store_path: Path) -> dict[str, tuple[Any, str | None]]:
    store = SQLiteStore(store_path)
    store.open()
    try:
        return {key: (state.snapshot, state.last_good) for key in store.keys("watch")
                if (state := store.read("watch", key)) is not None}
    finally:
        store.close()


def test_hostile_responses_are_errors_and_keep_the_baseline(tmp_path: Path) -> None:
    cases = hostile_cases()
    site = HostileSite()
    try:
        for key, (bad, _) in cases.items():
            site.good[f"/bad/{key}"] = page(GOOD_PAGE)
            site.bad_pages[f"/bad/{key}"] = bad
        crawler = Crawler(tmp_path, [{"url": f"{site.base}/bad/{key}", "key": key, **WATCH_OPTIONS.get(key, {})}
                                     for key in cases])

        first = crawler.run()
        assert first.returncode == 0 and first.records == [], first.stderr[-3000:]
        before = _baselines(tmp_path / "state.db")
        assert set(before) == set(cases)

        site.bad = True
        site.hits.clear()
        bad = crawler.run()
        assert bad.returncode == 0, bad.stderr[-3000:]
        errors = {k: r.get("error", f"a {r['kind']} record") for k, r in by_key(bad.records).items()}
        assert set(errors) == {k for k, (_, expect) in cases.items() if expect}
        for key, (_, expect) in cases.items():
            if expect:
                assert re.match(expect, errors[key]), (key, errors[key])
        assert all(r["kind"] == "error" for r in bad.records)
        assert site.hits["/bad/429-retry-after"] == 1  # no retry against a Retry-After
        after = _baselines(tmp_path / "state.db")
        for key, (_, expect) in cases.items():
            snapshot, last_good = after[key]
            assert snapshot == before[key][0], f"{key}: the baseline changed"
            if expect:
                assert last_good == before[key][1], f"{key}: an error counted as a good observation"

        site.bad = False
        again = crawler.run()
        assert again.returncode == 0, again.stderr[-3000:]
        # the page is back as it was: one "recovered" record closes each reported streak, nothing else
        recovered = by_key(again.records)
        assert set(recovered) == set(errors) and all(r["kind"] == "recovered" for r in recovered.values())
        assert sum(again.stats.get(f"changewatch/commit/{kind}", 0) for kind in ("none", "noise", "recovered")) \
            == len(cases)
    finally:
        site.stop()
