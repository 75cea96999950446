"""``changewatch migrate --from URI --to URI``: move a whole store to another backend (or file, or
schema): every key's state (snapshot, version, counters, times, error streak, HTTP validators) and
the change log (ids, delivery times; leases are dropped), so that a crawl pointed at the target
carries on where the source left off. The target must be empty; it is written in one transaction
(a failure leaves it empty), reading the source in one snapshot, a batch at a time."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..store import (
    TRANSFER_TABLES,
    ChangeLogStore,
    NoSuchStore,
    OlderSchema,
    StoreCounts,
    StoreError,
    StoreNotEmpty,
    TransferableStore,
    TransferBatch,
)
from ..store.changelog import not_empty
from ..store.options import redact
from .common import CommandError, add_command, add_upgrade_option, build_store, error, open_store

__all__ = ["add_parser"]

NAME = "migrate"

_BATCH = 1000
_SPIDER = TRANSFER_TABLES["observations"].index("spider")
_DELIVERED_AT = TRANSFER_TABLES["changes"].index("delivered_at")


@dataclass
class Tally:
    """What went through a migration, counted as it streamed."""

    keys: Counter[str] = field(default_factory=Counter)
    rows: Counter[str] = field(default_factory=Counter)
    undelivered: int = 0

    def counting(self, batches: Iterable[TransferBatch]) -> Iterator[TransferBatch]:
        for table, rows in batches:
            self.rows[table] += len(rows)
            if table == "observations":
                self.keys.update(row[_SPIDER] for row in rows)
            elif table == "changes":
                self.undelivered += sum(1 for row in rows if row[_DELIVERED_AT] is None)
            yield table, rows

    def counts(self) -> StoreCounts:
        return StoreCounts(dict(sorted(self.keys.items())), self.rows["validators"], self.rows["changes"],
                           self.undelivered, self.rows["health_history"] + self.rows["health_conditions"],
                           self.rows["evidence"])


def _open_target(uri: str) -> Any:
    store = build_store(uri)
    if not isinstance(store, TransferableStore):
        raise StoreError(f"store {redact(uri)} ({type(store).__module__}.{type(store).__qualname__}) cannot receive "
                         "a migration: its backend does not implement changewatch.store.TransferableStore")
    if isinstance(store, ChangeLogStore):
        # Look before anything is created or upgraded: a target that holds a store (of any schema)
        # is refused as it is, never upgraded first and refused after.
        try:
            store.open_existing(upgrade=False)
        except NoSuchStore:
            pass  # created below, as a crawl would
        except OlderSchema as exc:
            raise StoreNotEmpty(f"{exc}; a migration writes only into an empty store: name a new one") from None
        else:
            held = store.counts()
            store.close()
            if held.keys or held.validators or held.changes or held.evidence:
                raise not_empty(f"store {redact(uri)}", sum(held.keys.values()), held.validators, held.changes,
                                held.evidence)
    store.open()  # created when missing, as a crawl would
    return store


def run(args: argparse.Namespace) -> int:
    """Exit 0: migrated and verified; 1: the copy failed (the target was left empty) or does not
    verify; 2: a bad argument, a store that cannot be opened, or a target that is not empty."""
    if args.source == args.target:
        raise CommandError("--from and --to name the same store", 2)
    source = open_store(args.source, upgrade=args.upgrade, protocol=TransferableStore, purpose="be migrated",
                        role="the source")
    try:
        try:
            target = _open_target(args.target)
        except StoreError as exc:
            raise CommandError(f"the target: {exc}", 2) from None
        try:
            return _copy(source, target, args)
        finally:
            target.close()
    finally:
        source.close()


def _copy(source: TransferableStore, target: TransferableStore, args: argparse.Namespace) -> int:
    tally = Tally()
    try:
        target.import_rows(tally.counting(source.export_rows(_BATCH)))
    except StoreNotEmpty as exc:
        error(NAME, f"the target: {exc}")
        return 2
    except StoreError as exc:
        error(NAME, f"{exc}; nothing was written to the target, which is still empty")
        return 1
    copied = tally.counts()
    try:
        arrived, now_in_source = target.counts(), source.counts()
    except StoreError as exc:
        error(NAME, f"copied, but cannot count what arrived: {exc}")
        return 1
    print(_summary(args, copied))
    if arrived != copied:
        error(NAME, f"the target does not hold what was copied: {_describe(arrived)}, not {_describe(copied)}")
        return 1
    if now_in_source != copied:
        error(NAME, f"the source changed during the migration (a crawl was running?): it now holds "
                    f"{_describe(now_in_source)}; the target holds the store as it was when the copy began")
        return 1
    return 0


def _describe(counts: StoreCounts) -> str:
    return (f"{sum(counts.keys.values())} keys, {counts.validators} validators, {counts.changes} changes "
            f"({counts.undelivered} undelivered), {counts.evidence} kept versions")


def _summary(args: argparse.Namespace, counts: StoreCounts) -> str:
    per_spider = ", ".join(f"{spider}: {n}" for spider, n in counts.keys.items())
    return "\n".join([
        f"migrated {redact(args.source)} to {redact(args.target)}",
        f"  keys: {sum(counts.keys.values())}" + (f" ({per_spider})" if per_spider else ""),
        f"  validators: {counts.validators}",
        f"  changes: {counts.changes} ({counts.undelivered} undelivered; leases dropped)",
        f"  health: {counts.health} rows (history and open conditions)",
        f"  evidence: {counts.evidence} kept versions",
    ])


def add_parser(sub: Any) -> None:
    parser = add_command(sub, NAME, __doc__, "move a whole store to another backend (SQLite, PostgreSQL)")
    parser.add_argument("--from", dest="source", required=True, metavar="URI", help="the store to copy; never created")
    parser.add_argument("--to", dest="target", required=True, metavar="URI",
                        help="an empty store to copy it into (created when missing)")
    add_upgrade_option(parser, "a source")
    parser.set_defaults(func=run)
