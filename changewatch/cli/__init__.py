"""The ``changewatch`` command: compare two saved pages, run the demo, list a store's change log,
write a report of it, write a change's evidence out, explain or teach what is learned of a key's
variation, migrate a store, list or resend notifications, print the watchlist's JSON Schema, or write a
per-site spider into a Scrapy project."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from . import changes, compare, demo, evidence, explain, genspider, migrate, noise, notify, report, schema
from .common import CommandError, error

__all__ = ["main"]

#: in the order ``changewatch --help`` lists them
_COMMANDS = (compare, demo, changes, evidence, explain, noise, migrate, report, notify, schema, genspider)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="changewatch", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in _COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return int(args.func(args))
    except CommandError as exc:
        error(args.command, str(exc))
        return exc.code
