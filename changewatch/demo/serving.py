"""Serving the local demo and fixture sites: a threaded HTTP server on 127.0.0.1 that stays
quiet when a client goes away mid-response (tests kill crawls at random moments)."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LocalServer", "serve"]


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
    threading.Thread(target=server.serve_forever, daemon=True, name=name).start()
    return server
