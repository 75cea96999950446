"""Sending one message to one destination through Apprise: in a thread (Apprise blocks), each
attempt bounded by a timeout, failures retried with a bounded backoff within a bounded total
time; a destination from a watchlist fetched by URL is first checked against the SSRF policy.
Nothing here logs or returns a destination's secrets."""

from __future__ import annotations

import asyncio
import logging
import re
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..core.addresses import AddressPolicy, iter_ips
from ..core.destinations import Destination
from ..core.redact import redact

__all__ = ["Attempted", "SendPolicy", "send"]

FIRST_PAUSE = 1.0  # seconds before the second attempt, doubling
MAX_PAUSE = 30.0
_NOT_ENDPOINTS = frozenset({"setup_url", "service_url", "image_url"})
_QUERY = re.compile(r"\?[^\s'\")]*")
_USERINFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]*@")


@dataclass(frozen=True, slots=True)
class SendPolicy:
    timeout: float = 10.0  # seconds, one attempt
    retries: int = 3  # attempts after the first
    retry_time: float = 60.0  # seconds, every attempt and pause together
    #: the crawl's SSRF policy, for guarded destinations
    addresses: AddressPolicy | None = None


@dataclass(frozen=True, slots=True)
class Attempted:
    """How sending went: *error* is None when the destination took the message."""

    error: str | None
    attempts: int
    #: given up before a retry because the changes were no longer to be sent (discarded meanwhile)
    abandoned: bool = False

    @property
    def sent(self) -> bool:
        return self.error is None


def scrubbed(text: str) -> str:
    """An error's text as it may be logged and stored: no query strings, user names, passwords,
    tokens or keys (a library's message may quote the URL it posted to)."""
    return redact(_QUERY.sub("?…", _USERINFO.sub(r"\1***@", " ".join(text.split()))))[:300]


class _Captured(logging.Handler):
    """Apprise's warnings and errors logged by one thread: why a send failed (it returns a bool)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.thread = threading.get_ident()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.lines.append(record.getMessage())


def _hosts(plugin: Any) -> tuple[list[str], list[str]]:
    """The hosts a plugin may connect to: those it was given (which may be a token, for a service
    with a fixed endpoint) and its service's fixed endpoints."""
    given = [h for h in (getattr(plugin, "host", None), getattr(plugin, "smtp_host", None)) if isinstance(h, str) and h]
    fixed: list[str] = []
    for cls in type(plugin).__mro__:
        for name, value in vars(cls).items():
            if (name.endswith("_url") and name not in _NOT_ENDPOINTS and isinstance(value, str)
                    and value.startswith(("http://", "https://")) and "{" not in value):
                host = urlsplit(value).hostname
                if host and host not in fixed:
                    fixed.append(host)
    return given, fixed


def _resolved(host: str) -> list[str] | None:
    try:
        return list(dict.fromkeys(str(info[4][0]) for info in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)))
    except (OSError, UnicodeError):
        return None


def _refusal(plugin: Any, policy: AddressPolicy) -> str | None:
    """Why the SSRF policy refuses where *plugin* would connect (every address of every host it may
    reach is checked), or None."""
    given, fixed = _hosts(plugin)
    hosts = given + [h for h in fixed if h not in given]
    for host in hosts:  # what the names say first (an IP literal, localhost): no lookup needed
        if (refusal := policy.host_refusal(host)) is not None:
            return f"refused: {refusal}"
    if not policy.checks_addresses:
        return None
    for host in hosts:
        if policy.host_allowed(host):
            continue
        addresses = _resolved(host)
        if addresses is None:
            if host in given and not fixed:
                return f"refused: unresolvable: {host} does not resolve, so where it connects cannot be checked"
            continue  # a token in the host's place: the service's fixed endpoint is what is reached
        if (refusal := policy.addresses_refusal(iter_ips(addresses), host)) is not None:
            return f"refused: {refusal}"
    return None


def _send_once(destination: Destination, title: str, body: str, policy: SendPolicy) -> str | None:
    """One attempt, in a thread: None when sent, else why not."""
    import apprise

    plugin: Any = apprise.Apprise.instantiate(destination.url, suppress_exceptions=True)
    if plugin is None:
        return "config: Apprise cannot send to it"
    if destination.guarded and policy.addresses is not None and (refused := _refusal(plugin, policy.addresses)):
        return refused
    plugin.socket_connect_timeout = plugin.socket_read_timeout = policy.timeout
    captured = _Captured()
    apprise_logger = logging.getLogger("apprise")
    apprise_logger.addHandler(captured)
    started = time.monotonic()
    try:
        if plugin.notify(body=body, title=title, body_format=apprise.NotifyFormat.TEXT):
            return None
    except Exception as exc:  # a plugin's bug must not end the others' sending
        return scrubbed(f"error: {type(exc).__name__}: {exc}")
    finally:
        apprise_logger.removeHandler(captured)
    why = captured.lines[-1] if captured.lines else "the service did not take the message"
    if time.monotonic() - started >= policy.timeout * 0.95:  # Apprise calls a read timeout a connection error
        return scrubbed(f"timeout: no answer within {policy.timeout:g} s ({why})")
    return scrubbed(f"failed: {why}")


async def send(destination: Destination, title: str, body: str, policy: SendPolicy,
               proceed: Callable[[], Awaitable[bool]] | None = None) -> Attempted:
    """Send, trying again after a failure (pauses of 1, 2, 4… s) up to ``retries`` times and never
    past ``retry_time``; a refusal by the SSRF policy is not tried again. The event loop never
    waits on the network: each attempt runs in a thread and is abandoned after its timeout.
    *proceed*, when given, is asked before each retry whether the message is still wanted."""
    deadline = time.monotonic() + policy.retry_time
    pause = FIRST_PAUSE
    attempts = 0
    while True:
        attempts += 1
        try:
            error = await asyncio.wait_for(asyncio.to_thread(_send_once, destination, title, body, policy),
                                           policy.timeout * 2 + 1)  # Apprise's own timeouts end it sooner
        except TimeoutError:
            error = f"timeout: no answer within {policy.timeout:g} s"
        if error is None:
            return Attempted(None, attempts)
        if error.startswith(("refused:", "config:")) or attempts > policy.retries:
            return Attempted(error, attempts)
        if time.monotonic() + pause > deadline:
            return Attempted(f"{error} (stopped after {attempts} attempts: CHANGEWATCH_NOTIFY_RETRY_TIME)", attempts)
        await asyncio.sleep(pause)
        pause = min(pause * 2, MAX_PAUSE)
        if proceed is not None and not await proceed():
            return Attempted(f"{error} (not tried again: no longer pending)", attempts, abandoned=True)
