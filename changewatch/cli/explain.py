"""``changewatch explain KEY``: what is learned of a key's normal variation (docs/noise.md,
"Learned noise"): its slots (where the page varies, between the stable lines around them, and
its volatile lines, slots of one line), numbered, with how often they varied and a sample;
calibration loads, recent variants, whether the page is always noisy. ``--forget-slot N``
forgets one slot; ``changewatch noise`` teaches more."""

from __future__ import annotations

import argparse
from typing import Any

from ..core.learned import Learned, numbered, signature, without
from ..core.snapshot import Snapshot, SnapshotError
from ..store import ChangeLogStore, StoreError
from .common import (
    CommandError,
    UsageError,
    add_command,
    add_store_option,
    error,
    json_line,
    open_store,
    project_comparisons,
)

__all__ = ["add_parser", "describe"]

NAME = "explain"

_SHOWN = 20


def _listed(learned: Learned, text: str | None) -> list[dict[str, Any]]:
    """The slots as ``explain`` lists them, numbered from 1."""
    lines = {signature(line): line.strip() for line in (text or "").split("\n") if line.strip()}
    out: list[dict[str, Any]] = []
    for number, (kind, what) in enumerate(numbered(learned, text), 1):
        if kind == "slot":
            out.append({"number": number, "kind": "slot", "before": what.labels[0], "after": what.labels[1],
                        "varied": what.varied, "most_lines": what.most, "sample": what.sample,
                        "provisional": what.provisional})
        else:
            out.append({"number": number, "kind": "line", "before": "", "after": "", "varied": None,
                        "most_lines": 1, "sample": lines.get(what, ""), "provisional": False})
    return out


def describe(learned: Learned | None, text: str | None, snapshot: Snapshot | None = None) -> dict[str, Any]:
    """What is learned, as ``explain`` prints it: counts, the numbered slots, and the lines of the
    stored text that are learned to vary; of *snapshot*'s fields and entity set (``changewatch
    noise``), the volatile fields, where entities come and go, and their volatile fields."""
    learned = learned or Learned()
    lines = [line for line in (text or "").split("\n") if line.strip()]
    volatile = [line for line in lines if signature(line) in learned.lines]
    fields = snapshot.part("fields") if snapshot is not None else None
    entities = snapshot.part("entities") if snapshot is not None else None
    return {"calibration_loads": learned.calibrated, "volatile_lines": len(learned.lines),
            "slots": _listed(learned, text), "candidates": len(learned.candidates),
            "recent_variants": len(learned.variants),
            "noisy": {0: False, 1: "found, not reported yet", 2: "reported"}[min(learned.noisy, 2)],
            "flipping": bool(learned.flipping), "flip_backs": len(learned.flipped),
            "stored_lines": len(lines), "stored_volatile_lines": volatile,
            "volatile_fields": sorted(fields.volatile) if fields is not None else [],
            "entity_churn": list(entities.churn) if entities is not None else [],
            "volatile_entity_fields": sorted(entities.volatile) if entities is not None else []}


#: a volatile line no longer in the stored text: only its signature is kept
_GONE = "(not in the stored text; only its signature is kept)"


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _anchor(label: str, edge: str) -> str:
    return f"“{label}”" if label else edge


def _print(key: str, spider: str, found: dict[str, Any], text: bool) -> None:
    if not text:
        print(f"{spider} {key}: no stored text (its fields or entities are compared): no slots")
    else:
        _print_text(key, spider, found)
    if found["volatile_fields"]:
        print(f"fields learned as volatile: {', '.join(found['volatile_fields'])}")
    if found["entity_churn"] or found["volatile_entity_fields"]:
        print(f"entities come and go as noise under: {', '.join(found['entity_churn']) or 'nowhere'}; "
              f"volatile entity fields: {', '.join(found['volatile_entity_fields']) or 'none'}")
    if not text and not (found["volatile_fields"] or found["entity_churn"] or found["volatile_entity_fields"]):
        print("nothing is learned of its fields or entities (changewatch noise CHANGE_ID teaches it)")


def _print_text(key: str, spider: str, found: dict[str, Any]) -> None:
    slots = [s for s in found["slots"] if s["kind"] == "slot"]
    print(f"{spider} {key}: {_count(found['calibration_loads'], 'calibration load')} learned from; "
          f"{_count(len(slots), 'slot')}, {_count(found['volatile_lines'], 'volatile line')}, "
          f"{_count(found['candidates'], 'line or place', 'lines or places')} seen changing (not volatile yet), "
          f"{_count(found['recent_variants'], 'recent variant')} remembered")
    if found["noisy"]:
        print(f"always noisy: nearly every line of the page varies ({found['noisy']})")
    if found["flipping"]:
        print(f"keeps flipping: its text returned to earlier ones {found['flip_backs']} times lately "
              "(health: flipping:); each return is a provisional slot until the next run")
    for slot in found["slots"][:_SHOWN]:
        if slot["kind"] == "slot":
            print(f"  {slot['number']}. between {_anchor(slot['before'], 'the start')} and "
                  f"{_anchor(slot['after'], 'the end')}: varied {_count(slot['varied'], 'time')}, up to "
                  f"{_count(slot['most_lines'], 'line')}{' (provisional)' if slot['provisional'] else ''}, "
                  f"e.g. {slot['sample']}")
        else:
            print(f"  {slot['number']}. the line {_anchor(slot['sample'], _GONE)}, anywhere")
    if len(found["slots"]) > _SHOWN:
        print(f"  … and {len(found['slots']) - _SHOWN} more")
    volatile = found["stored_volatile_lines"]
    print(f"{len(volatile)} of the stored text's {found['stored_lines']} lines vary wherever they stand:")
    for line in volatile[:_SHOWN]:
        print(f"  ~ {line}")


def _read(args: argparse.Namespace, store: Any, comparisons: tuple[Any, ...]) -> Any:
    try:
        state = store.read(args.spider, args.key)
    except StoreError as exc:
        raise CommandError(str(exc), 2) from None
    if state is None or state.snapshot is None:
        hint = " (a key of a spider of your own: --spider NAME)" if args.spider == "watch" else ""
        raise CommandError(f"key {args.key!r} of spider {args.spider!r} has no stored observation{hint}", 1)
    try:
        return Snapshot.decode(state.snapshot, comparisons)
    except SnapshotError as exc:
        raise CommandError(f"key {args.key!r}: {exc}", 1) from None


def _forget(args: argparse.Namespace, store: Any, part: Any, comparisons: tuple[Any, ...]) -> int:
    from ..runtime.learning import LearningError, rewrite_learned

    listed = numbered(part.learned or Learned(), part.text)
    if not 1 <= args.forget_slot <= len(listed):
        raise CommandError(f"key {args.key!r} has no slot {args.forget_slot} (it has {len(listed)})", 1)
    item = listed[args.forget_slot - 1]
    shown = _listed(part.learned or Learned(), part.text)[args.forget_slot - 1]
    try:
        rewrite_learned(store, args.spider, args.key, lambda was: without(was, item), comparisons)
    except (LearningError, StoreError) as exc:
        error(NAME, f"{exc}; nothing was forgotten")
        return 1
    where = (f"between {_anchor(shown['before'], 'the start')} and {_anchor(shown['after'], 'the end')}"
             if shown["kind"] == "slot" else f"the line {_anchor(shown['sample'], _GONE)}")
    print(f"{args.spider} {args.key}: slot {args.forget_slot} forgotten ({where}); what it holds is compared again")
    return 0


def run(args: argparse.Namespace) -> int:
    """Exit 0: printed (or forgotten); 1: no such key, or no such slot (none without a text);
    2: a store that cannot be opened."""
    writing = args.forget_slot is not None
    if writing and args.forget_slot < 1:
        raise UsageError(f"--forget-slot takes a slot's number as explain lists them (1 or more), "
                         f"not {args.forget_slot}")
    comparisons = project_comparisons()
    store: Any = open_store(args.store, upgrade=False, protocol=ChangeLogStore,
                            purpose="forget a slot" if writing else "explain what is learned")
    try:
        snapshot = _read(args, store, comparisons)
        part = snapshot.part("content")
        if writing:
            if part is None:
                raise CommandError(f"key {args.key!r} of spider {args.spider!r} has no stored text: it has no slots "
                                   "(-a forget=KEY forgets what is learned of its fields and entities)", 1)
            return _forget(args, store, part, comparisons)
    finally:
        store.close()
    found = describe(part.learned if part else None, part.text if part else None, snapshot)
    if args.json:
        print(json_line({"key": args.key, "spider": args.spider, **found}))
    else:
        _print(args.key, args.spider, found, part is not None)
    return 0


def add_parser(sub: Any) -> None:
    parser = add_command(sub, NAME, __doc__, "show what is learned of a key's normal variation")
    parser.add_argument("key", metavar="KEY")
    add_store_option(parser)
    parser.add_argument("--spider", metavar="NAME", default="watch", help="the key's spider (default watch)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--forget-slot", metavar="N", type=int, default=None,
                        help="forget slot N (as explain lists them): what it holds is compared again")
    parser.set_defaults(func=run)
