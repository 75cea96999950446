"""Sending one message: retried within bounds, never on the event loop, and a destination from a
fetched watchlist held to the SSRF policy (a real receiver on 127.0.0.1, real DNS answers)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Iterator

import pytest

from changewatch.core.addresses import AddressPolicy
from changewatch.core.destinations import destination
from changewatch.notify import sender
from changewatch.notify.sender import SendPolicy, scrubbed, send

from .servers import ScriptedServer, webhook


@pytest.fixture
def receiver() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def quick_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sender, "FIRST_PAUSE", 0.05)


def test_a_message_is_posted_as_apprise_s_json(receiver: ScriptedServer) -> None:
    outcome = asyncio.run(send(destination(webhook(receiver)), "the title", "the body", SendPolicy(timeout=5)))
    assert outcome.sent and outcome.attempts == 1
    [got] = receiver.received
    assert got.json["title"] == "the title" and got.json["message"] == "the body"


def test_failures_are_retried_and_then_reported(receiver: ScriptedServer) -> None:
    receiver.script = lambda n: (500, b"{}", 0.0) if n < 2 else (200, b"{}", 0.0)
    assert asyncio.run(send(destination(webhook(receiver)), "t", "b", SendPolicy(timeout=5, retries=3))).attempts == 3
    receiver.script = lambda n: (503, b"{}", 0.0)
    failed = asyncio.run(send(destination(webhook(receiver)), "t", "b", SendPolicy(timeout=5, retries=2)))
    assert not failed.sent and failed.attempts == 3 and "503" in (failed.error or "")


def test_the_total_time_is_bounded(receiver: ScriptedServer) -> None:
    receiver.script = lambda n: (500, b"{}", 0.0)
    started = time.monotonic()
    failed = asyncio.run(send(destination(webhook(receiver)), "t", "b", SendPolicy(timeout=5, retries=10,
                                                                                    retry_time=0.3)))
    assert time.monotonic() - started < 3 and "CHANGEWATCH_NOTIFY_RETRY_TIME" in (failed.error or "")
    assert failed.attempts < 10


def test_the_event_loop_runs_while_a_receiver_hangs(receiver: ScriptedServer) -> None:
    receiver.script = lambda n: (200, b"{}", 3.0)

    async def both() -> tuple[int, bool]:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        ticker = asyncio.ensure_future(tick())
        outcome = await send(destination(webhook(receiver)), "t", "b", SendPolicy(timeout=1, retries=0))
        ticker.cancel()
        return ticks, outcome.sent

    ticks, sent = asyncio.run(both())
    assert not sent and ticks >= 10  # ~1 s of ticks: the loop never waited on the socket


@pytest.mark.parametrize(("url", "rule"), [
    ("json://127.0.0.1:{port}/hook", "refused: loopback"),
    ("json://localhost:{port}/hook", "refused: loopback"),
    ("json://10.1.2.3/hook", "refused: private"),
    ("json://nothing.invalid/hook", "refused: unresolvable"),
    ("mailto://u:p@example.com?smtp=127.0.0.1", "refused: loopback"),
])
def test_a_guarded_destination_is_checked_against_the_ssrf_policy(receiver: ScriptedServer, url: str,
                                                                   rule: str) -> None:
    guarded = dataclasses.replace(destination(url.format(port=receiver.port)), guarded=True)
    outcome = asyncio.run(send(guarded, "t", "b", SendPolicy(timeout=2, retries=3, addresses=AddressPolicy())))
    assert not outcome.sent and (outcome.error or "").startswith(rule) and outcome.attempts == 1  # never retried
    assert receiver.received == []


def test_the_same_destination_from_the_operator_is_not_checked(receiver: ScriptedServer) -> None:
    trusted = destination(webhook(receiver))
    assert asyncio.run(send(trusted, "t", "b", SendPolicy(timeout=5, addresses=AddressPolicy()))).sent
    allowed = dataclasses.replace(trusted, guarded=True)
    policy = AddressPolicy.build(allowed_networks=["127.0.0.0/8"])
    assert asyncio.run(send(allowed, "t", "b", SendPolicy(timeout=5, addresses=policy))).sent


def test_an_error_s_text_loses_queries_credentials_and_tokens() -> None:
    text = scrubbed("HTTPConnectionPool(host='h', port=80): Max retries exceeded with url: /hook?token=abc123secret "
                    "(https://user:pw@h.example/x, key sk-proj-Abc123def456GHI789jkl012)")
    assert "abc123secret" not in text and "pw@" not in text and "sk-proj" not in text and "/hook?…" in text
