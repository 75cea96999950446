"""The visible text of a page as lines: :class:`VisibleText` and how the walkers' lines become
one (whitespace collapsed, one block-level element per line)."""

from __future__ import annotations

import re

from . import charset
from .clock_times import Clock
from .options import VERBATIM
from .volatile import stable_lines

__all__ = ["BLOCKS", "BLOCK_MARK", "DROPPED", "VISIBLE_IN_TEXT", "VisibleText", "collapse_marked", "counted", "finish",
           "split_collapsed", "stable_text"]

# Elements whose content is never visible text.
DROPPED = frozenset(
    {"script", "style", "noscript", "svg", "template", "head", "iframe", "object", "canvas", "math"}
)
# Elements that start a new line: the diff works on these blocks, not on one giant line.
BLOCKS = frozenset(
    """address article aside blockquote body br caption dd details dialog div dl dt fieldset
    figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr html li main nav ol option p pre
    section summary table tbody td tfoot th thead title tr ul""".split()
)
# Characters that are never visible (C0 controls, the block mark, U+FFFE/U+FFFF) but may be in a
# walker's text: removed from it.
VISIBLE_IN_TEXT = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f\ue000\ufffe\uffff]")
# Of those, the ones str.split() takes for whitespace (which a collapse would turn into a space
# where removing them joins their neighbours)
_SPLIT_INVISIBLE = "\x0b\x0c\x1c\x1d\x1e\x1f"


def stable_text(raw: str, sort_lines: bool = False, clock: Clock | None = None) -> str:
    """The stable text of the raw text *raw*: volatile fragments removed (and the times that
    track *clock*'s fetch time), include's verbatim lines moved to the end as written, and
    sorted when *sort_lines*."""
    if VERBATIM in raw:  # include: URL lines, compared as written (core/text/options.py)
        verbatim = [line for line in raw.split("\n") if line.startswith(VERBATIM)]
        text = "\n".join(line for line in raw.split("\n") if not line.startswith(VERBATIM))
        lines = stable_lines(text, clock) if text else []
        lines += [line.removeprefix(VERBATIM) for line in verbatim]
    else:
        lines = stable_lines(raw, clock)
    if sort_lines:
        lines.sort()
    return "\n".join(lines)


class VisibleText:
    """Text of a page as lines: ``raw`` is collapsed (case and punctuation as written); ``stable``
    has volatile fragments removed too (and is sorted when *sort_lines*). ``stable`` is a function
    of ``raw``, *sort_lines* and *clock* (when the page was fetched: :mod:`.clock_times`) alone,
    computed on first use: a page whose raw text is the one already stored needs no more than
    ``raw``."""

    __slots__ = ("_stable", "clock", "raw", "sort_lines", "undecodable")

    def __init__(self, raw: str, stable: str | None = None, *, sort_lines: bool = False, undecodable: int = 0,
                 clock: Clock | None = None):
        self.raw = raw
        self.sort_lines = sort_lines
        self.clock = clock
        self._stable = stable
        #: Bytes of the page that did not decode in its charset (see core/text/charset.py); counted
        #: only when its visible text showed some.
        self.undecodable = undecodable

    @property
    def stable(self) -> str:
        if self._stable is None:
            self._stable = stable_text(self.raw, self.sort_lines, self.clock)
        return self._stable

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, VisibleText):
            return NotImplemented
        return (self.raw, self.stable) == (other.raw, other.stable)

    def __hash__(self) -> int:
        return hash(self.raw)

    def __repr__(self) -> str:
        return f"VisibleText(raw={self.raw!r}, stable={self.stable!r})"


def counted(visible: VisibleText) -> VisibleText:
    visible.undecodable = charset.count_undecodable(visible.raw)
    return visible


# Where the lxml walker's blocks start and end: a private-use character, which its markup is cleaned of.
BLOCK_MARK = "\ue000"


def finish(raw_lines: list[str], sort_lines: bool) -> VisibleText:
    return finish_marked(BLOCK_MARK.join(raw_lines).replace("\x00", ""), BLOCK_MARK, sort_lines)


def finish_marked(text: str, mark: str, sort_lines: bool) -> VisibleText:
    """Collapse the whole text at once (the mark is not whitespace), then split it at the marks.
    str.split() splits at Unicode's whitespace, in C."""
    return split_collapsed(" ".join(text.split()), mark, sort_lines)


def split_collapsed(collapsed: str, mark: str, sort_lines: bool) -> VisibleText:
    raw = [c for c in (line.strip() for line in collapsed.split(mark)) if c]
    return VisibleText("\n".join(raw), sort_lines=sort_lines)


def collapse_marked(text: str) -> str:
    """A marked text collapsed. The invisible characters are looked for in the collapsed text (a
    tenth of the whole, mostly whitespace, on a real page) and removed from the whole text only
    when there are any: a collapse keeps every one of them but those str.split() takes for
    whitespace, which are looked for apart."""
    collapsed = " ".join(text.split())
    if VISIBLE_IN_TEXT.search(collapsed) or any(c in text for c in _SPLIT_INVISIBLE):
        collapsed = " ".join(VISIBLE_IN_TEXT.sub("", text).split())
    return collapsed
