"""One message per destination and run: every change it has not been sent, with the values of the
conditions that sent it, its field table, entity changes or diff, capped in size, and saying what
was cut and where the rest is. A diff too long for the message is shown passage by passage, each
one's removed and added lines cut alike, so what the page says now is never the part cut away."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.site_watches import by_site_watch, site_changes
from ..store import PendingNotification

__all__ = ["Message", "build_message"]

DIFF_LINES = 20  # lines of one change's diff
SECTION_CHARS = 1500  # characters of one change's section
ITEMS = 10  # fields, added, removed or changed entities listed per change
MIN_LINE_CHARS = 40  # a capped diff shows fewer lines rather than lines shorter than this


@dataclass(frozen=True, slots=True)
class Message:
    title: str
    body: str
    #: the changes the message names (every one of them is counted as sent when it is)
    change_ids: tuple[int, ...]


def _value(value: Any) -> str:
    if value is None:  # a field without a value: not Python's "None"
        return "(none)"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 120 else text[:119] + "…"


def _cut(lines: list[str], limit: int, what: str) -> list[str]:
    if len(lines) <= limit:
        return lines
    return [*lines[:limit], f"  … {len(lines) - limit} more {what}"]


def _change(name: str, change: Any) -> str:
    if isinstance(change, Mapping):
        return f"{name}: {_value(change.get('old'))} → {_value(change.get('new'))}"
    return f"{name}: {_value(change)}"


def _entity(item: Mapping[str, Any]) -> str:
    changes, fields = item.get("changes"), item.get("fields")
    if isinstance(changes, Mapping):  # a changed member: each field old → new
        shown = [_change(str(k), v) for k, v in changes.items()]
    elif isinstance(fields, Mapping):  # an added or removed one: the fields it has
        shown = [f"{k}: {_value(v)}" for k, v in fields.items() if v is not None]
    else:
        shown = []
    more = f", … {len(shown) - 4} more" if len(shown) > 4 else ""
    name = item.get("key") or item.get("url")  # a site watch's page: its url
    return f"{name}" + (f" ({', '.join(shown[:4])}{more})" if shown else "")


def _conditions(record: Mapping[str, Any], destination: str | None) -> list[str]:
    """The values each condition that sent the change (to *destination*, when named) tested."""
    lines = []
    for found in record.get("conditions") or ():
        if not isinstance(found, Mapping) or (destination is not None
                                               and destination not in (found.get("destinations") or ())):
            continue
        when = found.get("when")
        said = (f"{when['crossing']} became true" if isinstance(when, Mapping) and "crossing" in when
                else f"{when} holds")
        values = found.get("values")
        tested = ", ".join(_change(str(k), v) for k, v in values.items()) if isinstance(values, Mapping) else ""
        lines.append(f"  sent as {said}: {tested}" if tested else f"  sent as {said}")
    return lines


@dataclass
class _Passage:
    """Removed and added lines between two unchanged ones (or a hunk's ends)."""

    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)


def _passages(lines: list[str]) -> tuple[list[_Passage], list[str]]:
    """A diff's passages, and its closing line: the lines the record's diff left out, which its
    ``… (N more diff lines)`` markers count wherever they stand, counted once."""
    passages: list[_Passage] = []
    left_out = 0
    current = _Passage()
    for line in lines:
        if line.startswith(("- ", "+ ")) or line in ("-", "+"):
            (current.removed if line[0] == "-" else current.added).append(line)
        else:
            if current.removed or current.added:
                passages.append(current)
                current = _Passage()
            if line.startswith("… (") and line.endswith(" more diff lines)"):
                left_out += int(line[3:].split(" ", 1)[0])
    if current.removed or current.added:
        passages.append(current)
    return passages, [f"… ({left_out} more diff lines)"] if left_out else []


def _fair(sizes: list[int], budget: int) -> list[int]:
    """Lines shown of each side (in order), at most *budget* in all: every side in turn gets an
    equal share of what is left, and what a short side does not use goes to the others."""
    shown = [0] * len(sizes)
    open_sides = [i for i, size in enumerate(sizes) if size]
    while budget > 0 and open_sides:
        share = max(1, budget // len(open_sides))
        for i in list(open_sides):
            give = min(share, sizes[i] - shown[i], budget)
            shown[i] += give
            budget -= give
            if shown[i] == sizes[i]:
                open_sides.remove(i)
            if not budget:
                break
    return shown


def _clip(line: str, width: int) -> str:
    return line if len(line) <= width else line[:width - 1] + "…"


def _capped_diff(lines: list[str], chars: int) -> list[str]:
    """A diff longer than :data:`DIFF_LINES` lines or *chars* characters, passage by passage: the
    passages that fit, each one's removed lines and then its added lines, both cut alike."""
    passages, trailer = _passages(lines)
    # fewer lines where the characters are few (a short message): 3 for the counting lines
    budget = min(DIFF_LINES, max(2, chars // (MIN_LINE_CHARS + 5) - 3))
    # as many passages as can show a line of each of their sides
    room, shown_passages = budget, 0
    for passage in passages:
        need = bool(passage.removed) + bool(passage.added)
        if need > room:
            break
        room -= need
        shown_passages += 1
    kept = passages[:shown_passages]
    sizes = [n for p in kept for n in (len(p.removed), len(p.added))]
    counts = _fair(sizes, budget)
    out: list[str] = []
    for n, passage in enumerate(kept):
        if n:
            out.append("@@")
        for side, count, what in ((passage.removed, counts[2 * n], "removed"),
                                  (passage.added, counts[2 * n + 1], "added")):
            out += side[:count]
            if count < len(side):
                out.append(f"… {len(side) - count} more {what} line{'s' if len(side) - count != 1 else ''}")
    if len(passages) > shown_passages:
        rest = passages[shown_passages:]
        out.append(f"… {len(rest)} more changed passage{'s' if len(rest) != 1 else ''} "
                   f"({sum(len(p.removed) + len(p.added) for p in rest)} lines)")
    out += trailer
    # the lines of the page share what the counting lines leave of the characters
    edits = [line for line in out if line[:1] in "-+"]
    left = chars - sum(len(line) + 5 for line in out if line[:1] not in "-+")
    width = max(16, left // max(1, len(edits)) - 5)
    return [f"    {_clip(line, width) if line[:1] in '-+' else line}" for line in out]


def _diff(record: Mapping[str, Any], chars: int) -> list[str]:
    lines = record["diff"].splitlines()
    head = []
    if record.get("distance") is not None:
        head.append(f"  text changed ({record['distance']} simhash bits):")
    if len(lines) <= DIFF_LINES and sum(len(line) + 5 for line in lines) <= chars:
        return head + [f"    {line}" for line in lines]
    said = f"  text changed ({record['distance']} simhash bits)" if head else "  text changed"
    said += f"; {len(lines)} diff lines, cut passage by passage (removed, then added):"
    return [said, *_capped_diff(lines, chars - len(said) - 1)]


def _details(record: Mapping[str, Any], chars: int = SECTION_CHARS) -> list[str]:
    lines: list[str] = []
    if record.get("error"):
        lines.append(f"  {_value(record['error'])}")
    if record.get("moved_to"):
        lines.append(f"  moved to {record['moved_to']}")
    changes = record.get("changes")
    if isinstance(changes, Mapping):
        lines += _cut([f"  {_change(name, c)}" for name, c in changes.items()], ITEMS, "fields")
    for member, sign in (("added", "+"), ("removed", "-"), ("changed", "~")):
        items = record.get(member)
        if isinstance(items, list) and items:
            lines += _cut([f"  {sign} {_entity(i)}" for i in items if isinstance(i, Mapping)], ITEMS, member)
    if isinstance(record.get("diff"), str):
        lines += _diff(record, chars - sum(len(line) + 1 for line in lines))
    return lines


def _section(change: PendingNotification, destination: str | None = None, limit: int = SECTION_CHARS) -> str:
    record = change.record
    head = f"[{change.kind}] {record.get('url') or change.key}"
    if record.get("url") and record.get("url") != change.key:
        head += f" (key {change.key})"
    lines = [f"{head} · change {change.change_id}, {change.observed_at}"]
    if record.get("redelivery"):
        lines[0] += " (sent late)"
    if isinstance(record.get("summary"), str):
        lines.append(f"  Summary: {record['summary']}")
    lines += _conditions(record, destination)
    # the diff shares what is left of the section's characters (with room for the cut's line)
    lines += _details(record, limit - sum(len(line) + 1 for line in lines) - 40)
    text = "\n".join(lines)
    if len(text) > limit:
        text = text[:limit].rsplit("\n", 1)[0] + f"\n  … cut at {limit} characters"
    return text


def _ordered(changes: Sequence[PendingNotification]) -> tuple[list[PendingNotification], dict[int, str]]:
    """*changes* with each site watch's gathered under it (its page set's first), and the line
    that heads each site watch's, by the index of its first change."""
    ordered: list[PendingNotification] = []
    heads: dict[int, str] = {}
    for site, group in by_site_watch(changes, lambda c: c.record):
        if site is not None:
            heads[len(ordered)] = f"== {site_changes(site, [c.record for c in group]).line()} =="
        ordered += group
    return ordered, heads


def build_message(changes: Sequence[PendingNotification], max_chars: int, store: str,
                  destination: str | None = None) -> Message:
    """The message carrying *changes* (oldest first; a site watch's gathered under a line that
    says what changed on the site), its body at most *max_chars* long: changes that do not fit
    are counted in a last line that says how to list them (``changewatch changes --store
    STORE``). *destination* (as shown) picks the conditions whose values are shown: those that
    sent a change there (None: every one)."""
    spiders = sorted({c.spider for c in changes})
    kinds = sorted({c.kind for c in changes})
    ordered, heads = _ordered(changes)
    what = f"{len(changes)} change{'s' if len(changes) != 1 else ''} ({', '.join(kinds)})"
    if len(heads) == 1 and 0 in heads and all(c.record.get("site_watch") == ordered[0].record.get("site_watch")
                                              for c in ordered):  # one site's changes: the site says what
        what = f"{heads[0].strip('= ')}, {what}"
    title = f"changewatch: {what} from {', '.join(spiders)}"
    sections: list[str] = []
    used = 0
    for n, change in enumerate(ordered):
        # a short message's section is shorter, so that its diff is shared out, not chopped
        section = _section(change, destination, min(SECTION_CHARS, max_chars - 200))
        if n in heads:
            section = f"{heads[n]}\n{section}"
        left = len(ordered) - n - 1
        # room for this section, and for the line that counts what follows it
        reserve = 160 if left else 0
        if used + len(section) + 2 + reserve > max_chars and sections:
            rest = ordered[n:]
            ids = sorted(c.change_id for c in rest)
            sections.append(f"… and {len(rest)} more change{'s' if len(rest) != 1 else ''} not shown here "
                            f"(ids {ids[0]} to {ids[-1]}): changewatch changes --store {store} "
                            f"--since {min(c.observed_at for c in rest)}")
            break
        sections.append(section)
        used += len(section) + 2
    body = "\n\n".join(sections)
    if len(body) > max_chars:  # one section alone is longer than a whole message may be
        body = body[:max_chars - 40].rsplit("\n", 1)[0] + "\n… (cut: the message's size limit)"
    return Message(title, body, tuple(c.change_id for c in changes))
