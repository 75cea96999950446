"""``changewatch noise CHANGE_ID``: teach a key that a reported change was noise. Of a content
change, each run of lines its diff showed is learned as a slot (between the lines shown unchanged
around it) and its lines as volatile, so other text there is quiet from now on while an edit
elsewhere is still a change; of a field change, its fields are volatile; of an entities change,
the fields its entities changed are volatile and where entities came and went their churn is
noise. ``changewatch explain KEY`` shows what is learned."""

from __future__ import annotations

import argparse
from typing import Any

from ..core.learned import learn_noise
from ..core.learned_parts import learn_entities, learn_fields
from ..store import ChangeLogStore, LoggedChange, StoreError
from .common import (
    CommandError,
    add_change_id,
    add_command,
    add_store_option,
    error,
    open_store,
    project_comparisons,
    valid_change_id,
)

__all__ = ["add_parser"]

NAME = "noise"


def _change(store: Any, change_id: int) -> LoggedChange | None:
    for change in store.changes(None, after_id=change_id - 1):
        return change if change.id == change_id else None
    return None


def _learn(store: Any, change: LoggedChange, comparisons: tuple[Any, ...]) -> str:
    """Learn *change* as noise; what is learned now, as the command says it."""
    from ..runtime.learning import LearningError, rewrite_learned, rewrite_part

    record = change.record
    if change.kind == "content":
        diff = record.get("diff")
        if not isinstance(diff, str):
            raise LearningError(f"change {change.id} has no diff to learn from")
        learned = rewrite_learned(store, change.spider, change.key, lambda was: learn_noise(was, diff), comparisons)
        slots = len(learned.slots) if learned else 0
        return (f"{slots} slot{'s' if slots != 1 else ''}, "
                f"{len(learned.lines) if learned else 0} volatile line signatures now")
    if change.kind == "field":
        part = rewrite_part(store, change.spider, change.key, "fields", lambda p: learn_fields(p, record), comparisons)
        return f"volatile fields now: {', '.join(sorted(part.volatile))}"
    if change.kind == "entities":
        part = rewrite_part(store, change.spider, change.key, "entities", lambda p: learn_entities(p, record),
                            comparisons)
        return (f"entities come and go as noise under: {', '.join(part.churn) or 'nowhere'}; "
                f"volatile entity fields: {', '.join(sorted(part.volatile)) or 'none'}")
    raise LearningError(f"change {change.id} is of kind {change.kind}: only a content, field or entities change "
                        "can be learned as noise")


def run(args: argparse.Namespace) -> int:
    """Exit 0: learned; 1: no such change, a change of another kind, or its key no longer has
    the part it changed; 2: a bad argument or a store that cannot be opened."""
    from ..runtime.learning import LearningError

    wanted = valid_change_id(args)
    comparisons = project_comparisons()
    store: Any = open_store(args.store, upgrade=False, protocol=ChangeLogStore, purpose="learn a change as noise")
    try:
        change = _change(store, wanted)
        if change is None:
            raise CommandError(f"no change {wanted} in the store", 1)
        said = _learn(store, change, comparisons)
    except LearningError as exc:
        error(NAME, str(exc))
        return 1
    except StoreError as exc:
        error(NAME, f"{exc}; nothing was learned")
        return 1
    finally:
        store.close()
    print(f"{change.spider} {change.key}: change {wanted} learned as noise ({said})")
    return 0


def add_parser(sub: Any) -> None:
    parser = add_command(sub, NAME, __doc__, "learn a reported change (content, field, entities) as noise")
    add_change_id(parser)
    add_store_option(parser, "write")
    parser.set_defaults(func=run)
