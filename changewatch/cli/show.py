"""``changewatch show CHANGE_ID``: one change as a person reads it: a header (kind, key, page,
when), the fields that changed (old → new), the entities added, removed and changed, the diff with
the changed words marked, the error, move or summary, and where its evidence is (with the command
that writes it out). Changed words are coloured on a terminal, and marked [-old-] and {+new+}
without colour (never coloured when NO_COLOR is set)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from ..report.words import Segment, side_by_side
from ..store import ChangeLogStore, ChangeQuery, KeptVersion, LogEntry, MaintainedStore, StoreError
from ..store.options import redact, uri_argument
from .common import (
    CommandError,
    add_change_id,
    add_command,
    add_store_option,
    entry_json,
    error,
    json_line,
    open_store,
    valid_change_id,
)

__all__ = ["Marks", "add_parser", "render"]

NAME = "show"

_LIST_LIMIT = 50  # entities and fields shown of each list; the rest counted


class Marks:
    """How changed words and lines are marked: ANSI colours, or brackets a person reads without them."""

    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def _ansi(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour and text else text

    def removed(self, text: str) -> str:
        return self._ansi("1;31", text) if self.colour else f"[-{text}-]"

    def added(self, text: str) -> str:
        return self._ansi("1;32", text) if self.colour else f"{{+{text}+}}"

    def old_line(self, text: str) -> str:
        return self._ansi("31", text)

    def new_line(self, text: str) -> str:
        return self._ansi("32", text)

    def dim(self, text: str) -> str:
        return self._ansi("2", text)

    def bold(self, text: str) -> str:
        return self._ansi("1", text)


def use_colour(choice: str, stream: Any, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether to colour: never with NO_COLOR set (not empty); ``always``; ``auto`` on a terminal
    that is not ``TERM=dumb``.

    >>> use_colour("always", None, {"NO_COLOR": "1"}), use_colour("always", None, {}), use_colour("never", None, {})
    (False, True, False)
    """
    if environ.get("NO_COLOR"):
        return False
    if choice != "auto":
        return choice == "always"
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and environ.get("TERM") != "dumb"


def _segments(segments: tuple[Segment, ...] | None, mark: Any) -> str:
    return "".join(mark(s.text) if s.changed else s.text for s in segments or ())


def diff_lines(diff: str, marks: Marks) -> Iterator[str]:
    """A record's diff, each changed line with its changed words marked.

    >>> list(diff_lines("  Terms\\n- Price: 89.00 EUR\\n+ Price: 79.00 EUR", Marks(False)))
    ['  Terms', '- Price: [-89-].00 EUR', '+ Price: {+79+}.00 EUR']
    """
    for row in side_by_side(diff):
        if row.kind == "context":
            yield "  " + _segments(row.old, str)
        elif row.kind == "gap":
            yield marks.dim("@@")
        elif row.kind == "more":
            yield marks.dim(row.note)
        else:
            if row.old is not None:
                yield marks.old_line("- ") + _segments(row.old, marks.removed)
            if row.new is not None:
                yield marks.new_line("+ ") + _segments(row.new, marks.added)


def _value(value: Any) -> str:
    return "(none)" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _field_lines(changes: Mapping[str, Any], marks: Marks, indent: str = "  ") -> Iterator[str]:
    for name, change in list(changes.items())[:_LIST_LIMIT]:
        pair = change if isinstance(change, Mapping) else {"old": None, "new": change}
        old, new = _value(pair.get("old")), _value(pair.get("new"))
        if marks.colour:
            yield f"{indent}{name}: {marks.removed(old)} → {marks.added(new)}"
        else:
            yield f"{indent}{name}: {old} → {new}"
    if len(changes) > _LIST_LIMIT:
        yield f"{indent}… and {len(changes) - _LIST_LIMIT} more"


def _entity_lines(record: Mapping[str, Any], marks: Marks) -> Iterator[str]:
    for member, sign, paint in (("added", "+", marks.new_line), ("removed", "-", marks.old_line)):
        entities = record.get(member)
        if not isinstance(entities, list) or not entities:
            continue
        yield f"entities {member} ({len(entities)}):"
        for entity in entities[:_LIST_LIMIT]:
            entity = entity if isinstance(entity, Mapping) else {"key": entity}
            found = entity.get("fields")
            fields: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
            shown = "  ".join(f"{k}: {_value(v)}" for k, v in list(fields.items())[:12])
            yield paint(f"  {sign} {entity.get('key')}") + (f"  {shown}" if shown else "")
        if len(entities) > _LIST_LIMIT:
            yield f"  … and {len(entities) - _LIST_LIMIT} more"
    changed = record.get("changed")
    if isinstance(changed, list) and changed:
        yield f"entities changed ({len(changed)}):"
        for entity in changed[:_LIST_LIMIT]:
            entity = entity if isinstance(entity, Mapping) else {"key": entity, "changes": {}}
            yield f"  ~ {entity.get('key')}"
            changes = entity.get("changes")
            yield from _field_lines(changes if isinstance(changes, Mapping) else {}, marks, "      ")
        if len(changed) > _LIST_LIMIT:
            yield f"  … and {len(changed) - _LIST_LIMIT} more"


def _version(role: str, version: KeptVersion | None) -> str:
    if version is None:
        return f"  {role}: not kept"
    size = f", {version.size} bytes" if version.size is not None else ""
    return f"  {role}: {version.url} as served at {version.observed_at} (HTTP {version.status}{size})"


def render(entry: LogEntry, evidence: tuple[KeptVersion | None, KeptVersion | None] | None, store_uri: str,
           marks: Marks) -> Iterator[str]:
    """The lines ``show`` prints for *entry*; *evidence* is (before, after), None when the store keeps none."""
    record = entry.record
    yield marks.bold(f"change {entry.id}: {entry.kind} of {entry.spider} {entry.key}")
    yield f"  page:      {record.get('url', '')}"
    yield f"  observed:  {entry.observed_at}" + (
        f" (previous observation {record['previous_observed_at']})" if record.get("previous_observed_at") else "")
    yield f"  delivered: {entry.delivered_at or 'not yet'}"
    if isinstance(record.get("distance"), int):
        yield f"  distance:  {record['distance']} bits (simhash)"
    if record.get("error"):
        yield f"error: {record['error']}"
    if record.get("moved_to"):
        yield f"moved to: {record['moved_to']}"
    if isinstance(record.get("summary"), str):
        yield f"summary: {record['summary']}"
    if isinstance(record.get("changes"), Mapping) and record["changes"]:
        yield "fields:"
        yield from _field_lines(record["changes"], marks)
    yield from _entity_lines(record, marks)
    ignored = record.get("ignored_regions")
    if isinstance(ignored, Mapping) and ignored.get("count"):
        yield f"ignored: {ignored['count']} learned volatile region(s), e.g. {ignored.get('sample', '')!s}"
    if isinstance(record.get("diff"), str) and record["diff"]:
        yield "diff:"
        yield from diff_lines(record["diff"], marks)
    yield "evidence:"
    if evidence is not None:
        yield _version("before", evidence[0])
        yield _version("after", evidence[1])
    yield f"  changewatch evidence {entry.id} --store {uri_argument(store_uri)} -o evidence-{entry.id}"


def _find(store: Any, change_id: int) -> tuple[LogEntry | None, tuple[KeptVersion | None, KeptVersion | None] | None]:
    if isinstance(store, MaintainedStore):
        found = store.change_evidence(change_id)
        return (None, None) if found is None else (found.change, (found.before, found.after))
    for entry in store.query_changes(ChangeQuery(), after_id=change_id - 1, batch_size=1):
        return (entry, None) if entry.id == change_id else (None, None)
    return None, None


def _version_json(version: KeptVersion | None) -> dict[str, Any] | None:
    if version is None:
        return None
    return {"url": version.url, "status": version.status, "observed_at": version.observed_at,
            "size": version.size, "sha256": version.digest}


def run(args: argparse.Namespace) -> int:
    """Exit 0: shown; 1: no such change, or the store could not be read; 2: a bad argument or a
    store that cannot be opened."""
    wanted = valid_change_id(args)
    store: Any = open_store(args.store, upgrade=False, protocol=ChangeLogStore, purpose="show a change")
    try:
        entry, evidence = _find(store, wanted)
    except StoreError as exc:
        error(NAME, str(exc))
        return 1
    finally:
        store.close()
    if entry is None:
        raise CommandError(f"no change {wanted} in the store {redact(args.store)}", 1)
    if args.json:
        value = entry_json(entry)
        value["evidence"] = None if evidence is None else {"before": _version_json(evidence[0]),
                                                           "after": _version_json(evidence[1])}
        print(json_line(value))
        return 0
    marks = Marks(use_colour(args.color, sys.stdout))
    sys.stdout.write("\n".join(render(entry, evidence, args.store, marks)) + "\n")
    return 0


def add_parser(sub: Any) -> None:
    parser = add_command(sub, NAME, __doc__, "one change as a person reads it, changed words marked")
    add_change_id(parser)
    add_store_option(parser)
    parser.add_argument("--json", action="store_true", help="print the change as one JSON object (as changes lists "
                                                            "it, with its evidence)")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the changed words: on a terminal (auto, the default), always, or never; "
                             "never when NO_COLOR is set")
    parser.set_defaults(func=run)
