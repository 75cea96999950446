"""The changewatch command: what a store watches and how each watch is doing, one change as a
person reads it, what a watch of a URL would compare, the change log, reports, evidence, learned
noise, notifications, migrations, the watchlist's JSON Schema, and a per-site spider written into a
Scrapy project (docs/cli.md).

Inside a Scrapy project (scrapy.cfg here or above, or SCRAPY_SETTINGS_MODULE) every command
reads the project's settings, CHANGEWATCH_STORE first, unless --store says otherwise."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .. import __version__
from . import (
    changes,
    compare,
    demo,
    evidence,
    explain,
    genspider,
    migrate,
    noise,
    notify,
    preview,
    report,
    schema,
    show,
    status,
)
from .common import CommandError, error, plain, resolve_store, silence_stdout

__all__ = ["main"]

#: the exit status of a command whose output was closed (``| head``): a process killed by SIGPIPE's
EXIT_CLOSED_OUTPUT = 128 + 13

#: in the order ``changewatch --help`` lists them
_COMMANDS = (status, show, preview, changes, report, evidence, explain, noise, notify, compare, migrate, schema,
             genspider, demo)


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """The top help: each command's line beside its name, ``genspider`` included."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30)

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        # argparse measures the commands' names without the indent it then prints them with,
        # so the longest name would wrap its line onto the next
        names = [len(self._format_action_invocation(sub)) for sub in self._iter_indented_subactions(action)]
        if names:
            self._action_max_length = max(self._action_max_length, max(names) + self._current_indent + 2)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="changewatch", description=plain(__doc__ or ""),
                                     formatter_class=_Formatter)
    parser.add_argument("--version", action="version", version=f"changewatch {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands",
                                description="changewatch COMMAND --help says more of each")
    for command in _COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        resolve_store(args)
        code = int(args.func(args))
        sys.stdout.flush()  # here, where a closed pipe is caught: not in Python's flush at exit
        return code
    except CommandError as exc:
        error(args.command, str(exc))
        return exc.code
    except BrokenPipeError:  # the reader went away (| head): quiet, as a command killed by SIGPIPE
        silence_stdout()
        return EXIT_CLOSED_OUTPUT
