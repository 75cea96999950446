"""The notifier against a real SQLite store and real receivers on 127.0.0.1: every attempt is
counted in the store, a destination discarded while it is being sent to is given up at the next
attempt (the others are sent to all the same), and the warning about a destination the
configuration does not name gives the command that discards it, which works as given."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from changewatch.cli import main
from changewatch.core.comparisons import Kind
from changewatch.core.destinations import Destination, destination
from changewatch.notify import sender
from changewatch.notify.notifier import Notifier
from changewatch.notify.sender import SendPolicy
from changewatch.store import Outcome, RoutingStore, open_store

from .servers import ScriptedServer, webhook

AT = "2026-11-30T12:00:00Z"


@pytest.fixture
def receivers() -> Iterator[tuple[ScriptedServer, ScriptedServer]]:
    pair = ScriptedServer(), ScriptedServer()
    yield pair
    for server in pair:
        server.stop()


@pytest.fixture(autouse=True)
def quick_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sender, "FIRST_PAUSE", 0.05)


def _store_with_changes(uri: str, *destinations: Destination) -> None:
    store = open_store(uri)
    try:
        for n in range(2):
            store.commit("watch", f"k{n}", None, dataclasses.replace(
                Outcome(Kind.FIELD, f"https://s.example/k{n}", AT, record={"key": f"k{n}", "kind": "field"}),
                notify=tuple((d.id, d.shown) for d in destinations)))
    finally:
        store.close()


def _notify(uri: str, destinations: list[Destination], retries: int = 3) -> Any:
    store = open_store(uri)
    assert isinstance(store, RoutingStore)

    async def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    try:
        notifier = Notifier(store, call, {d.id: d for d in destinations}, SendPolicy(timeout=5, retries=retries),
                            "owner", max_chars=4000, store_name=uri)
        return asyncio.run(notifier.run(spider="watch"))
    finally:
        store.close()


def _states(uri: str) -> dict[str, Any]:
    store = open_store(uri)
    assert isinstance(store, RoutingStore)
    try:
        return {f"{s.shown} {s.change_id}": s for s in store.notification_states(pending=False)}
    finally:
        store.close()


def test_every_attempt_is_counted(tmp_path: Path, receivers: tuple[ScriptedServer, ScriptedServer]) -> None:
    failing, _ = receivers
    d = destination(webhook(failing))
    uri = f"sqlite:///{tmp_path / 'state.db'}"
    _store_with_changes(uri, d)
    failing.script = lambda n: (500, b"{}", 0.0)
    report = _notify(uri, [d], retries=2)
    assert report.attempts[d.shown] == 3 and len(failing.received) == 3 and d.shown in report.failed
    assert {s.attempts for s in _states(uri).values()} == {3}  # as many as the crawl made, not one
    failing.script = lambda n: (500, b"{}", 0.0) if n < 4 else (200, b"{}", 0.0)
    report = _notify(uri, [d], retries=2)
    assert report.sent == {d.shown: 2} and report.attempts[d.shown] == 2
    assert {(s.attempts, s.sent_at is not None) for s in _states(uri).values()} == {(5, True)}


def test_a_destination_discarded_while_it_is_sent_to_is_given_up_at_the_next_attempt(
        tmp_path: Path, receivers: tuple[ScriptedServer, ScriptedServer]) -> None:
    """The receiver fails; while the first attempt is answered, the operator discards the
    destination: no second attempt is made, nothing is reported failed, and the other
    destination's message goes out all the same."""
    retired, kept = receivers
    old, new = destination(webhook(retired)), destination(webhook(kept))
    uri = f"sqlite:///{tmp_path / 'state.db'}"
    _store_with_changes(uri, old, new)

    def discard_then_fail(n: int) -> tuple[int, bytes, float]:
        if n == 0:
            assert main(["notify", "--store", uri, "--discard", old.shown]) == 0
        return 500, b"{}", 0.0

    retired.script = discard_then_fail
    report = _notify(uri, [old, new], retries=5)
    assert len(retired.received) == 1 and report.attempts[old.shown] == 1
    assert report.failed == {} and report.sent == {new.shown: 2} and len(kept.received) == 1
    states = _states(uri)
    assert all(s.discarded_at and s.sent_at is None for key, s in states.items() if key.startswith(old.shown))
    assert all(s.sent_at and s.discarded_at is None for key, s in states.items() if key.startswith(new.shown))


def test_the_warning_about_a_destination_not_named_gives_the_command_that_discards_it(
        tmp_path: Path, receivers: tuple[ScriptedServer, ScriptedServer], caplog: pytest.LogCaptureFixture,
        capsys: pytest.CaptureFixture[str]) -> None:
    retired, kept = receivers
    old, new = destination(webhook(retired) + "?token=s3cret"), destination(webhook(kept))
    uri = f"sqlite:///{tmp_path / 'state.db'}"
    _store_with_changes(uri, old)
    with caplog.at_level(logging.WARNING, logger="changewatch"):
        report = _notify(uri, [new])
    assert report.unknown == {old.shown: 2}
    [warning] = [r.getMessage() for r in caplog.records if "does not name" in r.getMessage()]
    command = warning.rpartition("or end them: ")[2]
    assert command == f"changewatch notify --store {shlex.quote(uri)} --discard {shlex.quote(old.shown)}"
    assert "s3cret" not in warning
    assert main(shlex.split(command)[1:]) == 0  # as given, copied and pasted
    assert capsys.readouterr().out.startswith("discarded 2 pending change(s)")
    caplog.clear()
    assert _notify(uri, [new]).unknown == {} and "does not name" not in caplog.text
