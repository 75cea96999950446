"""Real changes to a page of the test web (:mod:`tests.worlds.busy`): a word, a number, a paragraph
added or removed, a heading, the date or time of a notice. Each operator returns the changed page
and what a diff of it must show: the words removed (on its ``-`` lines) and added (on its ``+``
lines), as the page writes them. The furniture :func:`~tests.worlds.busy.load` adds sits after the
page's second, third and last paragraphs: edits touch the paragraphs between, so the furniture
stays where it was."""

from __future__ import annotations

import html as htmlmod
import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from .busy import WorldPage, content_paragraphs, first_heading
from .vocab import sentence

__all__ = ["OPERATORS", "Edit", "edit"]

_TEXT_SEGMENT = re.compile(r"(?<=>)[^<]+|^[^<]+")
_WORD = re.compile(r"(?<![\w&#;/=.@-])([^\W\d_]{5,})(?![\w@-])")
_NUMBER = re.compile(r"(?<![\w.,:/-])(\d{1,6})(?![\w.,:/-]?\d)")
_NEW_WORDS = ("zebrafish", "marmalade", "quicksilver", "lighthouse", "snowdrift", "cardamom", "hovercraft")
_NEW_HEADINGS = ("Harbour ferry returns after a quiet winter", "Council backs the riverside footbridge",
                 "Night trains are coming back to the valley")
#: a notice's token and what an edit makes it ("Doors open at 19:30." → "21:00")
_NOTICE_EDITS = {"19:30": "21:00", "12 March 2027": "19 March 2027", "Tuesday": "Thursday",
                 "10:00 - 16:00": "10:00 - 14:00", "1 February 2027": "1 March 2027"}


@dataclass(frozen=True)
class Edit:
    """A real change: the changed page, what it is, and the text a diff of it must show."""

    page: WorldPage
    what: str
    removed: tuple[str, ...]
    added: tuple[str, ...]


def _editable(page: WorldPage) -> list[tuple[int, int, str]]:
    """The paragraphs an edit may touch: not the first three (the notice, trending box and ad
    follow them) nor the last (the related list follows it)."""
    paragraphs = list(content_paragraphs(page.html))
    return paragraphs[3:-1]


def _in_text(inner: str, pattern: re.Pattern[str]) -> list[tuple[int, str]]:
    """Matches of *pattern* in *inner*'s text (not in its tags or entities): offset, text."""
    found = []
    for segment in _TEXT_SEGMENT.finditer(inner):
        if "&" in segment.group(0):
            continue
        found.extend((segment.start() + m.start(1), m.group(1)) for m in pattern.finditer(segment.group(0)))
    return found


def _replace_in_paragraph(page: WorldPage, rng: random.Random, pattern: re.Pattern[str],
                          new: Callable[[str], str], what: str) -> Edit | None:
    candidates = []
    for start, end, _ in _editable(page):
        for at, old in _in_text(page.html[start:end], pattern):
            if len(old) < 40:
                candidates.append((start + at, old))
    if not candidates:
        return None
    at, old = rng.choice(candidates)
    value = new(old)
    html = page.html[:at] + value + page.html[at + len(old):]
    return Edit(page.with_html(html), what, (old,), (value,))


def change_word(page: WorldPage, rng: random.Random) -> Edit | None:
    word = rng.choice(_NEW_WORDS)
    return _replace_in_paragraph(page, rng, _WORD, lambda old: word.capitalize() if old[0].isupper() else word,
                                 "word")


def change_number(page: WorldPage, rng: random.Random) -> Edit | None:
    step = rng.randint(2, 9)
    return _replace_in_paragraph(page, rng, _NUMBER, lambda old: str(int(old) + step), "number")


def add_paragraph(page: WorldPage, rng: random.Random) -> Edit | None:
    paragraphs = _editable(page)
    if not paragraphs:
        return None
    _, end, _ = rng.choice(paragraphs)
    text = sentence(rng)
    html = page.html[:end] + f"<p>{htmlmod.escape(text)}</p>" + page.html[end:]
    return Edit(page.with_html(html), "paragraph added", (), (text,))


def remove_paragraph(page: WorldPage, rng: random.Random) -> Edit | None:
    paragraphs = _editable(page)
    if not paragraphs:
        return None
    start, end, text = rng.choice(paragraphs)
    return Edit(page.with_html(page.html[:start] + page.html[end:]), "paragraph removed", (text,), ())


def change_heading(page: WorldPage, rng: random.Random) -> Edit | None:
    heading = first_heading(page.html)
    if heading is None:
        return None
    start, end, text = heading
    element = page.html[start:end]
    open_end, close_start = element.index(">") + 1, element.rindex("<")
    title = rng.choice([h for h in _NEW_HEADINGS if h != text])
    html = page.html[:start + open_end] + htmlmod.escape(title) + page.html[start + close_start:]
    return Edit(page.with_html(html), "heading", (text,), (title,))


def change_notice(page: WorldPage, rng: random.Random) -> Edit | None:
    for old, new in _NOTICE_EDITS.items():
        if old in page.notice:
            changed = WorldPage(page.name, page.html, page.kind, page.seed, page.notice.replace(old, new),
                                page.offset, page.deploy_every)
            return Edit(changed, "notice date or time", (old,), (new,))
    return None


OPERATORS: dict[str, Callable[[WorldPage, random.Random], Edit | None]] = {
    "word": change_word, "number": change_number, "paragraph added": add_paragraph,
    "paragraph removed": remove_paragraph, "heading": change_heading, "notice": change_notice,
}


def edit(page: WorldPage, what: str, seed: int = 0) -> Edit | None:
    """The edit *what* (a key of :data:`OPERATORS`) of *page*, chosen by *seed*; None when the page
    has nothing it applies to."""
    return OPERATORS[what](page, random.Random(f"{page.seed}:{seed}:{what}"))
