"""Real HTTP servers on 127.0.0.1 (port 0) for the notification and summary tests: a webhook
receiver (what Apprise's ``json://`` posts to) and a fake OpenAI-compatible chat-completions
endpoint. Each answers as its test scripts it and records every request."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: (status, body, seconds to wait first) for the n-th request (0-based)
Script = Callable[[int], tuple[int, bytes, float]]


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class ScriptedServer:
    """Answers POSTs as :attr:`script` says (default: 200 ``{}``); :attr:`received` in order."""

    script: Script = field(default=lambda n: (200, b"{}", 0.0))
    received: list[Received] = field(default_factory=list)
    host: str = "127.0.0.1"

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with server._lock:
                    n = len(server.received)
                    server.received.append(Received(self.path, dict(self.headers.items()), body))
                status, answer, wait = server.script(n)
                if wait:
                    time.sleep(wait)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                except OSError:
                    pass  # the client gave up waiting

        class Server(ThreadingHTTPServer):
            daemon_threads = True

        self._server = Server((self.host, 0), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True, name="scripted-server").start()

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def webhook(server: ScriptedServer, path: str = "/hook") -> str:
    """The Apprise URL that posts to *server* (``json://``: a JSON object with title and message)."""
    return f"json://{server.host}:{server.port}{path}"


def completion(text: str, tokens: int | None = 60) -> bytes:
    answer: dict[str, Any] = {"id": "cmpl-1", "object": "chat.completion",
                              "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                           "finish_reason": "stop"}]}
    if tokens is not None:
        answer["usage"] = {"prompt_tokens": tokens - 10, "completion_tokens": 10, "total_tokens": tokens}
    return json.dumps(answer).encode()


QUOTA = json.dumps({"error": {"message": "You exceeded your current quota, please check your plan and billing "
                                         "details.", "type": "insufficient_quota", "code": "insufficient_quota"}
                    }).encode()


def answering(text: str = "The price fell from 89.00 to 79.00.") -> Script:
    return lambda n: (200, completion(f"{text}"), 0.0)
