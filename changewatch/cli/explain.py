"""``changewatch explain KEY``: what is learned of a key's normal variation (calibration loads,
volatile lines and regions, whether the page is always noisy) and which lines of its stored text
are ignored when they change (docs/architecture.md, "Learned noise"). ``changewatch noise``
teaches it more."""

from __future__ import annotations

import argparse
from typing import Any

from ..core import load_comparisons
from ..core.learned import Learned, signature
from ..core.snapshot import Snapshot, SnapshotError
from ..store import ChangeLogStore, StoreError
from .common import CommandError, add_command, add_store_option, error, json_line, open_store

__all__ = ["add_parser", "describe"]

NAME = "explain"

_SHOWN_LINES = 20


def describe(learned: Learned | None, text: str | None) -> dict[str, Any]:
    """What is learned, as ``explain`` prints it: counts, region samples, and the lines of the
    stored text that are learned to vary."""
    learned = learned or Learned()
    lines = [line for line in (text or "").split("\n") if line.strip()]
    volatile = [line for line in lines if signature(line) in learned.lines]
    return {"calibration_loads": learned.calibrated, "volatile_lines": len(learned.lines),
            "volatile_regions": len(learned.regions), "regions": sorted(s for s in learned.regions.values() if s),
            "candidates": len(learned.candidates), "recent_variants": len(learned.variants),
            "noisy": {0: False, 1: "found, not reported yet", 2: "reported"}[min(learned.noisy, 2)],
            "stored_lines": len(lines), "stored_volatile_lines": volatile}


def _print(key: str, spider: str, found: dict[str, Any]) -> None:
    print(f"{spider} {key}: {found['calibration_loads']} calibration loads learned from; "
          f"{found['volatile_lines']} volatile line signatures, {found['volatile_regions']} volatile regions, "
          f"{found['candidates']} lines or regions seen changing (not volatile yet), "
          f"{found['recent_variants']} recent variants remembered")
    if found["noisy"]:
        print(f"always noisy: every line of the page varies ({found['noisy']})")
    volatile = found["stored_volatile_lines"]
    print(f"{len(volatile)} of the stored text's {found['stored_lines']} lines are ignored when they change:")
    for line in volatile[:_SHOWN_LINES]:
        print(f"  ~ {line}")
    if len(volatile) > _SHOWN_LINES:
        print(f"  … and {len(volatile) - _SHOWN_LINES} more")
    for sample in found["regions"][:_SHOWN_LINES]:
        print(f"  region, seen holding: {sample}")


def run(args: argparse.Namespace) -> int:
    """Exit 0: printed; 1: no such key (or no text stored for it); 2: a store that cannot be opened."""
    store: Any = open_store(args.store, upgrade=False, protocol=ChangeLogStore, purpose="explain what is learned")
    try:
        state = store.read(args.spider, args.key)
    except StoreError as exc:
        error(NAME, str(exc))
        return 2
    finally:
        store.close()
    if state is None or state.snapshot is None:
        raise CommandError(f"key {args.key!r} of spider {args.spider!r} has no stored observation", 1)
    try:
        part = Snapshot.decode(state.snapshot, load_comparisons()).part("content")
    except SnapshotError as exc:
        raise CommandError(f"key {args.key!r}: {exc}", 1) from None
    if part is None:
        raise CommandError(f"key {args.key!r} of spider {args.spider!r} has no stored text: nothing is learned for "
                           "fields and entities", 1)
    found = describe(part.learned, part.text)
    if args.json:
        print(json_line({"key": args.key, "spider": args.spider, **found}))
    else:
        _print(args.key, args.spider, found)
    return 0


def add_parser(sub: Any) -> None:
    parser = add_command(sub, NAME, __doc__, "show what is learned of a key's normal variation")
    parser.add_argument("key", metavar="KEY")
    add_store_option(parser)
    parser.add_argument("--spider", metavar="NAME", default="watch", help="the key's spider (default watch)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)
