"""The age a line states, to the minute, of what it dates: "Updated 5 minutes ago · 09:55" says
its time is the fetch time less five minutes (give or take the minute the words round off), so
the time on that line tracks the fetch time less that age (:mod:`.clock_times`).

Only ages to the minute count (seconds, minutes, "just now", "moments ago"): "2 hours ago" dates
its time to within an hour, too loose to tell a clock from an edit. A line that states two
different ages states none.
"""

from __future__ import annotations

import re

__all__ = ["Age", "age_shifts", "stated_age"]

# In lower case (the text is folded), English as the volatile patterns write it
_AGE = re.compile(
    r"(?<!\w)(?:(?P<n>\d+|an?|one)\s*(?P<unit>sec(?:ond)?s?|s|min(?:ute)?s?|m)\s+ago|just now|moments? ago)(?!\w)")

#: an age: the least and most whole minutes it may mean
Age = tuple[int, int]


def stated_age(line: str) -> Age | None:
    """The age *line* (lower case) states, as the least and most minutes it may mean (None: none,
    or two different ones).

    >>> stated_age("updated 5 minutes ago · 09:55"), stated_age("posted 30 seconds ago"), stated_age("2 hours ago")
    ((5, 6), (0, 1), None)
    """
    if "ago" not in line and "now" not in line:
        return None
    ages = set()
    for match in _AGE.finditer(line):
        unit, n = match.group("unit"), match.group("n")
        if unit is None or unit.startswith("s"):
            ages.add((0, 1))
        else:
            minutes = int(n) if n.isdigit() else 1
            ages.add((minutes, minutes + 1))
    return ages.pop() if len(ages) == 1 else None


def age_shifts(age: Age | None) -> tuple[int, ...]:
    """The minutes before the fetch time that a time on a line of *age* may show: the fetch time
    itself (a clock beside the age of something else), and each minute the age may mean."""
    return (0,) if age is None else (0, *range(age[0], age[1] + 1))
