"""A site built from ../shared/corpus's real article pages, served on 127.0.0.1, for site watches:
a sitemap (with lastmod) and robots.txt, an index with paginated links, denied paths and a link
trap; every load differs (tokens, clock times, "N minutes ago"); pages are added, removed and
changed between runs, and the bad inputs of a site watch can be served instead."""

from __future__ import annotations

import csv
import hashlib
import random
import re
import secrets
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from changewatch.demo.serving import ServedSite

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
#: links listed per index page (link mode: /, then /page/2, /page/3 …)
PER_PAGE = 8


def corpus_articles(limit: int, max_bytes: int = 160_000) -> list[tuple[str, str]]:
    """(slug, html) of up to *limit* corpus articles under *max_bytes*, in the manifest's order."""
    out: list[tuple[str, str]] = []
    with (CORPUS / "MANIFEST.tsv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["kind"] != "article" or int(row["bytes"]) > max_bytes:
                continue
            raw = (CORPUS / row["file"]).read_bytes()
            try:
                html = raw.decode("utf-8")
            except UnicodeDecodeError:
                continue
            slug = re.sub(r"[^a-z0-9]+", "-", Path(row["file"]).stem.lower()).strip("-")
            out.append((slug, html))
            if len(out) == limit:
                break
    return out


#: the crawl's simulated time (TESTS_NOW) and the monotonic time it was set at: a page's stamp
#: tracks the fetch time as the crawl reads it, as a real page's clock tracks the real one
_SIMULATED: list[tuple[datetime, float]] = []


def simulate(now: str) -> None:
    """Stamp pages from *now* on (an ISO time, the crawl's TESTS_NOW), advancing in real time."""
    _SIMULATED[:] = [(datetime.fromisoformat(now.replace("Z", "+00:00")), time.monotonic())]


def _noise() -> str:
    now = datetime.now(UTC)
    if _SIMULATED:
        base, at = _SIMULATED[0]
        now = base + timedelta(seconds=time.monotonic() - at)
    return (f'<div class="cw-noise"><p>Page generated {now:%Y-%m-%d %H:%M:%S} UTC · updated '
            f'{random.randint(2, 59)} minutes ago · request id {secrets.token_hex(12)}</p>'
            f'<p>Session token={secrets.token_urlsafe(24)}</p></div>')


_QUOTES = ["Measure twice and cut once, the carpenter said.", "Fortune favours the prepared mind of a reader.",
           "Nothing travels faster than the light of a rumour.", "Every river reaches the sea by its own bends."]

_BODY_OPEN = re.compile(r"<body\b[^>]*>", re.IGNORECASE)


class CorpusSite(ServedSite):
    thread_name = "corpus-site"

    def __init__(self, pages: list[tuple[str, str]]):
        # a new site stamps its pages by the real clock until its test simulates one: another
        # test's simulated day, left behind in this worker, is a stamp days from the fetch (content)
        _SIMULATED.clear()
        self.pages = {f"/posts/{slug}": html for slug, html in pages}
        #: the pages the site has now (listed in the sitemap, linked from the index)
        self.live: list[str] = list(self.pages)
        #: path → the sentence inserted into its text (a change of substance)
        self.edits: dict[str, str] = {}
        #: path → its sitemap lastmod
        self.lastmod: dict[str, str] = {}
        #: path → (status, Content-Type, body) answered instead
        self.overrides: dict[str, tuple[int, str, bytes]] = {}
        #: pages answering 503 (a struggling site), and pages gone (404) though still listed
        self.failing: set[str] = set()
        #: pages that say something new on every load (a rotating quote: a change no second load confirms)
        self.rotating: set[str] = set()
        self.loads = 0
        #: posts answer with an ETag of their revision (the article and its edit) and a 304 to it
        self.validators = False
        #: the posts answered in full (200)
        self.full: list[str] = []
        #: path → the post it links to ("See also"); live posts the index leaves out (found only so)
        self.related: dict[str, str] = {}
        self.hidden: set[str] = set()
        self.requested: list[str] = []
        #: path → the request headers it came with, the last time
        self.headers: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()

    # -- changes between runs --------------------------------------------------------------------------

    def edit(self, path: str, sentence: str, lastmod: str | None = None) -> None:
        self.edits[path] = sentence
        if lastmod is not None:
            self.lastmod[path] = lastmod

    # -- serving ----------------------------------------------------------------------------------------

    def sitemap(self, base: str) -> bytes:
        rows = "".join(f"<url><loc>{base}{path}</loc>"
                       + (f"<lastmod>{self.lastmod[path]}</lastmod>" if path in self.lastmod else "") + "</url>"
                       for path in self.live)
        return (f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                f"{rows}</urlset>\n").encode()

    def index(self, number: int) -> bytes:
        listed = [path for path in self.live if path not in self.hidden]
        chunk = listed[(number - 1) * PER_PAGE:number * PER_PAGE]
        links = "".join(f'<li><a href="{path}?utm_source=index">{path.rsplit("/", 1)[1]}</a></li>' for path in chunk)
        more = f'<a href="/page/{number + 1}">Older posts</a>' if number * PER_PAGE < len(listed) else ""
        body = (f"<h1>Posts, page {number}</h1><ul>{links}</ul>{more}"
                '<p><a href="/tag/news">news</a> <a href="/calendar?month=1">calendar</a></p>')
        return self._html("Posts", body)

    def calendar(self, query: str) -> bytes:
        month = int(re.search(r"month=(\d+)", query).group(1)) if "month=" in query else 1  # type: ignore[union-attr]
        return self._html("Calendar", f'<h1>Month {month}</h1><a href="/calendar?month={month + 1}">next</a>')

    def post(self, path: str) -> bytes:
        html = self.pages[path]
        extra = _noise()
        if path in self.edits:
            extra = f"<p>{self.edits[path]}</p>" + extra
        if path in self.related:
            extra = f'<p>See also <a href="{self.related[path]}">this post</a>.</p>' + extra
        if path in self.rotating:
            self.loads += 1  # never the same quote twice in a row
            extra = f"<p>Quote of the moment: {_QUOTES[self.loads % len(_QUOTES)]}</p>" + extra
        # the last <body>: a page may open one in conditional comments first
        at = ([m.end() for m in _BODY_OPEN.finditer(html)] or [0])[-1]
        return (html[:at] + extra + html[at:]).encode("utf-8")

    @staticmethod
    def _html(title: str, body: str) -> bytes:
        return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
                f"{_noise()}<main>{body}</main></body></html>").encode()

    def _post_answer(self, path: str, headers: dict[str, str]) -> tuple[int, str, bytes, dict[str, str]]:
        revision = self.pages[path] + self.edits.get(path, "") + self.related.get(path, "")
        etag = f'"{hashlib.sha256(revision.encode()).hexdigest()[:16]}"'
        if self.validators and path not in self.rotating and headers.get("If-None-Match") == etag:
            return 304, "text/html; charset=utf-8", b"", {"ETag": etag}
        with self._lock:
            self.full.append(path)
        return 200, "text/html; charset=utf-8", self.post(path), {"ETag": etag} if self.validators else {}

    def respond_to(self, path: str, headers: dict[str, str]) -> tuple[int, str, bytes] | tuple[
            int, str, bytes, dict[str, str]]:
        with self._lock:
            self.requested.append(path)
            self.headers[path.partition("?")[0]] = headers
        only, _, query = path.partition("?")
        base = f"http://{headers.get('Host', '127.0.0.1')}"
        if only in self.overrides:
            return self.overrides[only]
        if only in self.failing:
            return 503, "text/html", b"<h1>Service unavailable</h1>"
        if only == "/robots.txt":
            return 200, "text/plain", f"User-agent: *\nDisallow: /private/\nSitemap: {base}/sitemap.xml\n".encode()
        if only == "/sitemap.xml":
            return 200, "application/xml", self.sitemap(base)
        if only == "/":
            return 200, "text/html; charset=utf-8", self.index(1)
        if only.startswith("/page/") and only[6:].isdigit():
            return 200, "text/html; charset=utf-8", self.index(int(only[6:]))
        if only == "/calendar":
            return 200, "text/html; charset=utf-8", self.calendar(query)
        if only.startswith("/tag/"):
            return 200, "text/html; charset=utf-8", self._html("Tag", "<p>tagged</p>")
        if only in self.pages and only in self.live:
            return self._post_answer(only, headers)
        return 404, "text/html", b"<h1>Not found</h1>"
