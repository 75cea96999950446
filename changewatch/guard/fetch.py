"""One small document fetched once, blocking, under the SSRF policy: the watch spider's watchlist
when ``-a watchlist=`` is an http(s) URL. No Scrapy, no Twisted: it runs before the crawl does.

The crawl's own guard cannot fetch it: the spider must have its watches (or fail, and the crawl
with it) before the engine starts. The same :class:`AddressPolicy` decides: the URL's text is
checked, every address the host resolves to is checked, and the connection goes to a checked
address (no second lookup a rebinding DNS server could answer differently). Redirects are
followed by hand, each target checked the same way. One deadline covers everything (lookup,
connect, redirects, headers, body), and the body is cut at *max_bytes*.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from ..core.addresses import AddressPolicy, iter_ips
from ..core.urls import shown_url

__all__ = ["FetchError", "Fetched", "fetch_once"]

MAX_REDIRECTS = 5
#: what a watchlist is asked for
WATCHLIST_ACCEPT = "application/json, application/yaml, text/yaml, text/plain;q=0.9, */*;q=0.5"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CHUNK = 64 * 1024


class FetchError(Exception):
    """The document could not be fetched; ``str()`` starts with its class, as error records do:
    ``refused:``, ``timeout:``, ``too large:``, ``http:``, ``network:``, ``redirects:``."""


@dataclass(frozen=True, slots=True)
class Fetched:
    url: str  # after redirects
    body: bytes
    content_type: str


def fetch_once(url: str, policy: AddressPolicy, *, timeout: float, max_bytes: int, user_agent: str,
               accept: str = WATCHLIST_ACCEPT, size_setting: str = "CHANGEWATCH_WATCHLIST_MAXSIZE") -> Fetched:
    """GET *url* (http or https) under *policy*; raises :class:`FetchError` and nothing else.
    A hard deadline: the fetch runs in a thread that is abandoned (its socket shut) after
    *timeout* seconds, whatever it is waiting for (getaddrinfo has no timeout of its own).
    *size_setting* names the setting of *max_bytes* in the message of a body too large."""
    attempt = _Attempt(policy, timeout, max_bytes, user_agent, accept, size_setting)
    worker = threading.Thread(target=attempt.run, args=(url,), daemon=True, name="changewatch-fetch")
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        attempt.abandon()
        raise FetchError(f"timeout: no complete answer from {shown_url(url)} within {timeout:g} s")
    if attempt.error is not None:
        raise attempt.error
    assert attempt.result is not None
    return attempt.result


class _Attempt:
    def __init__(self, policy: AddressPolicy, timeout: float, max_bytes: int, user_agent: str, accept: str,
                 size_setting: str):
        self.policy, self.timeout, self.max_bytes, self.user_agent = policy, timeout, max_bytes, user_agent
        self.accept, self.size_setting = accept, size_setting
        self.deadline = time.monotonic() + timeout
        self.result: Fetched | None = None
        self.error: FetchError | None = None
        self._connection: http.client.HTTPConnection | None = None
        self._abandoned = False
        self._lock = threading.Lock()

    def run(self, url: str) -> None:
        try:
            self.result = self._follow(url)
        except FetchError as exc:
            self.error = exc
        except TimeoutError:  # the socket's own timeout: what is left of the deadline
            self.error = FetchError(f"timeout: no complete answer from {shown_url(url)} within {self.timeout:g} s")
        except (OSError, http.client.HTTPException, ValueError) as exc:
            self.error = FetchError(f"network: {shown_url(url)}: {type(exc).__name__}: {exc}")
        finally:
            self._close()

    def abandon(self) -> None:
        with self._lock:
            self._abandoned = True
            connection = self._connection
        if connection is not None and connection.sock is not None:
            try:
                connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _follow(self, url: str) -> Fetched:
        for _ in range(MAX_REDIRECTS + 1):
            response = self._get(url)
            if response.status not in _REDIRECTS:
                return self._document(url, response)
            location = response.getheader("Location")
            if not location:
                raise FetchError(f"http: {response.status} without a Location from {shown_url(url)}")
            self._close()
            url = urljoin(url, location.strip())
        raise FetchError(f"redirects: more than {MAX_REDIRECTS} redirects, the last to {shown_url(url)}")

    def _get(self, url: str) -> http.client.HTTPResponse:
        refusal = self.policy.url_refusal(url)
        if refusal is not None:
            raise FetchError(f"refused: {refusal}")
        parts = urlsplit(url)
        host = parts.hostname or ""
        https = parts.scheme.lower() == "https"
        port = parts.port or (443 if https else 80)
        addresses = self._addresses(host, port)
        connection = (_PinnedHTTPS if https else _PinnedHTTP)(host, port, addresses, self._remaining())
        with self._lock:
            if self._abandoned:
                raise FetchError("timeout: abandoned")
            self._connection = connection
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection.request("GET", target, headers={
            "User-Agent": self.user_agent, "Accept-Encoding": "identity", "Accept": self.accept})
        return connection.getresponse()

    def _addresses(self, host: str, port: int) -> list[str]:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise FetchError(f"network: cannot resolve {host}: {exc}") from None
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        if self.policy.checks_addresses and not self.policy.host_allowed(host):
            refusal = self.policy.addresses_refusal(iter_ips(addresses), host)
            if refusal is not None:
                raise FetchError(f"refused: {refusal}")
        return addresses

    def _document(self, url: str, response: http.client.HTTPResponse) -> Fetched:
        if response.status != 200:
            raise FetchError(f"http: {response.status} {response.reason} from {shown_url(url)}")
        encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
        if encoding != "identity":
            raise FetchError(f"http: {shown_url(url)} came {encoding}-encoded although asked for identity")
        length = response.getheader("Content-Length")
        if length and length.strip().isdigit() and int(length) > self.max_bytes:
            raise FetchError(f"too large: {shown_url(url)} announces {int(length)} bytes, more than the "
                             f"{self.max_bytes} allowed ({self.size_setting})")
        body = bytearray()
        while chunk := response.read(min(_CHUNK, self.max_bytes + 1 - len(body))):
            body += chunk
            if len(body) > self.max_bytes:
                raise FetchError(f"too large: {shown_url(url)} is more than the {self.max_bytes} bytes allowed "
                                 f"({self.size_setting})")
        return Fetched(url, bytes(body), response.getheader("Content-Type") or "")

    def _remaining(self) -> float:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise FetchError(f"timeout: no complete answer within {self.timeout:g} s")
        return remaining

    def _close(self) -> None:
        with self._lock:
            connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()


def _connect(addresses: list[str], port: int, timeout: float | None) -> socket.socket:
    """A connection to the first of the checked *addresses* that answers."""
    error: OSError = OSError("no address")
    for address in addresses:
        try:
            return socket.create_connection((address, port), timeout=timeout)
        except OSError as exc:
            error = exc
    raise error


class _PinnedHTTP(http.client.HTTPConnection):
    """Connects to the addresses checked, not to what a second lookup of the name would say."""

    def __init__(self, host: str, port: int, addresses: list[str], timeout: float):
        super().__init__(host, port, timeout=timeout)
        self.addresses = addresses

    def connect(self) -> None:
        self.sock = _connect(self.addresses, self.port, self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, addresses: list[str], timeout: float):
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.addresses = addresses

    def connect(self) -> None:
        sock = _connect(self.addresses, self.port, self.timeout)
        context: Any = self._context  # type: ignore[attr-defined]
        self.sock = context.wrap_socket(sock, server_hostname=self.host)
