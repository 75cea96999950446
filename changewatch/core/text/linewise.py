"""The stable text, told line by line: what two raw texts' stable texts have in common, and what a
raw text's stable text surely holds, without running the volatile patterns over all of it.

The patterns never match across a line end and treat a line end as the end of the text (tests
check it on every corpus page), so a raw line's stable line depends on that line alone: a line
two raw texts share is the same stable line in both. Two pages that differ in a clock and a
"5 minutes ago" differ in two raw lines, and only those two need the patterns to tell that the
stable texts are equal; a baseline whose text is long enough to be no block page needs none.
"""

from __future__ import annotations

from collections import Counter

from .options import VERBATIM
from .volatile import TRIGGER, lower_same_length, stable_lines

__all__ = ["keeps_a_line_whole", "same_stable_text", "stable_text_longer_than"]


def same_stable_text(old_raw: str, new_raw: str, *, sort_lines: bool = False) -> bool | None:
    """Whether the raw texts *old_raw* and *new_raw* (VisibleText.raw) have the same stable text,
    with the patterns run over the lines they do not share only; None when that cannot be told
    this way (the verbatim lines of ``include``, which the stable text moves to its end).

    >>> same_stable_text("Prices\\nUpdated 10:32\\nKettle 89.00", "Prices\\nUpdated 11:47\\nKettle 89.00")
    True
    >>> same_stable_text("Prices\\nUpdated 10:32\\nKettle 89.00", "Prices\\nUpdated 11:47\\nKettle 79.00")
    False
    >>> same_stable_text("b 10:32\\na", "a\\nb 11:47", sort_lines=True)
    True
    """
    if VERBATIM in old_raw or VERBATIM in new_raw:
        return None
    old, new = old_raw.split("\n"), new_raw.split("\n")
    if sort_lines:  # the same multiset of stable lines: the lines not shared decide
        old_count, new_count = Counter(old), Counter(new)
        gone = "\n".join((old_count - new_count).elements())
        came = "\n".join((new_count - old_count).elements())
        return sorted(stable_lines(gone)) == sorted(stable_lines(came))
    # The same sequence of stable lines: what lies between the shared first and last lines decides.
    start, shorter = 0, min(len(old), len(new))
    while start < shorter and old[start] == new[start]:
        start += 1
    end, shorter = 0, shorter - start
    while end < shorter and old[-1 - end] == new[-1 - end]:
        end += 1
    return stable_lines("\n".join(old[start:len(old) - end])) == stable_lines("\n".join(new[start:len(new) - end]))


def stable_text_longer_than(raw: str, chars: int) -> bool:
    """Whether the stable text of the raw text *raw* surely has more than *chars* characters:
    its lines that no volatile pattern can touch (no digit, ``=``, ``:`` or trigger word: the
    patterns never look at them) and the verbatim lines of ``include`` are kept whole. False
    when those alone do not tell (the stable text may still be longer).

    >>> stable_text_longer_than("Terms of service\\nUpdated 10:32", 10), stable_text_longer_than("Updated 10:32", 5)
    (True, False)
    """
    if len(raw) <= chars:
        return False
    kept = -1  # the lines' separators: one fewer than the lines
    for line in raw.split("\n"):
        if line.startswith(VERBATIM):
            kept += len(line)  # its mark removed, its separator kept
        elif not TRIGGER.search(lower_same_length(line)):
            kept += len(line) + 1
        else:
            continue
        if kept > chars:
            return True
    return False


def keeps_a_line_whole(raw: str) -> bool:
    """Whether the stable text of the raw text *raw* (without ``include``'s verbatim lines) keeps
    one of its lines whole, so is not empty: a line no volatile pattern can touch.

    >>> keeps_a_line_whole("Updated 10:32\\nKettle"), keeps_a_line_whole("Updated 10:32\\n5 minutes ago")
    (True, False)
    """
    return any(line and not TRIGGER.search(lower_same_length(line)) for line in raw.split("\n"))
