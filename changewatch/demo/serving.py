"""Serving the local demo and fixture sites: a threaded HTTP server on 127.0.0.1 that stays
quiet when a client goes away mid-response (tests kill crawls at random moments)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LocalServer", "Respond", "ServedSite", "page_handler", "serve"]

#: (path with query, request headers) → (status, Content-Type, body[, more response headers])
Respond = Callable[[str, dict[str, str]], tuple[int, str, bytes] | tuple[int, str, bytes, dict[str, str]]]


def page_handler(respond: Respond) -> type[BaseHTTPRequestHandler]:
    """A GET handler answering from *respond*, without an access log."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, ctype, body, *more = respond(self.path, dict(self.headers.items()))
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            for name, value in (more[0] if more else {}).items():
                self.send_header(name, value)
            if status != 304:  # a 304 has no body, and says nothing of one
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if status != 304:
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


class LocalServer(ThreadingHTTPServer):
    daemon_threads = True

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the client hung up (a killed crawl): nothing to report
        super().handle_error(request, client_address)

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def serve(handler: type[BaseHTTPRequestHandler], port: int = 0, name: str = "local-site") -> LocalServer:
    """Serve *handler* on 127.0.0.1:*port* (0: a free port) from a daemon thread."""
    server = LocalServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True, name=name).start()
    return server


class ServedSite:
    """``start()`` and ``stop()`` for a site that answers GET requests with :meth:`respond_to`."""

    thread_name = "local-site"
    _server: LocalServer | None = None

    def respond_to(self, path: str, headers: dict[str, str]) -> tuple[int, str, bytes] | tuple[
            int, str, bytes, dict[str, str]]:
        raise NotImplementedError

    def start(self, port: int = 0) -> str:
        """Serve on 127.0.0.1:*port* (0: a free port); the site's base URL."""
        self._server = serve(page_handler(self.respond_to), port, self.thread_name)
        return self._server.base

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
