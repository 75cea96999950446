"""One message per destination and run: every change it has not been sent, with its field table,
entity changes or diff, capped in size, and saying what was cut and where the rest is."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..store import PendingNotification

__all__ = ["Message", "build_message"]

DIFF_LINES = 20  # lines of one change's diff
SECTION_CHARS = 1500  # characters of one change's section
ITEMS = 10  # fields, added, removed or changed entities listed per change


@dataclass(frozen=True, slots=True)
class Message:
    title: str
    body: str
    #: the changes the message names (every one of them is counted as sent when it is)
    change_ids: tuple[int, ...]


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 120 else text[:119] + "…"


def _cut(lines: list[str], limit: int, what: str) -> list[str]:
    if len(lines) <= limit:
        return lines
    return [*lines[:limit], f"  … {len(lines) - limit} more {what}"]


def _entity(item: Mapping[str, Any]) -> str:
    fields = item.get("fields") or item.get("changes") or {}
    shown = ", ".join(f"{k}: {_value(v.get('new') if isinstance(v, Mapping) else v)}"
                      for k, v in list(fields.items())[:4]) if isinstance(fields, Mapping) else ""
    return f"{item.get('key')}" + (f" ({shown})" if shown else "")


def _details(record: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    if record.get("error"):
        lines.append(f"  {_value(record['error'])}")
    if record.get("moved_to"):
        lines.append(f"  moved to {record['moved_to']}")
    changes = record.get("changes")
    if isinstance(changes, Mapping):
        lines += _cut([f"  {name}: {_value(c.get('old'))} → {_value(c.get('new'))}" if isinstance(c, Mapping)
                       else f"  {name}: {_value(c)}" for name, c in changes.items()], ITEMS, "fields")
    for member, sign in (("added", "+"), ("removed", "-"), ("changed", "~")):
        items = record.get(member)
        if isinstance(items, list) and items:
            lines += _cut([f"  {sign} {_entity(i)}" for i in items if isinstance(i, Mapping)], ITEMS, member)
    if isinstance(record.get("diff"), str):
        if record.get("distance") is not None:
            lines.append(f"  text changed ({record['distance']} simhash bits):")
        lines += _cut([f"    {line}" for line in record["diff"].splitlines()], DIFF_LINES, "diff lines")
    return lines


def _section(change: PendingNotification) -> str:
    record = change.record
    head = f"[{change.kind}] {record.get('url') or change.key}"
    if record.get("url") and record.get("url") != change.key:
        head += f" (key {change.key})"
    lines = [f"{head} · change {change.change_id}, {change.observed_at}"]
    if record.get("redelivery"):
        lines[0] += " (sent late)"
    if isinstance(record.get("summary"), str):
        lines.append(f"  Summary: {record['summary']}")
    lines += _details(record)
    text = "\n".join(lines)
    if len(text) > SECTION_CHARS:
        text = text[:SECTION_CHARS].rsplit("\n", 1)[0] + f"\n  … cut at {SECTION_CHARS} characters"
    return text


def build_message(changes: Sequence[PendingNotification], max_chars: int, store: str) -> Message:
    """The message carrying *changes* (oldest first), its body at most *max_chars* long: changes
    that do not fit are counted in a last line that says how to list them (``changewatch
    changes --store STORE``)."""
    spiders = sorted({c.spider for c in changes})
    kinds = sorted({c.kind for c in changes})
    title = (f"changewatch: {len(changes)} change{'s' if len(changes) != 1 else ''} ({', '.join(kinds)}) "
             f"from {', '.join(spiders)}")
    sections: list[str] = []
    used = 0
    for n, change in enumerate(changes):
        section = _section(change)
        left = len(changes) - n - 1
        # room for this section, and for the line that counts what follows it
        reserve = 160 if left else 0
        if used + len(section) + 2 + reserve > max_chars and sections:
            rest = changes[n:]
            sections.append(f"… and {len(rest)} more change{'s' if len(rest) != 1 else ''} not shown here "
                            f"(ids {rest[0].change_id} to {rest[-1].change_id}): changewatch changes --store {store} "
                            f"--since {rest[0].observed_at}")
            break
        sections.append(section)
        used += len(section) + 2
    body = "\n\n".join(sections)
    if len(body) > max_chars:  # one section alone is longer than a whole message may be
        body = body[:max_chars - 40].rsplit("\n", 1)[0] + "\n… (cut: the message's size limit)"
    return Message(title, body, tuple(c.change_id for c in changes))
