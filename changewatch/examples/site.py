"""Serve the example spiders' fixture pages on 127.0.0.1, with the noise real pages have
(tokens, clocks, "N hours ago", tracking parameters) and with edits a test or a person makes
between runs (a price cut, a new product, a redesign), so the example spiders meet real
changes. The pages were written for changewatch; they copy no real site.

    python -m changewatch.examples.site catalogue      # then: scrapy crawl catalogue -a site=URL
"""

from __future__ import annotations

import argparse
import hashlib
import random
import secrets
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from ..demo.serving import ServedSite

__all__ = ["FIXTURES", "FixtureSite"]

FIXTURES = Path(__file__).resolve().parent / "fixtures"


class FixtureSite(ServedSite):
    """One fixture site (a folder under ``fixtures/``): a URL path is a file path, a path ending
    in ``/`` its ``index.html``. Records every request's headers in :attr:`requests`. Also
    answers as an HTTP proxy would (``GET http://any.host/path``), serving its own pages."""

    thread_name = "fixture-site"

    def __init__(self, name: str, root: Path = FIXTURES):
        self.root = root / name
        if not self.root.is_dir():
            raise ValueError(f"no fixture site {name!r} in {root}")
        #: path → [(old, new), …] applied to the page on every load
        self.edits: dict[str, list[tuple[str, str]]] = {}
        #: path → (status, body) served instead of the page
        self.overrides: dict[str, tuple[int, bytes]] = {}
        #: (path with query, headers) of every request, in order
        self.requests: list[tuple[str, dict[str, str]]] = []
        self._lock = threading.Lock()

    def _file(self, path: str) -> Path | None:
        relative = path.split("?", 1)[0].lstrip("/")
        if relative.endswith("/") or not relative:
            relative += "index.html"
        file = (self.root / relative).resolve()
        return file if file.is_relative_to(self.root) and file.is_file() else None

    def page(self, path: str) -> str:
        """The page at *path* as a fresh load serves it, edits applied, noise not yet filled in."""
        file = self._file(path)
        if file is None:
            raise KeyError(path)
        text = file.read_text(encoding="utf-8")
        for old, new in self.edits.get(path.split("?", 1)[0], []):
            text = text.replace(old, new)
        return text

    def edit(self, path: str, old: str, new: str) -> None:
        """From now on serve *path* with *old* replaced by *new* (which must be on the page:
        an edit that changes nothing would make a test pass for the wrong reason)."""
        if old not in self.page(path):
            raise ValueError(f"{old!r} is not on {path}")
        self.edits.setdefault(path, []).append((old, new))

    @staticmethod
    def _noise(text: str) -> str:
        now = datetime.now(UTC)
        fills: dict[str, Callable[[], str]] = {
            "{{now}}": lambda: now.strftime("%d %b %Y %H:%M:%S UTC"),
            "{{token}}": lambda: secrets.token_hex(8),
            "{{ago}}": lambda: f"{random.randint(2, 23)} hours ago",
            "{{watchers}}": lambda: str(random.randint(2, 40)),
        }
        for marker, fill in fills.items():
            while marker in text:
                text = text.replace(marker, fill(), 1)
        return text

    def respond(self, path: str, headers: dict[str, str]) -> tuple[int, str, bytes, dict[str, str]]:
        with self._lock:
            self.requests.append((path, headers))
        if path.startswith(("http://", "https://")):  # asked as a proxy: "GET http://host/path"
            parts = urlsplit(path)
            path = parts.path + (f"?{parts.query}" if parts.query else "")
        bare = path.split("?", 1)[0]
        if bare in self.overrides:
            status, body = self.overrides[bare]
            return status, "text/html; charset=utf-8", body, {}
        if bare == "/robots.txt":
            return 200, "text/plain", b"User-agent: *\nAllow: /\n", {}
        try:
            page = self.page(bare)
        except KeyError:
            return 404, "text/html; charset=utf-8", b"<html><body><h1>Not found</h1></body></html>", {}
        # Like a CMS, the ETag is the content's version, not a hash of the noisy bytes it serves.
        etag = '"' + hashlib.sha256(page.encode("utf-8")).hexdigest()[:16] + '"'
        asked = {k.lower(): v for k, v in headers.items()}.get("if-none-match")
        if asked is not None and etag in [t.strip() for t in asked.split(",")]:
            return 304, "text/html; charset=utf-8", b"", {"ETag": etag}
        return 200, "text/html; charset=utf-8", self._noise(page).encode("utf-8"), {"ETag": etag}

    respond_to = respond



def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve an example spider's fixture site on 127.0.0.1.")
    parser.add_argument("name", choices=sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    site = FixtureSite(args.name)
    url = site.start(args.port)
    print(f"serving {args.name} at {url}  (scrapy crawl {args.name} -a site={url}); Ctrl-C stops", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        site.stop()


if __name__ == "__main__":
    main()
