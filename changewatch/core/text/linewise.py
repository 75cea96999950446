"""The stable text, told line by line: what two raw texts' stable texts have in common, and what a
raw text's stable text surely holds, without running the volatile patterns over all of it.

The patterns never match across a line end and treat a line end as the end of the text (tests
check it on every corpus page), so a raw line's stable line depends on that line alone (and its
page's fetch time and learned clock: :mod:`.clock_times`): a line two raw texts share is taken
for the same stable line in both. Two pages that differ in a clock and a "5 minutes ago" differ
in two raw lines, and only those two need the patterns to tell that the stable texts are equal,
and are where the page's clock is learned (a line they share did not move); a baseline whose
text is long enough to be no block page needs none.
"""

from __future__ import annotations

from collections import Counter

from .clock_times import Clock, learn_offset
from .options import VERBATIM
from .stated_ages import Age, stated_age
from .volatile import TRIGGER, lower_same_length, stable_lines

__all__ = ["keeps_a_line_whole", "learned_clock", "same_stable_text", "stable_text_longer_than"]


def _unshared(old: list[str], new: list[str]) -> tuple[list[str], list[str]]:
    """The lines of *old* and *new* between the first and last lines they share."""
    start, shorter = 0, min(len(old), len(new))
    while start < shorter and old[start] == new[start]:
        start += 1
    end, shorter = 0, shorter - start
    while end < shorter and old[-1 - end] == new[-1 - end]:
        end += 1
    return old[start:len(old) - end], new[start:len(new) - end]


def learned_clock(old_raw: str, old_clock: Clock, new_raw: str, new_clock: Clock) -> Clock:
    """*new_clock* with the page's clock (:func:`~.clock_times.learn_offset`) learned from the
    lines two raw texts do not share (a line they share did not move), as their stable lines but
    for the clock (a relative time beside a clock changes too), on top of what *old_clock* knew."""
    kept = Clock(new_clock.fetched, old_clock.offset, old_clock.lines)
    if old_clock.fetched is None or new_clock.fetched is None or old_clock.fetched == new_clock.fetched:
        return kept
    old, new = _unshared(old_raw.split("\n"), new_raw.split("\n"))
    old = [line for line in old if TRIGGER.search(line)]
    new = [line for line in new if TRIGGER.search(line)]
    if not old or not new:
        return kept
    offset, lines = learn_offset(stable_lines(lower_same_length("\n".join(old))), old_clock.fetched,
                                 stable_lines(lower_same_length("\n".join(new))), new_clock.fetched,
                                 old_clock.offset, old_clock.lines, old_ages=_ages(old), new_ages=_ages(new))
    return Clock(new_clock.fetched, offset, lines)


def _ages(lines: list[str]) -> dict[str, Age]:
    """The ages *lines* state ("5 minutes ago"), by their stable lines (lower case), where the
    words that stated them are gone."""
    ages: dict[str, Age] = {}
    for line in lines:
        if (age := stated_age(folded := lower_same_length(line))) is not None:
            ages.update((stable, age) for stable in stable_lines(folded))
    return ages


def same_stable_text(old_raw: str, new_raw: str, *, sort_lines: bool = False, old_clock: Clock | None = None,
                     new_clock: Clock | None = None) -> bool | None:
    """Whether the raw texts *old_raw* and *new_raw* (VisibleText.raw), fetched as *old_clock*
    and *new_clock* say, have the same stable text, with the patterns run over the lines they do
    not share only; None when that cannot be told this way (the verbatim lines of ``include``,
    which the stable text moves to its end).

    >>> same_stable_text("Prices\\nUpdated 3 minutes ago\\nKettle 89.00", "Prices\\nUpdated 1 hour ago\\nKettle 89.00")
    True
    >>> same_stable_text("Prices\\nUpdated 3 minutes ago\\nKettle 89.00", "Prices\\nUpdated 1 hour ago\\nKettle 79.00")
    False
    >>> same_stable_text("b just now\\na", "a\\nb 5m ago", sort_lines=True)
    True
    >>> same_stable_text("Doors open at 19:30", "Doors open at 21:00")
    False
    """
    if VERBATIM in old_raw or VERBATIM in new_raw:
        return None
    old, new = old_raw.split("\n"), new_raw.split("\n")
    if sort_lines:  # the same multiset of stable lines: the lines not shared decide
        old_count, new_count = Counter(old), Counter(new)
        gone = "\n".join((old_count - new_count).elements())
        came = "\n".join((new_count - old_count).elements())
        return sorted(stable_lines(gone, old_clock)) == sorted(stable_lines(came, new_clock))
    # The same sequence of stable lines: what lies between the shared first and last lines decides.
    old, new = _unshared(old, new)
    return stable_lines("\n".join(old), old_clock) == stable_lines("\n".join(new), new_clock)


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
