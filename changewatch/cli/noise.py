"""``changewatch noise CHANGE_ID``: teach a key that a reported content change was noise. The
lines its diff showed are learned as volatile, so that the same variation is quiet from now on,
while other text in their place is still a change; ``changewatch explain KEY`` shows what is
learned."""

from __future__ import annotations

import argparse
from typing import Any

from ..core import load_comparisons
from ..core.learned import learn_noise
from ..store import ChangeLogStore, LoggedChange, StoreError
from .common import CommandError, add_change_id, add_command, add_store_option, error, open_store, valid_change_id

__all__ = ["add_parser"]

NAME = "noise"


def _change(store: Any, change_id: int) -> LoggedChange | None:
    for change in store.changes(None, after_id=change_id - 1):
        return change if change.id == change_id else None
    return None


def run(args: argparse.Namespace) -> int:
    """Exit 0: learned; 1: no such change, not a content change, or its key has no stored text;
    2: a bad argument or a store that cannot be opened."""
    from ..runtime.learning import LearningError, rewrite_learned

    wanted = valid_change_id(args)
    store: Any = open_store(args.store, upgrade=False, protocol=ChangeLogStore, purpose="learn a change as noise")
    try:
        change = _change(store, wanted)
        if change is None:
            raise CommandError(f"no change {wanted} in the store", 1)
        diff = change.record.get("diff")
        if change.kind != "content" or not isinstance(diff, str):
            raise CommandError(f"change {wanted} is of kind {change.kind}: only a content change (with its diff) "
                               "can be learned as noise", 1)
        learned = rewrite_learned(store, change.spider, change.key, lambda was: learn_noise(was, diff),
                                  load_comparisons())
    except LearningError as exc:
        error(NAME, str(exc))
        return 1
    except StoreError as exc:
        error(NAME, f"{exc}; nothing was learned")
        return 1
    finally:
        store.close()
    print(f"{change.spider} {change.key}: change {wanted} learned as noise "
          f"({len(learned.lines) if learned else 0} volatile line signatures now)")
    return 0


def add_parser(sub: Any) -> None:
    parser = add_command(sub, NAME, __doc__, "learn a reported content change as noise for its key")
    add_change_id(parser)
    add_store_option(parser, "write")
    parser.set_defaults(func=run)
