"""``changewatch status``: every watched key, one line each: its state (ok, failing with its
error's class and streak, gone, moved, noisy), when it was last observed, when its page last
changed (with that change's id, for ``changewatch show``), and when it is due next; then a
summary line. Read from the store a batch at a time, so a store of millions of keys takes no more
memory than a small one."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from ..store import ChangeLogStore, StoreError
from ..store.options import redact
from ..store.semantics import format_time
from ..store.status import KeyStatus, StatusQuery, StatusStore
from .common import (
    CommandError,
    add_command,
    add_site_watch_option,
    add_store_option,
    add_upgrade_option,
    error,
    json_line,
    open_store,
    silence_stdout,
)

__all__ = ["Summary", "add_parser", "state_of"]

NAME = "status"

_BATCH = 1000  # keys read, printed and forgotten at a time
STATES = ("ok", "failing", "gone", "moved", "noisy")


def _error_class(error: str | None) -> str:
    """The class an error record's text starts with (``timeout: …`` → ``timeout``)."""
    head, sep, _ = (error or "").partition(":")
    return head.strip() if sep and head.strip() and " " not in head.strip() else "error"


def state_of(status: KeyStatus) -> tuple[str, str]:
    """The key's state now and what says more of it.

    - ``gone``: the page answered 404 or 410 on CHANGEWATCH_GONE_AFTER runs in a row;
    - ``failing``: its latest observations failed (the class of the error, how many runs);
    - ``noisy``: every line of its page varies from load to load: its text is no more compared;
    - ``moved``: a permanent redirect moved it; it is compared where it is now (its ``url``);
    - ``ok``: else.

    >>> state_of(KeyStatus("watch", "k", "u", last_error="timeout: took 30 s", error_streak=3))
    ('failing', 'timeout x3: timeout: took 30 s')
    >>> state_of(KeyStatus("watch", "k", "u", last_change_kind="error", last_change_error="noisy: 40 of 41 lines vary"))
    ('noisy', 'noisy: 40 of 41 lines vary')
    >>> state_of(KeyStatus("watch", "k", "https://new.example/", moved=True))
    ('moved', 'now at https://new.example/')
    """
    if status.error_streak > 0:
        kind = _error_class(status.last_error)
        if kind in ("gone", "noisy"):
            return kind, status.last_error or ""
        return "failing", f"{kind} x{status.error_streak}: {status.last_error or ''}"
    if status.last_change_kind == "error" and (status.last_change_error or "").startswith("noisy:"):
        # A noisy page is observed (not failing), and its noisy: record is the key's last change.
        return "noisy", status.last_change_error or ""
    if status.moved:
        return "moved", f"now at {status.url}"
    return "ok", ""


def _due(status: KeyStatus, now: str) -> str:
    """When the key is fetched next: with the adaptive schedule off, by every run."""
    if status.due_at is None:
        return "every run"
    return "now" if status.due_at <= now else status.due_at


@dataclass
class Summary:
    """What was listed, counted as it streamed (memory: a counter per spider, state and error class)."""

    keys: int = 0
    spiders: Counter[str] = field(default_factory=Counter)
    states: Counter[str] = field(default_factory=Counter)
    classes: Counter[str] = field(default_factory=Counter)
    due_now: int = 0

    def count(self, status: KeyStatus, state: str, due: str) -> None:
        self.keys += 1
        self.spiders[status.spider] += 1
        self.states[state] += 1
        if state == "failing":
            self.classes[_error_class(status.last_error)] += 1
        if due in ("now", "every run"):
            self.due_now += 1

    def as_json(self) -> dict[str, Any]:
        return {"keys": self.keys, "spiders": dict(sorted(self.spiders.items())),
                "states": {state: self.states[state] for state in STATES},
                "failing_by_class": dict(sorted(self.classes.items())), "due_now": self.due_now}

    def line(self) -> str:
        """``3 watched keys (watch: 3): 1 ok, 1 failing (timeout: 1), 1 gone, 0 moved, 0 noisy; 2 due now``"""
        spiders = ", ".join(f"{name}: {n}" for name, n in sorted(self.spiders.items()))
        parts = []
        for state in STATES:
            part = f"{self.states[state]} {state}"
            if state == "failing" and self.classes:
                part += " (" + ", ".join(f"{c}: {n}" for c, n in self.classes.most_common()) + ")"
            parts.append(part)
        return (f"{self.keys} watched key{'s' if self.keys != 1 else ''}" + (f" ({spiders})" if spiders else "")
                + ": " + ", ".join(parts) + f"; {self.due_now} due now or by every run")


def _text(status: KeyStatus, state: str, detail: str, due: str) -> str:
    changed = status.last_changed or "never"
    if status.last_changed and status.last_change_id is not None:
        changed += f" (last change #{status.last_change_id})"
    line = (f"{state:<8} {status.spider} {status.key}  observed {status.last_seen or 'never'}  changed {changed}  "
            f"due {due}")
    return f"{line}  {detail}" if detail else line


def _json(status: KeyStatus, state: str, detail: str, due: str) -> str:
    return json_line({"spider": status.spider, "key": status.key, "url": status.url, "state": state,
                      "detail": detail or None, "last_observed": status.last_seen, "last_good": status.last_good,
                      "last_changed": status.last_changed, "last_change_id": status.last_change_id,
                      "error_streak": status.error_streak, "last_error": status.last_error,
                      "error_class": _error_class(status.last_error) if status.error_streak else None,
                      "due_at": status.due_at, "due": due, "first_seen": status.first_seen})


def _lines(statuses: Iterator[KeyStatus], now: str, as_json: bool, summary: Summary) -> Iterator[str]:
    shape = _json if as_json else _text
    for status in statuses:
        state, detail = state_of(status)
        due = _due(status, now)
        summary.count(status, state, due)
        yield shape(status, state, detail, due)


def run(args: argparse.Namespace) -> int:
    """Exit 0: listed (none too); 1: the store could not be read or the output written; 2: a
    store that cannot be opened."""
    store: Any = open_store(args.store, upgrade=args.upgrade, protocol=ChangeLogStore, purpose="list its keys")
    try:
        if not isinstance(store, StatusStore):
            raise CommandError(f"store {redact(args.store)} cannot list its keys: its backend does not implement "
                               "changewatch.store.status.StatusStore", 2)
        return _print(store, args)
    finally:
        store.close()


def _print(store: Any, args: argparse.Namespace) -> int:
    summary = Summary()
    try:
        now = format_time(store.now())
        query = StatusQuery(spiders=tuple(dict.fromkeys(args.spider)), failing=args.failing,
                            site_watches=tuple(dict.fromkeys(args.site_watch)))
        lines = _lines(store.statuses(query, batch_size=_BATCH), now, args.json, summary)
        while batch := list(islice(lines, _BATCH)):
            sys.stdout.write("\n".join(batch) + "\n")
        sys.stdout.write((json_line({"summary": summary.as_json()}) if args.json else summary.line()) + "\n")
        sys.stdout.flush()
    except StoreError as exc:
        error(NAME, str(exc))
        return 1
    except OSError as exc:  # a closed pipe (| head), a full disk
        silence_stdout()
        error(NAME, f"cannot write the output ({exc.strerror or exc})")
        return 1
    return 0


def add_parser(sub: Any) -> None:
    parser = add_command(sub, NAME, __doc__, "every watched key: state, last observed, last change, next due")
    add_store_option(parser)
    parser.add_argument("--spider", action="append", default=[], metavar="NAME",
                        help="only this spider's keys (repeatable)")
    add_site_watch_option(parser, "keys")
    parser.add_argument("--failing", action="store_true",
                        help="only keys whose latest observations failed (gone and noisy errors too)")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object a key, then one with the summary")
    add_upgrade_option(parser)
    parser.set_defaults(func=run)
