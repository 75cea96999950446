"""``changewatch --help``, ``--version`` and each command's own help: one line per command, no
reStructuredText markup, and no two commands that say the same."""

from __future__ import annotations

import re

import pytest

from changewatch import __version__
from changewatch.cli import _COMMANDS, main

Capture = pytest.CaptureFixture[str]


def help_of(capsys: Capture, *args: str) -> str:
    with pytest.raises(SystemExit) as exit_:
        main([*args, "--help"])
    assert exit_.value.code == 0
    return capsys.readouterr().out


def test_the_command_list_has_one_line_per_command(capsys: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    out = help_of(capsys)
    listed = out[out.index("  COMMAND\n"):].splitlines()[1:]
    names = [command.NAME for command in _COMMANDS]
    assert [line.split()[0] for line in listed] == names  # none wraps onto a second line
    assert "``" not in out


def test_version(capsys: Capture) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out == f"changewatch {__version__}\n"


def test_each_command_has_its_own_help_without_markup(capsys: Capture) -> None:
    descriptions: dict[str, str] = {}
    for command in _COMMANDS:
        out = help_of(capsys, command.NAME)
        assert "``" not in out and not re.search(r":(?:class|mod|func|meth):`", out), command.NAME
        body = out.split("\n\n")[1]
        assert body.startswith(f"changewatch {command.NAME}") or command.NAME in body, command.NAME
        assert body not in descriptions.values(), f"{command.NAME} says what another says"
        descriptions[command.NAME] = body
