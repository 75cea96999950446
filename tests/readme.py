"""README's text as tests read it: a section by its heading, and the code blocks in it, so that a
test of what README says breaks when README changes."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

__all__ = ["code_blocks", "section"]


def section(heading: str, path: Path = ROOT / "README.md") -> str:
    """The text under the heading *heading* (any level), up to the next heading of its level or above."""
    text = path.read_text(encoding="utf-8")
    found = re.search(rf"^(#+) {re.escape(heading)}\n", text, flags=re.M)
    assert found, f"{path.name} has no heading {heading!r}"
    rest = text[found.end():]
    end = re.search(rf"^#{{1,{len(found[1])}}} ", rest, flags=re.M)
    return rest[:end.start()] if end else rest


def code_blocks(text: str, language: str) -> list[str]:
    """The fenced code blocks of *language* in *text*, in order."""
    return re.findall(rf"^```{re.escape(language)}\n(.*?)^```", text, flags=re.S | re.M)
