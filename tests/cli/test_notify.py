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


@pytest.mark.parametrize(("args", "says"), [
    (["--discard", "json://nowhere.example/"], "--discard 'json://nowhere.example/': no notification in the store "
                                               "goes to that destination"),
    (["--discard-all"], "--discard-all needs --before TIME"),
    (["--discard-all", "--before", "last week"], "--before 'last week' is not a time"),
    (["--before", "1d"], "--before goes with --discard or --discard-all"),
    (["--discard", "json://hooks.example/x", "--since", "1d"], "not --since or --all"),
    (["--discard", " "], "--discard needs a destination"),
    (["--discard", "json://hooks.example/x", "--resend"], "--resend, --discard and --discard-all: one at a time"),
])
def test_a_bad_discard_exits_2_with_one_line_and_discards_nothing(args: list[str], says: str, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    uri = store_with_a_pending_change(tmp_path / "state.db")
    assert main(["notify", "--store", uri, *args]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1, err
    assert main(["notify", "--store", uri]) == 0
    assert json.loads(capsys.readouterr().out)["discarded_at"] is None


def test_a_retired_destination_is_discarded_and_listed_as_such(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    uri = store_with_a_pending_change(tmp_path / "state.db")
    assert main(["notify", "--store", uri, "--discard", "json://hooks.example/x"]) == 0
    assert capsys.readouterr().out == ("discarded 1 pending change(s) for json://hooks.example/x (kept in the store "
                                       "as discarded: changewatch notify --all lists them)\n")
    assert main(["notify", "--store", uri]) == 0 and capsys.readouterr().out == ""  # nothing pending
    assert main(["notify", "--store", uri, "--all"]) == 0
    [line] = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert line["discarded_at"] is not None and line["sent_at"] is None and line["destination"] == "json://hooks.example/x"
    # again: a known destination with nothing left pending is not an error
    assert main(["notify", "--store", uri, "--discard", "json://hooks.example/x"]) == 0
    assert capsys.readouterr().out.startswith("discarded 0 pending change(s)")
    # and --resend has nothing to send to it, configured again or not
    assert main(["notify", "--store", uri, "--resend", "-s", "CHANGEWATCH_NOTIFY=json://hooks.example/x"]) == 0
    assert capsys.readouterr().out == "nothing to send\n"


def test_discard_all_before_a_time_leaves_later_changes_pending(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    uri = store_with_a_pending_change(tmp_path / "state.db")  # fetched at 2026-11-30T12:00:00Z
    assert main(["notify", "--store", uri, "--discard-all", "--before", "2026-11-30T12:00:00Z"]) == 0
    assert "discarded 0 pending change(s) of changes fetched before 2026-11-30T12:00:00Z for every destination" in \
        capsys.readouterr().out
    assert main(["notify", "--store", uri, "--discard-all", "--before", "2026-11-30T12:00:01Z"]) == 0
    assert capsys.readouterr().out.startswith("discarded 1 pending change(s)")
    assert main(["notify", "--store", uri]) == 0 and capsys.readouterr().out == ""
