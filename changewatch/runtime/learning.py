"""What is learned of a key's variation, as the crawl and the CLI handle it: the spider arguments
``-a calibrate=N`` and ``-a forget=KEY``, and rewriting a key's learned state in its stored
snapshot (``forget``, ``changewatch noise``) with the version check of a commit.

The learned state lives in the key's parts (its text's in the content part, core/learned.py; its
fields' and entity set's in theirs, core/learned_parts.py), so it is written atomically with the
observation that taught it, on every store, with no table of its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from ..core.comparisons import Comparison
from ..core.learned import Learned
from ..core.snapshot import Snapshot
from ..store import SnapshotStore, Store, StoreError, VersionConflict

__all__ = ["MAX_CALIBRATE", "LearningError", "forget_learned", "parse_calibrate", "parse_forget", "rewrite_learned",
           "rewrite_part"]

MAX_CALIBRATE = 100


class LearningError(ValueError):
    """A bad calibrate/forget argument, or a key whose learned state cannot be rewritten."""


def parse_calibrate(value: Any) -> int:
    """The number of calibration loads per watch of ``-a calibrate=N`` (0: none).

    >>> parse_calibrate("5"), parse_calibrate(None), parse_calibrate(" 0 ")
    (5, 0, 0)
    >>> parse_calibrate("abc")
    Traceback (most recent call last):
    ...
    changewatch.runtime.learning.LearningError: calibrate must be a whole number of extra loads from 0 to 100, not 'abc'
    """
    if value is None or value == "":
        return 0
    text = str(value).strip()
    if not text.isdigit() or int(text) > MAX_CALIBRATE:
        raise LearningError(f"calibrate must be a whole number of extra loads from 0 to {MAX_CALIBRATE}, not {value!r}")
    return int(text)


def parse_forget(value: Any) -> frozenset[str]:
    """The keys of ``-a forget=KEY``: one key (a key may hold commas), or the keys of a list a
    spider's code passes.

    >>> sorted(parse_forget("k1")), parse_forget(None)
    (['k1'], frozenset())
    """
    if value is None or value == "":
        return frozenset()
    if isinstance(value, str):
        return frozenset({value.strip()}) - {""}
    return frozenset(str(v) for v in value)


def rewrite_learned(store: Store, spider: str, key: str, change: Callable[[Learned | None], Learned | None],
                    comparisons: Iterable[Comparison], attempts: int = 20) -> Learned | None:
    """Rewrite what is learned of *key*'s text as ``change(learned)`` says, in its stored
    snapshot, if nothing committed the key meanwhile (else read it again). The learned state
    after it. Raises LearningError for a key without a stored text, StoreError."""
    part = rewrite_part(store, spider, key, "content", lambda p: p.with_learned(change(p.learned)), comparisons,
                        attempts, "nothing is learned for fields and entities here")
    return part.learned  # type: ignore[no-any-return]


def rewrite_part(store: Store, spider: str, key: str, name: str, change: Callable[[Any], Any],
                 comparisons: Iterable[Comparison], attempts: int = 20, missing: str = "") -> Any:
    """Rewrite the part *name* of *key*'s stored snapshot as ``change(part)`` says, with the
    version check of a commit (another writer first: read it again). The part after it.
    Raises LearningError for a key without that part, StoreError."""
    def rewrite(parts: dict[str, Any]) -> dict[str, Any]:
        part = parts.get(name)
        if part is None:
            what = {"content": "text", "fields": "fields", "entities": "entity set"}.get(name, name)
            raise LearningError(f"key {key!r} of spider {spider!r} has no stored {what}"
                                + (f" ({missing})" if missing else ""))
        return {**parts, name: change(part)}

    return _rewrite(store, spider, key, rewrite, comparisons, attempts)[name]


def forget_learned(store: Store, spider: str, key: str, comparisons: Iterable[Comparison],
                   attempts: int = 20) -> tuple[str, ...]:
    """Drop all that is learned of *key*'s variation (``-a forget=KEY``), in every part: its
    text's slots and volatile lines, its volatile fields, its entity set's churn and volatile
    entity fields; the baseline stays. The names of the parts that had learned anything.
    Raises LearningError for a key without a stored observation, StoreError."""
    forgotten: list[str] = []

    def rewrite(parts: dict[str, Any]) -> dict[str, Any]:
        forgotten.clear()
        out = dict(parts)
        for name, part in parts.items():
            if name == "content" and part.learned is not None:
                out[name] = part.with_learned(None)
            elif name in ("fields", "entities") and (part.volatile or getattr(part, "churn", ())):
                out[name] = dataclasses.replace(part, volatile=frozenset(),
                                                **({"churn": ()} if name == "entities" else {}))
            else:
                continue
            forgotten.append(name)
        return out

    _rewrite(store, spider, key, rewrite, comparisons, attempts, write=lambda: bool(forgotten))
    return tuple(forgotten)


def _rewrite(store: Store, spider: str, key: str, change: Callable[[dict[str, Any]], dict[str, Any]],
             comparisons: Iterable[Comparison], attempts: int,
             write: Callable[[], bool] = lambda: True) -> dict[str, Any]:
    """Rewrite *key*'s stored snapshot's parts as ``change(parts)`` says, with the version check
    of a commit (another writer first: read it again); not at all where *write* says no after
    the change. The parts after it."""
    if not isinstance(store, SnapshotStore):
        raise LearningError(f"the store {store!r} cannot rewrite snapshots")
    comparisons = tuple(comparisons)
    for _ in range(attempts):
        state = store.read(spider, key)
        if state is None or state.snapshot is None:
            raise LearningError(f"key {key!r} of spider {spider!r} has no stored observation")
        snapshot = Snapshot.decode(state.snapshot, comparisons)
        parts = change(dict(snapshot.parts))
        if not write():
            return parts
        data = Snapshot(parts, snapshot.foreign).encode(comparisons)
        try:
            store.replace_snapshot(spider, key, state.version, data)
        except VersionConflict:
            continue
        return parts
    raise StoreError(f"key {key!r} of spider {spider!r}: another writer committed it first {attempts} times")
