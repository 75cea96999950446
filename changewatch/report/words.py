"""A record's ``diff`` as side-by-side rows, the changed words of each changed line marked (pure;
no HTML here). The diff is the capped line diff of :func:`changewatch.core.diff.line_diff`:
``  `` context, ``- `` old and ``+ `` new lines, ``@@`` between hunks, and a ``… (N more diff
lines)`` marker wherever a capped diff left lines out (after a passage shown in part, at the end).
Within a block of removed lines followed by added ones, the n-th removed line is paired with the
n-th added one and the two are compared word by word, punctuation and case as written."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

__all__ = ["Row", "Segment", "side_by_side", "word_diff"]

#: words, runs of whitespace, and each other character on its own: "EUR" → "EUR!" marks the "!"
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


@dataclass(frozen=True, slots=True)
class Segment:
    text: str
    changed: bool = False


@dataclass(frozen=True, slots=True)
class Row:
    """One row: ``context`` (the same on both sides), ``change`` (old and/or new side; a side is
    None when the line has no counterpart), ``gap`` (lines left out between hunks) or ``more``
    (the diff was cut: *note* says how much)."""

    kind: str
    old: tuple[Segment, ...] | None = None
    new: tuple[Segment, ...] | None = None
    note: str = ""


def word_diff(old: str, new: str) -> tuple[tuple[Segment, ...], tuple[Segment, ...]]:
    """*old* and *new* as segments, those that differ marked.

    >>> old, new = word_diff("Price: 89.00 EUR", "Price: 79.00 EUR!")
    >>> [s.text for s in new if s.changed], [s.text for s in old if s.changed]
    (['79', '!'], ['89'])
    """
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    left: list[Segment] = []
    right: list[Segment] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        same = tag == "equal"
        if i2 > i1:
            left.append(Segment("".join(a[i1:i2]), not same))
        if j2 > j1:
            right.append(Segment("".join(b[j1:j2]), not same))
    return _merged(left), _merged(right)


def _merged(segments: list[Segment]) -> tuple[Segment, ...]:
    out: list[Segment] = []
    for segment in segments:
        if out and out[-1].changed == segment.changed:
            out[-1] = Segment(out[-1].text + segment.text, segment.changed)
        else:
            out.append(segment)
    return tuple(out)


def side_by_side(diff: str) -> list[Row]:
    """The rows of a record's *diff*.

    >>> [r.kind for r in side_by_side("  a\\n- b 1\\n+ b 2\\n+ c\\n@@\\n  z\\n… (3 more diff lines)")]
    ['context', 'change', 'change', 'gap', 'context', 'more']
    """
    rows: list[Row] = []
    removed: list[str] = []
    added: list[str] = []

    def flush() -> None:
        for n in range(max(len(removed), len(added))):
            old = removed[n] if n < len(removed) else None
            new = added[n] if n < len(added) else None
            if old is not None and new is not None:
                rows.append(Row("change", *word_diff(old, new)))
            else:
                rows.append(Row("change", (Segment(old, True),) if old is not None else None,
                                (Segment(new, True),) if new is not None else None))
        removed.clear()
        added.clear()

    for line in diff.split("\n"):
        if line.startswith("- "):
            if added:  # a removal after additions starts a new block
                flush()
            removed.append(line[2:])
        elif line.startswith("+ "):
            added.append(line[2:])
        else:
            flush()
            if line == "@@":
                rows.append(Row("gap"))
            elif line.startswith("… (") and line.endswith("more diff lines)"):
                rows.append(Row("more", note=line))
            elif line.strip() or line.startswith("  "):
                text = line[2:] if line.startswith("  ") else line
                rows.append(Row("context", (Segment(text),), (Segment(text),)))
    flush()
    return rows
