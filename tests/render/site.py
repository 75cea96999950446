"""A local site of JavaScript pages (port 0) for the rendering tests and the benchmark.

``/p/<name>`` is a shell page: its text is "Loading…" until its script (``/app.js``, shared by
every page) fetches ``/data/<name>.json`` and writes the data into it. Every file answers with an
ETag and a Last-Modified, and a 304 to either, so that a re-check of an unchanged page costs a
304 per dependency. ``pages[name]`` is a page's data; ``hits`` counts requests per path (and
``not_modified`` the 304s). Other pages misbehave on purpose (a throwing script, a page that never
finishes loading, a page too large, a WebSocket, a service worker).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SHELL = """<!doctype html><html><head><meta charset="utf-8"><title>{name}</title>
<script src="/app.js" defer></script></head>
<body><h1>{name}</h1><main id="app">Loading…</main></body></html>"""

APP_JS = """document.addEventListener('DOMContentLoaded', async () => {
  const name = document.title;
  const data = await (await fetch('/data/' + name + '.json', {headers: {'Accept': 'application/json'}})).json();
  const app = document.getElementById('app');
  app.innerHTML = '';
  for (const line of data.lines) { const p = document.createElement('p'); p.textContent = line; app.append(p); }
  const price = document.createElement('span'); price.className = 'price'; price.textContent = data.price;
  app.append(price);
});"""

THROWS = """<!doctype html><html><head><meta charset="utf-8"><title>throws</title></head><body><main id="app">
Loading…</main><script>
document.getElementById('app').textContent = 'Rendered before the error: the first half of the story.';
null.boom();
document.getElementById('app').textContent = 'never';
</script></body></html>"""

NEVER = """<!doctype html><html><head><meta charset="utf-8"><title>never</title></head><body>
<main>Waiting</main><script src="/hang.js"></script></body></html>"""


def data(name: str, version: int = 1) -> dict[str, Any]:
    lines = [f"{name}: paragraph {i} says something stable about {name}, version {version}." for i in range(8)]
    return {"lines": lines, "price": f"{10 + version}.00 EUR"}


class JsSite:
    """The server; *page_count* pages ``p0``…; ``extra[path]`` answers other paths."""

    def __init__(self, page_count: int = 3, host: str = "127.0.0.1"):
        self.pages: dict[str, dict[str, Any]] = {f"p{i}": data(f"p{i}") for i in range(page_count)}
        self.shell = SHELL
        self.hits: Counter[str] = Counter()
        self.not_modified: Counter[str] = Counter()
        self.extra: dict[str, Callable[[BaseHTTPRequestHandler], None]] = {}
        #: POST handlers by path (a POST elsewhere is a 405)
        self.post: dict[str, Callable[[BaseHTTPRequestHandler], None]] = {}
        self.started = time.time()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                site.hits[path] += 1
                site.answer(self, path)

            def do_POST(self) -> None:
                path = self.path.split("?", 1)[0]
                site.hits[f"POST {path}"] += 1
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                handler = site.post.get(path)
                if handler is None:
                    site.send(self, b"no", "text/plain", status=405)
                else:
                    handler(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

        self._server = Server((host, 0), Handler)
        self.port = self._server.server_address[1]
        self.base = f"http://{host}:{self.port}"
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True, name="js-site").start()

    def url(self, name: str) -> str:
        return f"{self.base}/p/{name}"

    def answer(self, h: BaseHTTPRequestHandler, path: str) -> None:
        if path in self.extra:
            self.extra[path](h)
        elif path == "/app.js":
            self.send(h, APP_JS.encode(), "text/javascript")
        elif path.startswith("/p/") and path[3:] in self.pages:
            self.send(h, self.shell.format(name=path[3:]).encode(), "text/html; charset=utf-8")
        elif path.startswith("/data/") and path.endswith(".json") and path[6:-5] in self.pages:
            self.send(h, json.dumps(self.pages[path[6:-5]]).encode(), "application/json")
        elif path == "/robots.txt":
            self.send(h, b"User-agent: *\nAllow: /\n", "text/plain")
        else:
            self.send(h, b"not found", "text/plain", status=404)

    def send(self, h: BaseHTTPRequestHandler, body: bytes, ctype: str, status: int = 200,
             validators: bool = True, headers: dict[str, str] | None = None) -> None:
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        modified = formatdate(self.started, usegmt=True)
        if validators and status == 200 and (h.headers.get("If-None-Match") == etag or (
                h.headers.get("If-None-Match") is None and h.headers.get("If-Modified-Since") == modified)):
            self.not_modified[h.path.split("?", 1)[0]] += 1
            h.send_response(304)
            h.send_header("ETag", etag)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        if validators:
            h.send_header("ETag", etag)
            h.send_header("Last-Modified", modified)
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.end_headers()
        try:
            h.wfile.write(body)
        except OSError:
            pass

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def hang(seconds: float = 60.0) -> Callable[[BaseHTTPRequestHandler], None]:
    """Never answers (for *seconds* at most)."""
    def handler(h: BaseHTTPRequestHandler) -> None:
        time.sleep(seconds)
        h.close_connection = True
    return handler
