"""``changewatch notify``: what it refuses, and how (the sending itself: tests/e2e/test_notify.py)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from changewatch.cli import main
from changewatch.core.comparisons import Kind
from changewatch.core.destinations import destination
from changewatch.store import Outcome, open_store


def store_with_a_pending_change(path: Path) -> str:
    uri = f"sqlite:///{path}"
    store = open_store(uri)
    d = destination("json://hooks.example/x")
    store.commit("watch", "k", None, dataclasses.replace(
        Outcome(Kind.FIELD, "https://s.example/k", "2026-11-30T12:00:00Z", record={"key": "k", "kind": "field"}),
        notify=((d.id, d.shown),)))
    store.close()
    return uri


@pytest.mark.parametrize(("args", "says"), [
    (["--resend"], "no destinations are configured"),
    (["-s", "nonsense"], "-s 'nonsense': expected NAME=VALUE"),
    (["-s", "CHANGEWATCH_NOTIFY=slakc://secret"], "CHANGEWATCH_NOTIFY: destination 1: slakc://…"),
    (["--since", "yesterday"], "--since 'yesterday' is not a time"),
    (["--watchlist", "{bad"], "--watchlist: watchlist (inline JSON) is not valid JSON"),
])
def test_bad_arguments_exit_2_with_one_line(args: list[str], says: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    uri = store_with_a_pending_change(tmp_path / "state.db")
    assert main(["notify", "--store", uri, *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("changewatch notify: ") and says in err and "secret" not in err and err.count("\n") == 1


def test_a_store_that_is_not_there_is_not_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["notify", "--store", f"sqlite:///{tmp_path / 'typo.db'}"]) == 2
    assert "no such store" in capsys.readouterr().err and not (tmp_path / "typo.db").exists()


def test_pending_notifications_are_listed_and_say_whether_they_are_configured(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    uri = store_with_a_pending_change(tmp_path / "state.db")
    assert main(["notify", "--store", uri]) == 0
    [line] = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert line["destination"] == "json://hooks.example/x" and line["configured"] is False and line["attempts"] == 0
    assert main(["notify", "--store", uri, "-s", "CHANGEWATCH_NOTIFY=json://hooks.example/x"]) == 0
    assert json.loads(capsys.readouterr().out)["configured"] is True
    assert main(["notify", "--store", uri, "--spider", "other"]) == 0 and capsys.readouterr().out == ""
