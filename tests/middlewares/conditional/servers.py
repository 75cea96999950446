"""Servers for conditional-request tests: real nginx, Twisted's static file server, and a
Python server of our own for the odd cases (ETag only, weak ETags, servers that ignore or
abuse validators)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from changewatch.demo.serving import LocalServer, serve

__all__ = ["Nginx", "OddServer", "Page", "TwistedStatic", "free_port", "wait_for_port"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[Any], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout} s")


class Nginx:
    """nginx on a free port serving *root*, with a temporary config and an access log that
    records each request's status and validators."""

    def __init__(self, binary: str, root: Path, workdir: Path):
        self.binary = binary
        self.root = root
        self.workdir = workdir
        self.port = free_port()
        self.access_log = workdir / "access.log"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> str:
        w = self.workdir
        user = "user root;" if os.geteuid() == 0 else ""  # workers must read the temporary directory
        temps = "\n".join(f"{name}_temp_path {w / name};" for name in ("client_body", "proxy", "fastcgi", "uwsgi",
                                                                        "scgi"))
        conf = w / "nginx.conf"
        conf.write_text(f"""
{user}
worker_processes 1;
daemon off;
pid {w / 'nginx.pid'};
error_log {w / 'error.log'} warn;
events {{ worker_connections 512; }}
http {{
    {temps}
    types {{ text/html html; text/plain txt; }}
    default_type application/octet-stream;
    log_format cw escape=none
        '$status $request_uri inm=[$http_if_none_match] ims=[$http_if_modified_since] $body_bytes_sent';
    access_log {self.access_log} cw;
    server {{
        listen 127.0.0.1:{self.port};
        root {self.root};
    }}
}}
""", encoding="utf-8")
        self._proc = subprocess.Popen([self.binary, "-c", str(conf), "-p", str(w), "-e", str(w / "error.log")],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_for_port(self.port, self._proc, "nginx")
        return self.base

    def log_lines(self) -> list[str]:
        return self.access_log.read_text(encoding="utf-8").splitlines() if self.access_log.exists() else []

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(10)
            self._proc = None


_TWISTED_SERVER = """
import sys
from twisted.internet import reactor
from twisted.web import server, static
reactor.listenTCP(int(sys.argv[2]), server.Site(static.File(sys.argv[1])), interface="127.0.0.1")
reactor.run()
"""


class TwistedStatic:
    """twisted.web.static.File in a subprocess: Last-Modified only, no ETag."""

    def __init__(self, root: Path):
        self.root = root
        self.port = free_port()
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> str:
        self._proc = subprocess.Popen([sys.executable, "-c", _TWISTED_SERVER, str(self.root), str(self.port)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_for_port(self.port, self._proc, "twisted static server")
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(10)
            self._proc = None


@dataclass
class Page:
    """One page of :class:`OddServer`. ``mode``:
    ``honest`` validates like nginx (exact If-Modified-Since); ``always200`` ignores validators;
    ``wrong304`` answers 304 to any validator, even when the page changed; ``rogue304`` answers
    304 to everything; ``body304`` validates but sends a body with its 304; ``precondition``
    answers 412 to any validator; ``flip`` sends its ETag on every other response only."""

    body: bytes
    etag: str | None = None
    last_modified: str | None = None
    mode: str = "honest"
    redirect: str | None = None
    extra_headers: dict[str, str] = field(default_factory=dict)


class OddServer:
    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        #: (path, If-None-Match, If-Modified-Since, status) per request, in order
        self.log: list[tuple[str, str | None, str | None, int]] = []
        self._served: dict[str, int] = {}
        self._lock = threading.Lock()
        self._server: LocalServer | None = None

    def start(self) -> str:
        odd = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                odd._handle(self)

        self._server = serve(Handler, 0, "odd-server")
        return self._server.base

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()

    def sent(self, path: str) -> list[tuple[str | None, str | None, int]]:
        """What the crawler sent for *path*: (If-None-Match, If-Modified-Since, status) per request."""
        with self._lock:
            return [(inm, ims, status) for p, inm, ims, status in self.log if p == path]

    def _status(self, page: Page, inm: str | None, ims: str | None, n: int) -> tuple[int, bool]:
        """(status, send the ETag?) for the *n*-th request of *page*."""
        asked = inm is not None or ims is not None
        if page.mode == "rogue304":
            return 304, True
        if page.mode == "always200":
            return 200, True
        if page.mode == "wrong304" and asked:
            return 304, True
        if page.mode == "precondition" and asked:
            return 412, True
        send_etag = page.mode != "flip" or n % 2 == 1
        if inm is not None and page.etag is not None and send_etag:
            matches = any(t.strip().removeprefix("W/") == page.etag.removeprefix("W/") for t in inm.split(","))
            return (304 if matches else 200), send_etag
        if inm is None and ims is not None and ims == page.last_modified:
            return 304, send_etag
        return 200, send_etag

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path
        page = self.pages.get(path)
        inm, ims = h.headers.get("If-None-Match"), h.headers.get("If-Modified-Since")
        if page is None:
            self._reply(h, path, inm, ims, 404, {"Content-Type": "text/plain"}, b"not found")
            return
        if page.redirect is not None:
            self._reply(h, path, inm, ims, 301, {"Location": page.redirect}, b"")
            return
        with self._lock:
            n = self._served[path] = self._served.get(path, 0) + 1
        status, send_etag = self._status(page, inm, ims, n)
        headers = {"Content-Type": "text/html; charset=utf-8", **page.extra_headers}
        if page.etag is not None and send_etag:
            headers["ETag"] = page.etag
        if page.last_modified is not None and page.mode != "flip":
            headers["Last-Modified"] = page.last_modified
        body = page.body if status == 200 else (b"<p>junk after a 304</p>" if page.mode == "body304" else b"")
        self._reply(h, path, inm, ims, status, headers, body, force_length=page.mode == "body304")

    def _reply(self, h: BaseHTTPRequestHandler, path: str, inm: str | None, ims: str | None, status: int,
               headers: dict[str, str], body: bytes, force_length: bool = False) -> None:
        with self._lock:
            self.log.append((path, inm, ims, status))
        h.send_response(status)
        for name, value in headers.items():
            h.send_header(name, value)
        if status != 304 or force_length:
            h.send_header("Content-Length", str(len(body)))
        if force_length and status == 304:
            # A client ignores a 304's body, so its bytes would be read as the start of the next
            # response on a kept-alive connection: that request fails, is retried and reaches this
            # log twice. Close the connection so the junk cannot leak into another page's exchange.
            h.send_header("Connection", "close")
            h.close_connection = True
        h.end_headers()
        if body and (status != 304 or force_length):
            h.wfile.write(body)
