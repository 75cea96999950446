"""Every command that changewatch prints for a person to run runs as printed: the report's
``changewatch evidence N --store URI -o evidence-N`` for each change, and a notification's
``changewatch changes --store URI --since T`` for the changes it had no room for. The store URI in
them is the one typed (``sqlite:///relative``, ``sqlite:////absolute``, options, a path with a
space), each command exits 0 as printed: one of each kind run by a shell, the report's other
evidence commands (which differ from it only in their change) as a shell splits them."""

from __future__ import annotations

import dataclasses
import html
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from changewatch.cli import main
from changewatch.core.comparisons import Kind
from changewatch.core.destinations import destination
from changewatch.core.evidence import keep_body
from changewatch.store import Evidence, Outcome, open_store

from ..notify.servers import ScriptedServer, webhook
from ..store.conftest import store_uri_of

pytestmark = pytest.mark.slow  # a webhook receiver, and a process for every command printed

ROOT = Path(__file__).resolve().parents[2]
URL = "https://shop.example/p/1"
COMMAND = re.compile(r"changewatch (?:evidence|changes) (?:'[^']*'|[^\s'<>]+)(?: (?:'[^']*'|[^\s'<>]+))*")


def filled(uri: str, hook: str, changes: int = 6) -> None:
    """A key's baseline and *changes* field changes, each with its evidence, pending for *hook*."""
    target = destination(hook)
    store = open_store(uri)
    try:
        for n in range(changes + 1):
            body = f"<html><body><p>Preis: {100 - n},00 €</p></body></html>".encode()
            kind = Kind.BASELINE if n == 0 else Kind.FIELD
            record = None if n == 0 else {"key": "p1", "kind": "field", "url": URL, "spider": "watch",
                                          "changes": {"price": {"old": f"{101 - n}", "new": f"{100 - n}"}}}
            outcome = Outcome(kind, URL, f"2026-11-{n + 1:02d}T12:00:00Z", snapshot=b"s", record=record,
                              evidence=Evidence(URL, 200, '[["Content-Type","text/html"]]', keep_body(body)))
            if record is not None:
                outcome = dataclasses.replace(outcome, notify=((target.id, target.shown),))
            store.commit("watch", "p1", None if n == 0 else n, outcome)
    finally:
        store.close()


def printed(text: str, program: str) -> list[str]:
    return sorted({m.group(0) for m in COMMAND.finditer(html.unescape(text)) if m.group(0).startswith(program)})


def run_as_printed(command: str, cwd: Path, bin_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.run(["/bin/sh", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """A ``changewatch`` on PATH that is this checkout's (as the installed command would be)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "changewatch"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m changewatch.cli "$@"\n')
    script.chmod(0o755)
    return folder


@pytest.fixture
def receiver() -> ScriptedServer:
    server = ScriptedServer()
    yield server  # type: ignore[misc]
    server.stop()


def check_printed_commands(uri: str, cwd: Path, bin_dir: Path, receiver: ScriptedServer,
                           capsys: pytest.CaptureFixture[str]) -> None:
    hook = webhook(receiver)
    filled(uri, hook)
    report = cwd / "report.html"
    assert main(["report", "--store", uri, "--since", "2026-01-01T00:00:00Z", "-o", str(report)]) == 0
    assert main(["notify", "--store", uri, "--resend", "-s", f"CHANGEWATCH_NOTIFY={hook}",
                 "-s", "CHANGEWATCH_ALLOW_PRIVATE=True", "-s", "CHANGEWATCH_NOTIFY_MAX_CHARS=500"]) == 0
    capsys.readouterr()
    page = report.read_text(encoding="utf-8")
    evidence_commands = printed(page, "changewatch evidence")
    messages = "\n".join(r.json["message"] for r in receiver.received)
    changes_commands = printed(messages, "changewatch changes")
    assert len(evidence_commands) == 6 and changes_commands, (evidence_commands, messages)
    for command in evidence_commands + changes_commands:  # the store as typed, once the shell has read it
        words = shlex.split(command)
        assert words[words.index("--store") + 1] == uri, command
    # the evidence commands differ only in their change: the last one runs through a shell as
    # printed, the others as the shell would have split them, in this process (a process each is slow)
    for command in evidence_commands[:-1]:
        assert main(shlex.split(command)[1:]) == 0, (command, capsys.readouterr().err)
        assert capsys.readouterr().out.strip(), command
    for command in evidence_commands[-1:] + changes_commands:
        done = run_as_printed(command, cwd, bin_dir)
        assert done.returncode == 0, (command, done.stderr)
        assert done.stdout.strip(), command
    last = evidence_commands[-1].rsplit(" ", 1)[1]
    assert (cwd / last / "after.html").read_bytes().startswith(b"<html>")
    # changewatch show prints the same command for its change
    change_id = last.rsplit("-", 1)[1]
    assert main(["show", change_id, "--store", uri]) == 0
    [shown] = printed(capsys.readouterr().out, "changewatch evidence")
    written = (cwd / last / "after.html").read_bytes()
    shutil.rmtree(cwd / last)
    done = run_as_printed(shown, cwd, bin_dir)
    assert done.returncode == 0, (shown, done.stderr)
    assert (cwd / last / "after.html").read_bytes() == written


@pytest.mark.parametrize("typed", ["sqlite:///stores/state.db", "sqlite:///{tmp}/stores/state.db",
                                   "sqlite:///{tmp}/my stores/state.db", "sqlite:///stores/state.db?timeout=5"])
def test_commands_printed_for_a_sqlite_store_run_as_printed(typed: str, tmp_path: Path, bin_dir: Path,
                                                            receiver: ScriptedServer,
                                                            capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = tmp_path / "work"
    uri = typed.format(tmp=cwd)
    (cwd / ("my stores" if "my stores" in uri else "stores")).mkdir(parents=True)
    monkeypatch.chdir(cwd)  # a relative store is relative to where the command runs, as typed
    check_printed_commands(uri, cwd, bin_dir, receiver, capsys)


def test_commands_printed_for_a_postgresql_store_run_as_printed(tmp_path: Path, bin_dir: Path,
                                                                receiver: ScriptedServer,
                                                                capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # where the commands run
    for uri in store_uri_of("postgresql", tmp_path):  # its schema in the query, as typed
        check_printed_commands(uri, tmp_path, bin_dir, receiver, capsys)
