"""``changewatch schema``: the watchlist's JSON Schema on stdout."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_parser"]

NAME = "schema"


def run(args: argparse.Namespace) -> int:
    # Generated afresh from the model, so that `changewatch schema > changewatch/watchlist.schema.json`
    # regenerates the shipped file.
    from ..watchlist.model import watchlist_schema

    sys.stdout.write(watchlist_schema())
    return 0


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(NAME, help="print the JSON Schema of a watchlist, for editors that check it as it is "
                                           "typed (the package ships it as changewatch/watchlist.schema.json)")
    parser.set_defaults(func=run)
