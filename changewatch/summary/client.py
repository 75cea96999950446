"""An OpenAI-compatible chat-completions call (``POST {base}/chat/completions``) on the crawl's
asyncio event loop (aiohttp: it never blocks the loop), bounded by a timeout, its host's addresses
checked against the SSRF policy as they are resolved. Every answer is one of :class:`Answer`,
:class:`Unfunded` (the account has no credit or quota, or the key is refused: asking again cannot
help) or :class:`Failed` (this once: a 5xx, a timeout, a body that is not an answer)."""

from __future__ import annotations

import asyncio
import json
import re
import socket
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from ..core.addresses import AddressPolicy, iter_ips

__all__ = ["Answer", "ChatClient", "Failed", "Unfunded"]

MAX_TOKENS = 120  # the longest answer asked for: one sentence
_UNFUNDED = re.compile(r"insufficient[_ ]quota|insufficient[_ ]credit|insufficient[_ ]balance|billing|no credits?\b"
                       r"|out of credits?|credit balance|payment[_ ]required|exceeded your current quota"
                       r"|quota[_ ]exceeded", re.IGNORECASE)
_BODY_SHOWN = 200


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    tokens: int | None  # the usage the endpoint reported (prompt + completion), if it did


@dataclass(frozen=True, slots=True)
class Unfunded:
    why: str


@dataclass(frozen=True, slots=True)
class Failed:
    why: str
    timeout: bool = False


class _Refused(OSError):
    pass


class _GuardedResolver(AbstractResolver):
    """aiohttp's threaded resolver, refusing a host with any address the policy refuses (an IP
    literal never reaches a resolver: the URL's host is checked when the crawl starts)."""

    def __init__(self, policy: AddressPolicy):
        self.policy = policy
        self.inner = aiohttp.ThreadedResolver()
        self.refused: str | None = None

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
                      ) -> list[ResolveResult]:
        found = await self.inner.resolve(host, port, family)
        refusal = self.policy.addresses_refusal(iter_ips(r["host"] for r in found), host)
        if refusal is not None:
            self.refused = f"refused: {refusal}"
            raise _Refused(self.refused)
        return found

    async def close(self) -> None:
        await self.inner.close()


def _shown(body: str) -> str:
    text = " ".join(body.split())
    return text if len(text) <= _BODY_SHOWN else text[:_BODY_SHOWN - 1] + "…"


def _answer(status: int, body: str) -> Answer | Unfunded | Failed:
    if status == 402 or (status >= 400 and _UNFUNDED.search(body)):
        return Unfunded(f"HTTP {status}: {_shown(body)}")
    if status in (401, 403):
        return Unfunded(f"HTTP {status} (the API key was refused): {_shown(body)}")
    if status != 200:
        return Failed(f"HTTP {status}: {_shown(body)}")
    try:
        data: Any = json.loads(body)
        content = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return Failed(f"not a chat-completions answer (no choices[0].message.content): {_shown(body)}")
    if not isinstance(content, str) or not content.strip():
        return Failed("an empty answer")
    usage = data.get("usage") if isinstance(data, dict) else None
    tokens = usage.get("total_tokens") if isinstance(usage, dict) else None
    line = next(line.strip() for line in content.strip().splitlines() if line.strip())
    return Answer(line if len(line) <= 400 else line[:399] + "…", tokens if isinstance(tokens, int) else None)


class ChatClient:
    """One endpoint and model; its connections are made (and closed) on the running event loop."""

    def __init__(self, base_url: str, model: str, api_key: str, timeout: float, policy: AddressPolicy | None):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.policy = policy
        self._session: aiohttp.ClientSession | None = None
        self._resolver: _GuardedResolver | None = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._resolver = _GuardedResolver(self.policy) if self.policy is not None else None
            connector = aiohttp.TCPConnector(resolver=self._resolver, limit=64) if self._resolver else None
            self._session = aiohttp.ClientSession(connector=connector, trust_env=True)
        return self._session

    async def complete(self, system: str, prompt: str) -> Answer | Unfunded | Failed:
        payload = {"model": self.model, "max_tokens": MAX_TOKENS, "temperature": 0,
                   "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}]}
        headers = {"Authorization": f"Bearer {self.api_key}", "Content-Type": "application/json"}
        session = self._open()
        try:
            async with session.post(self.url, json=payload, headers=headers,
                                    timeout=aiohttp.ClientTimeout(total=self.timeout)) as response:
                body = await response.text(errors="replace")
                return _answer(response.status, body)
        except TimeoutError:
            return Failed(f"timeout: no answer within {self.timeout:g} s", timeout=True)
        except aiohttp.ClientError as exc:
            if self._resolver is not None and self._resolver.refused:
                return Unfunded(self._resolver.refused)  # the policy will refuse it every time
            return Failed(f"{type(exc).__name__}: {exc}")

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        # Let aiohttp's transports finish closing before the loop moves on (its documented idiom).
        await asyncio.sleep(0)
