"""``changewatch demo``: serve a noisy demo site on 127.0.0.1, crawl it, change it, crawl again."""

from __future__ import annotations

import argparse
from typing import Any

from .common import add_command

__all__ = ["add_parser"]

NAME = "demo"


def run(args: argparse.Namespace) -> int:
    from ..demo.run import run_demo

    return run_demo(args.keep)


def add_parser(sub: Any) -> None:
    parser = add_command(sub, NAME, __doc__, "crawl a noisy demo site on 127.0.0.1, change it, crawl again")
    parser.add_argument("--keep", metavar="DIR", help="keep the demo's store, watchlist and feeds in DIR")
    parser.set_defaults(func=run)
