"""Capped line diff of normalised text."""

from __future__ import annotations

import difflib

__all__ = ["line_diff"]


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
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), n=context, lineterm=""):
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            text = "@@" if out else ""
        else:
            body = line[1:]
            if len(body) > max_line_chars:
                body = body[: max_line_chars - 1] + "…"
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
