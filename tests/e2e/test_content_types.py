"""End to end: content types. Real ``scrapy crawl watch`` runs against a local
server serving JSON, a text file, a PDF and an image, and the bad inputs the issue lists: a JSON
body that is HTML, a 50 MB JSON array, BOMs, a text file whose CRLF line ends become LF."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from changewatch.core.documents import JSON_MAX_BYTES
from tests.changes import field

from ..pdf import minimal_pdf
from .crawl import Crawler, by_key
from .hostile import HostileSite, page

JSON = "application/json; charset=utf-8"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(200))
#: 50 MB of small objects: 1 s and ~600 MB to parse, were it parsed
BIG = b"[" + b",".join(b'{"id": %d, "name": "item %d"}' % (i, i) for i in range(1_370_000)) + b"]"
MAXSIZE = ("-s", f"DOWNLOAD_MAXSIZE={64 * 1024 * 1024}", "-s", f"DOWNLOAD_WARNSIZE={64 * 1024 * 1024}")


def product(price: float, reordered: bool = False) -> bytes:
    doc: dict[str, Any] = {"product": {"name": "Kettle 2000", "price": price, "currency": "EUR"},
                           "items": [{"id": "K-2000", "stock": 4}]}
    if reordered:
        doc = {"items": [{"stock": 4, "id": "K-2000"}], "product": dict(reversed(list(doc["product"].items())))}
    return json.dumps(doc, indent=None if reordered else 2).encode()


def catalogue(name: str, reordered: bool = False) -> bytes:
    doc = {"name": name, "updated": "Updated 10:32 PM", "sizes": ["S", "M"]}
    return json.dumps(dict(reversed(list(doc.items()))) if reordered else doc).encode()


NOTES = ["Release notes", "", "v1.2 - faster parsing", "v1.1 - first release", "Größe: klein"]


def notes(lines: list[str], end: str) -> bytes:
    return b"\xef\xbb\xbf" + end.join(lines).encode() + end.encode()


def serve(site: HostileSite, *, price: float, reordered: bool, name: str, lines: list[str], end: str,
          cancel: str, image: bytes) -> None:
    site.good["/api/product"] = page(product(price, reordered), ctype=JSON)
    site.good["/api/catalogue"] = page(catalogue(name, reordered), ctype=JSON)
    site.good["/notes.txt"] = page(notes(lines, end), ctype="text/plain")
    site.good["/terms.pdf"] = page(minimal_pdf(["Terms of service", f"You may cancel at {cancel} time."]),
                                   ctype="application/pdf")
    site.good["/logo.png"] = page(image, ctype="image/png")
    site.good["/api/broken"] = page(b"<!doctype html><html><body><h1>Maintenance</h1></body></html>", ctype=JSON)
    site.good["/api/big"] = page(BIG, ctype=JSON)


def watches(base: str) -> list[dict[str, Any]]:
    return [
        {"key": "json-fields", "url": f"{base}/api/product", "json": {"fields": ["product.price", "/items/0/id"]}},
        {"key": "json-text", "url": f"{base}/api/catalogue"},
        {"key": "text", "url": f"{base}/notes.txt"},
        {"key": "pdf", "url": f"{base}/terms.pdf"},
        {"key": "image", "url": f"{base}/logo.png"},
        {"key": "image-bytes", "url": f"{base}/logo.png", "type": "bytes"},
        {"key": "not-json", "url": f"{base}/api/broken"},
        {"key": "big-json", "url": f"{base}/api/big", "json": {"entities": {"key": "id"}}},
    ]


def test_json_text_pdf_and_images_across_runs(site: HostileSite, tmp_path: Path) -> None:
    assert 50_000_000 <= len(BIG) < 64 * 1024 * 1024
    crawler = Crawler(tmp_path, watches(site.base))
    serve(site, price=89.0, reordered=False, name="Kettle", lines=NOTES, end="\r\n", cancel="any", image=PNG)
    started = time.monotonic()
    first = crawler.run(*MAXSIZE)
    took = time.monotonic() - started
    assert first.returncode == 0, first.stderr[-3000:]
    errors = {key: r["error"] for key, r in by_key(first.records).items()}
    assert set(errors) == {"image", "not-json", "big-json"} and all(r["kind"] == "error" for r in first.records)
    assert errors["image"] == "unsupported: image/png (PNG image); `type: bytes` watches its hash and size"
    assert errors["not-json"].startswith("unsupported: not JSON (it looks like HTML): Expecting value at line 1")
    assert errors["big-json"] == (f"unsupported: a JSON document of {len(BIG)} bytes, over the {JSON_MAX_BYTES} "
                                  "bytes changewatch parses")
    assert first.stats["changewatch/commit/baseline"] == 5, first.stats
    # read in the workers: two JSON documents, the text file, the PDF; the 50 MB one never crossed
    assert first.stats["changewatch/documents/read"] == 4 and first.stats["changewatch/documents/unreadable"] == 1
    assert took < 60, took  # the 50 MB body is refused by its size, never parsed

    # Keys reordered, CRLF line ends now LF, the BOM gone, the same image: nothing to report.
    # The price moved: one field record with old and new.
    serve(site, price=79.0, reordered=True, name="Kettle", lines=NOTES, end="\n", cancel="any", image=PNG)
    second = crawler.run(*MAXSIZE)
    assert second.returncode == 0, second.stderr[-3000:]
    records = by_key(second.records)
    assert set(records) == {"json-fields"}, second.records  # the errors are the same streak: not repeated
    assert records["json-fields"]["kind"] == "field"
    assert records["json-fields"]["changes"] == {"product.price": field(89.0, 79.0, "89", "79")}

    # One line of the text file, one word of the PDF, one value of the JSON, the image's bytes.
    changed_notes = [line.replace("faster parsing", "faster parsing, fewer bugs") for line in NOTES]
    serve(site, price=79.0, reordered=True, name="Kettle Pro", lines=changed_notes, end="\n", cancel="no",
          image=PNG + b"\x00" * 16)
    third = crawler.run(*MAXSIZE)
    assert third.returncode == 0, third.stderr[-3000:]
    records = by_key(third.records)
    assert set(records) == {"json-text", "text", "pdf", "image-bytes"}, third.records
    assert all(r["kind"] == "content" for r in records.values())
    assert records["text"]["diff"].splitlines() == ["  Release notes", "- v1.2 - faster parsing",
                                                    "+ v1.2 - faster parsing, fewer bugs", "  v1.1 - first release"]
    assert "- You may cancel at any time.\n+ You may cancel at no time." in records["pdf"]["diff"]
    assert '- "name": "Kettle",\n+ "name": "Kettle Pro",' in records["json-text"]["diff"]
    image = records["image-bytes"]
    assert "diff" not in image and image["changes"]["size"] == {"old": len(PNG), "new": len(PNG) + 16}
    assert len(image["changes"]["sha256"]["new"]) == 64

    fourth = crawler.run(*MAXSIZE)
    assert fourth.returncode == 0 and fourth.records == [], fourth.stderr[-3000:]
