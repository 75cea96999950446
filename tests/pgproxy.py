"""A TCP proxy in front of the test PostgreSQL server that a test can cut and restore: the
database "going away" for real (connections closed mid-conversation, new ones refused), without
touching the server others use."""

from __future__ import annotations

import socket
import threading
import time
from urllib.parse import urlsplit, urlunsplit

__all__ = ["PgProxy"]


class PgProxy:
    """Listens on 127.0.0.1 (a free port, kept across cuts) and relays to *upstream*."""

    def __init__(self, upstream_uri: str):
        parts = urlsplit(upstream_uri)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 5432)
        self._uri = parts
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self.port = 0
        #: when set, the next COMMIT reaches the server but its answer never reaches the client
        self.swallow_next_commit_ack = threading.Event()
        self.swallowed = threading.Event()
        #: when set, the next COMMIT never reaches the server: the client's connection is closed and
        #: the server's kept open, so its backend sits idle in the transaction, holding its locks
        #: (a COMMIT lost on the way, a network partition)
        self.lose_next_commit = threading.Event()

    def uri(self, query: str = "") -> str:
        """The upstream URI, pointed at the proxy."""
        userinfo = self._uri.netloc.rpartition("@")[0]
        netloc = f"{userinfo}@127.0.0.1:{self.port}" if userinfo else f"127.0.0.1:{self.port}"
        base = urlunsplit(self._uri._replace(netloc=netloc, query=""))
        query = "&".join(q for q in (self._uri.query, query) if q)
        return f"{base}?{query}" if query else base

    def start(self) -> PgProxy:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    restore = start

    def cut(self) -> None:
        """Close every connection and refuse new ones until :meth:`restore`."""
        with self._lock:
            listener, self._listener = self._listener, None
            sockets, self._sockets = self._sockets, set()
        if listener is not None:
            _close(listener)
        for sock in sockets:
            _close(sock)

    stop = cut

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                server = socket.create_connection(self.upstream, timeout=5)
                server.settimeout(None)
            except OSError:
                _close(client)
                continue
            with self._lock:
                if self._listener is not listener:
                    _close(client)
                    _close(server)
                    return
                self._sockets |= {client, server}
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, upstream: bool) -> None:
        try:
            while data := source.recv(65536):
                if upstream and b"COMMIT\x00" in data and self.lose_next_commit.is_set():
                    self.lose_next_commit.clear()
                    _close(source)  # the client sees its connection die; the server sees nothing
                    self.swallowed.set()
                    return  # *sink* stays open (closed by cut/stop)
                sink.sendall(data)
                if upstream and b"COMMIT\x00" in data and self.swallow_next_commit_ack.is_set():
                    self.swallow_next_commit_ack.clear()
                    _close(source)  # the client never hears the answer …
                    self.swallowed.set()
                    time.sleep(0.5)  # … which the server sends after committing
                    break
        except OSError:
            pass
        _close(source)
        _close(sink)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
