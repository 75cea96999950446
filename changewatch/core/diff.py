"""Capped line diff of normalised text."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

__all__ = ["DiffOptions", "line_diff"]


@dataclass(frozen=True, slots=True)
class DiffOptions:
    """How much of a content change's diff a record shows (CHANGEWATCH_DIFF_CONTEXT, _MAX_LINES)."""

    context: int = 1
    max_lines: int = 60
    max_chars: int = 4000


def _common_prefix(a: str, b: str) -> int:
    n, i = min(len(a), len(b)), 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _clip_starts(lines: list[str], max_line_chars: int) -> dict[int, int]:
    """Where to start showing each long changed line: a replaced line is shown from a little
    before its first difference with its counterpart, or a change past the cut would not show."""
    starts: dict[int, int] = {}
    if max_line_chars < 8:
        return starts
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and lines[j].startswith("-"):
            j += 1
        k = j
        while k < len(lines) and lines[k].startswith("+"):
            k += 1
        for a, b in zip(range(i, j), range(j, k), strict=False):
            first = _common_prefix(lines[a][1:], lines[b][1:])
            if max(len(lines[a]), len(lines[b])) > max_line_chars + 1 and first > max_line_chars // 2:
                starts[a] = starts[b] = first - max_line_chars // 4
        i = max(k, i + 1)
    return starts


def _clip(body: str, start: int, limit: int) -> str:
    if len(body) <= limit:
        return body
    if start <= 0:
        return body[: limit - 1] + "…"
    end = start + limit - 2
    return "…" + body[start:end] + ("…" if end < len(body) else "")


def line_diff(old: str, new: str, *, context: int = 1, max_lines: int = 60, max_chars: int = 4000,
              max_line_chars: int = 300) -> str:
    """Changed lines of *old* → *new* (``-``/``+``), with *context* unchanged lines around them
    (`` `` prefix) and ``@@`` between hunks; capped at *max_lines* lines and *max_chars* chars.

    >>> print(line_diff("a\\nb\\nc", "a\\nB\\nc"))
      a
    - b
    + B
      c
    """
    out: list[str] = []
    size = 0
    total = 0
    lines = [line for line in difflib.unified_diff(old.splitlines(), new.splitlines(), n=context, lineterm="")
             if not line.startswith(("---", "+++"))]
    starts = _clip_starts(lines, max_line_chars)
    for index, line in enumerate(lines):
        if line.startswith("@@"):
            text = "@@" if out else ""
        else:
            body = _clip(line[1:], starts.get(index, 0), max_line_chars)
            text = f"{line[0] if line[0] in '+-' else ' '} {body}"
        if not text:
            continue
        total += 1
        if len(out) < max_lines and size + len(text) + 1 <= max_chars:
            out.append(text)
            size += len(text) + 1
    if total > len(out):
        out.append(f"… ({total - len(out)} more diff lines)")
    return "\n".join(out)
