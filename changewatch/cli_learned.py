"""``changewatch explain KEY --store URI --spider NAME``: what is learned of a key's normal
variation (docs/architecture.md, "Learned noise"); ``changewatch noise CHANGE_ID --store URI``:
teach it that a reported change was noise (the lines it showed are learned as volatile, so that
the same variation is quiet from now on, while other text in their place is still a change)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .cli_changes import open_existing_store
from .core.comparisons import load_comparisons
from .core.learned import Learned, learn_noise, signature
from .core.snapshot import Snapshot, SnapshotError
from .learning import LearningError, rewrite_learned
from .store import DEFAULT_STORE_URI, ChangeLogStore, LoggedChange, StoreError

__all__ = ["add_parser", "describe"]

_SHOWN_LINES = 20


def _error(command: str, message: str) -> None:
    print(f"changewatch {command}: {message}", file=sys.stderr)


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


def explain(args: argparse.Namespace) -> int:
    """Exit 0: printed; 1: no such key (or no text stored for it); 2: a store that cannot be opened."""
    try:
        store: Any = open_existing_store(args.store, upgrade=False, protocol=ChangeLogStore,
                                         purpose="explain what is learned")
    except StoreError as exc:
        _error("explain", str(exc))
        return 2
    try:
        state = store.read(args.spider, args.key)
    except StoreError as exc:
        _error("explain", str(exc))
        return 2
    finally:
        store.close()
    if state is None or state.snapshot is None:
        _error("explain", f"key {args.key!r} of spider {args.spider!r} has no stored observation")
        return 1
    try:
        part = Snapshot.decode(state.snapshot, load_comparisons()).part("content")
    except SnapshotError as exc:
        _error("explain", f"key {args.key!r}: {exc}")
        return 1
    if part is None:
        _error("explain", f"key {args.key!r} of spider {args.spider!r} has no stored text: nothing is learned for "
                          "fields and entities")
        return 1
    found = describe(part.learned, part.text)
    if args.json:
        print(json.dumps({"key": args.key, "spider": args.spider, **found}, ensure_ascii=False))
    else:
        _print(args.key, args.spider, found)
    return 0


def _change(store: Any, change_id: int) -> LoggedChange | None:
    for change in store.changes(None, after_id=change_id - 1):
        return change if change.id == change_id else None
    return None


def noise(args: argparse.Namespace) -> int:
    """Exit 0: learned; 1: no such change, not a content change, or its key has no stored text;
    2: a bad argument or a store that cannot be opened."""
    if args.change_id < 1:
        _error("noise", f"CHANGE_ID must be a change's id (1 or more), not {args.change_id}")
        return 2
    try:
        store: Any = open_existing_store(args.store, upgrade=False, protocol=ChangeLogStore,
                                         purpose="learn a change as noise")
    except StoreError as exc:
        _error("noise", str(exc))
        return 2
    try:
        change = _change(store, args.change_id)
        if change is None:
            _error("noise", f"no change {args.change_id} in the store")
            return 1
        diff = change.record.get("diff")
        if change.kind != "content" or not isinstance(diff, str):
            _error("noise", f"change {args.change_id} is of kind {change.kind}: only a content change (with its "
                            "diff) can be learned as noise")
            return 1
        learned = rewrite_learned(store, change.spider, change.key, lambda was: learn_noise(was, diff),
                                  load_comparisons())
    except LearningError as exc:
        _error("noise", str(exc))
        return 1
    except StoreError as exc:
        _error("noise", f"{exc}; nothing was learned")
        return 1
    finally:
        store.close()
    print(f"{change.spider} {change.key}: change {args.change_id} learned as noise "
          f"({len(learned.lines) if learned else 0} volatile line signatures now)")
    return 0


def add_parser(sub: Any) -> None:
    store_help = f"the store to read (default {DEFAULT_STORE_URI}); never created"
    explained = sub.add_parser("explain", help="show what is learned of a key's normal variation",
                               description=__doc__.split("\n\n")[0])
    explained.add_argument("key", metavar="KEY")
    explained.add_argument("--store", metavar="URI", default=DEFAULT_STORE_URI, help=store_help)
    explained.add_argument("--spider", metavar="NAME", default="watch", help="the key's spider (default watch)")
    explained.add_argument("--json", action="store_true", help="print one JSON object")
    explained.set_defaults(func=explain)
    taught = sub.add_parser("noise", help="learn a reported content change as noise for its key",
                            description=__doc__.split("\n\n")[0])
    taught.add_argument("change_id", type=int, metavar="CHANGE_ID", help="the change's id (its record's change_id)")
    taught.add_argument("--store", metavar="URI", default=DEFAULT_STORE_URI, help=store_help)
    taught.set_defaults(func=noise)
