"""``changewatch schema``: the watchlist's JSON Schema on stdout, for editors that check a
watchlist as it is typed (the package ships the same text as changewatch/watchlist.schema.json)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import add_command

__all__ = ["add_parser"]

NAME = "schema"


def run(args: argparse.Namespace) -> int:
    # Generated afresh from the model, so that `changewatch schema > changewatch/watchlist.schema.json`
    # regenerates the shipped file.
    from ..watchlist.model import watchlist_schema

    sys.stdout.write(watchlist_schema())
    return 0


def add_parser(sub: Any) -> None:
    parser = add_command(sub, NAME, __doc__, "print the watchlist's JSON Schema (for editors)")
    parser.set_defaults(func=run)
