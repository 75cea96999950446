"""``changewatch --help``, ``--version`` and each command's own help: one line per command, no
reStructuredText markup, and no two commands that say the same."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from changewatch import __version__
from changewatch.cli import _COMMANDS, EXIT_CLOSED_OUTPUT, main

ROOT = Path(__file__).resolve().parents[2]

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


@pytest.mark.parametrize("args", [["schema"], ["compare", "OLD", "NEW"]])
def test_a_closed_output_ends_the_command_quietly(args: list[str], tmp_path: Path) -> None:
    """``changewatch … | head``: the reader goes away before the command writes; no traceback."""
    (tmp_path / "OLD").write_text("<p>Doors open at 19:30.</p>" * 50)
    (tmp_path / "NEW").write_text("<p>Doors open at 21:00.</p>" * 50)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    process = subprocess.Popen([sys.executable, "-m", "changewatch.cli", *args], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # before the interpreter has even started: its first write finds no reader
    stderr = process.stderr.read()
    assert process.wait(timeout=120) == EXIT_CLOSED_OUTPUT == 141
    assert stderr == ""
