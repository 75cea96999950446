"""A local HTTP server whose pages misbehave on purpose, for the bad-input and SSRF crawls.

Each path serves a good page or its bad variant (``site.bad = True``): endless bodies, lying
Content-Length, gzip bombs, redirect loops, hangs... Every loop is bounded in size and time.
"""

from __future__ import annotations

import select
import socket
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Handler = Callable[[BaseHTTPRequestHandler], None]

_MAX_STREAM = 64 * 1024 * 1024  # an "endless" body stops here, or after _MAX_SECONDS
_MAX_SECONDS = 60.0


def good_page(name: str, paragraphs: int = 12) -> bytes:
    body = "".join(f"<p>{name}: paragraph {i} says something stable about {name}.</p>" for i in range(paragraphs))
    return f"<html><head><title>{name}</title></head><body><main>{body}</main></body></html>".encode()


def send(h: BaseHTTPRequestHandler, status: int, body: bytes, ctype: str = "text/html; charset=utf-8",
         headers: dict[str, str] | None = None, length: int | None = None) -> None:
    h.send_response(status)
    h.send_header("Content-Type", ctype)
    h.send_header("Content-Length", str(len(body) if length is None else length))
    for name, value in (headers or {}).items():
        h.send_header(name, value)
    h.end_headers()
    try:
        h.wfile.write(body)
    except OSError:
        pass  # the client hung up: that is what a size limit does


def page(body: bytes, status: int = 200, ctype: str = "text/html; charset=utf-8", **headers: str) -> Handler:
    return lambda h: send(h, status, body, ctype, {k.replace("_", "-"): v for k, v in headers.items()})


def endless(h: BaseHTTPRequestHandler) -> None:
    """A 200 whose body never ends (no Content-Length; bounded here in size and time)."""
    h.send_response(200)
    h.send_header("Content-Type", "text/html; charset=utf-8")
    h.end_headers()
    chunk = b"<p>" + b"and on " * 9000 + b"</p>\n"
    sent, start = 0, time.monotonic()
    try:
        h.wfile.write(b"<html><body>")
        while sent < _MAX_STREAM and time.monotonic() - start < _MAX_SECONDS:
            h.wfile.write(chunk)
            sent += len(chunk)
    except OSError:
        pass
    h.close_connection = True


def huge_length(h: BaseHTTPRequestHandler) -> None:
    """Claims 1 GB, sends a little, then stops."""
    send(h, 200, b"<html><body><p>" + b"x" * 1000, length=1024 ** 3)


def gzip_bomb(megabytes: int = 200) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip container
    zeros = bytes(1024 * 1024)
    out = [packer.compress(b"<html><body><p>")] + [packer.compress(zeros) for _ in range(megabytes)]
    return b"".join([*out, packer.flush()])


def hang(site: HostileSite) -> Handler:
    """Never answers; notes ``abandoned <path>`` in *site*'s events when the client gives up
    (closes the connection), and stops after _MAX_SECONDS in any case."""
    def handler(h: BaseHTTPRequestHandler) -> None:
        deadline = time.monotonic() + _MAX_SECONDS
        while time.monotonic() < deadline:
            readable, _, _ = select.select([h.connection], [], [], 0.2)
            if readable:
                try:
                    still_there = h.connection.recv(1, socket.MSG_PEEK)
                except OSError:
                    still_there = b""
                if not still_there:
                    site.event(f"abandoned {h.path}")
                    return
        send(h, 200, good_page("late"))
    return handler


def redirect(location: str, status: int = 302) -> Handler:
    return lambda h: send(h, status, b"", headers={"Location": location})


class HostileSite:
    """Serves ``good[path]`` or, once :attr:`bad` is set, ``bad[path]`` (falling back to good).
    Counts hits per path and Host header; HTTP/1.0, so every request is a new connection."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.good: dict[str, Handler] = {}
        self.bad_pages: dict[str, Handler] = {}
        self.bad = False
        self.hits: Counter[str] = Counter()
        self.hosts: Counter[str] = Counter()
        self.agents: Counter[str] = Counter()
        self.events: list[str] = []  # "GET <path>" as requests arrive, and what handlers note
        self._lock = threading.Lock()
        self.on_request: Callable[[str], None] | None = None
        site = self

        class RequestHandler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                site.hits[path] += 1
                site.hosts[self.headers.get("Host", "")] += 1
                site.agents[self.headers.get("User-Agent", "")] += 1
                site.event(f"GET {path}")
                if site.on_request is not None:
                    site.on_request(path)
                handler = (site.bad_pages.get(path) if site.bad else None) or site.good.get(path)
                if handler is None and path == "/robots.txt":
                    handler = page(b"User-agent: *\nAllow: /\n", ctype="text/plain")
                (handler or page(b"<h1>Not found</h1>", 404))(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        family = socket.AF_INET6 if ":" in host else socket.AF_INET

        class Server(ThreadingHTTPServer):
            address_family = family
            daemon_threads = True

        self._server = Server((host, port), RequestHandler)
        self.port = self._server.server_address[1]
        self.base = f"http://{f'[{host}]' if family == socket.AF_INET6 else host}:{self.port}"
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True, name=f"hostile-{host}").start()

    def event(self, text: str) -> None:
        with self._lock:
            self.events.append(text)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
