"""Times of day that vary like a clock: the ones a page's stable text leaves out, judged against
the time the page was fetched.

A date or time in a page's text is content: "Doors open at 19:30", "Deadline: 12 March 2027",
"Saturday: 10:00 - 16:00" are what people watch pages for. A time is left out only when it tracks
the fetch time, which an unchanged page shows by printing the time it was made:

- a **full timestamp in a stated zone** ("2026-12-05T14:32:10+01:00", "2026-12-05 14:32 UTC",
  "5 Dec 2026, 14:32 GMT", "14:32 GMT") within :data:`ZONED_MINUTES` of the fetch time in that
  zone (with a date written before it, the date must be the fetch date there, give or take a day;
  "today at", "yesterday at" before it go with it);
- a **bare time of day** ("14:32", "2:32 pm", "14h32", "2026-12-05 14:32") in a line learned to
  be the page's clock, within :data:`BARE_MINUTES` of the fetch time in the page's *learned*
  offset (:class:`Clock`), or that offset an hour either way (daylight saving time). A bare time
  is never assumed to be in some zone where it would match: the offset and the clock's lines are
  learned per key by :func:`learn_offset`, from a line whose time moved between two observations
  by what the clock moved, in one offset of whole quarter hours from UTC (the line alike
  otherwise). Only such a line (its words the same, whatever its numbers) is a clock's: a
  schedule's or a video's times elsewhere on the page that happen to show the fetch time are
  content.

A line that states its age to the minute ("Updated 5 minutes ago · 09:55") dates its time to the
fetch time less that age (:mod:`.stated_ages`): its time tracks the fetch time, or the fetch time
less the age, in the same zone or learned offset, with the same tolerance.

A time of day without minutes ("6 pm") is never a clock's. Everything here runs over a line at a
time, so a line's stable form depends on that line and the fetch time alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from hashlib import blake2b

from .stated_ages import Age, age_shifts

__all__ = ["BARE_MINUTES", "CLOCK_LINES", "ZONED_MINUTES", "Clock", "clock_fragments", "learn_offset",
           "line_shape", "parse_fetch_time"]

#: how far a stated-zone timestamp may be from the fetch time and still be the page's clock
ZONED_MINUTES = 15
#: how far a bare time of day may be from the fetch time in the learned offset
BARE_MINUTES = 3
#: the most lines learned to be a page's clock (the latest kept)
CLOCK_LINES = 4


@dataclass(frozen=True, slots=True)
class Clock:
    """When a page was fetched (aware), the offset from UTC its clock was learned to show
    (minutes east; None: not learned, bare times are content), and the shapes of the lines that
    show it (:func:`line_shape`)."""

    fetched: datetime | None
    offset: int | None = None
    lines: tuple[str, ...] = ()


_DIGITS = re.compile(r"\d+")
_TRIM = " ,.;:|-·•"


def line_shape(line: str) -> str:
    """What a line (lower case, volatile fragments removed) is whatever its numbers: a short digest."""
    shape = " ".join(_DIGITS.sub("#", line).split()).strip(_TRIM)
    return blake2b(shape.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


def parse_fetch_time(value: str | None) -> datetime | None:
    """An observation's ``observed_at`` as an aware datetime (None: absent or unreadable)."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed


_ZONE_OFFSETS = {
    "utc": 0, "gmt": 0, "z": 0, "bst": 60, "cet": 60, "cest": 120, "eet": 120, "eest": 180, "msk": 180,
    "est": -300, "edt": -240, "cst": -360, "cdt": -300, "mst": -420, "mdt": -360, "pst": -480, "pdt": -420,
    "akst": -540, "akdt": -480, "hst": -600, "jst": 540, "kst": 540, "hkt": 480, "sgt": 480, "awst": 480,
    "acst": 570, "acdt": 630, "aest": 600, "aedt": 660, "nzst": 720, "nzdt": 780,
}
_ZONE_NAMES = "|".join(sorted((z for z in _ZONE_OFFSETS if z != "z"), key=len, reverse=True))
# "UTC", "GMT+1", "UTC-05:30", "CEST": a zone written after a time
_ZONE = rf"(?:(?P<zone>{_ZONE_NAMES})(?:\s?(?P<zsign>[+-])(?P<zh>\d{{1,2}})(?::?(?P<zm>\d{{2}}))?)?(?!\w))"
_AMPM = r"(?:\s*(?P<ampm>am|pm|a\.m\.|p\.m\.)(?!\w))"
# A time of day with minutes (seconds optional), "14h32" too; in lower case (the text is folded)
_TIME = re.compile(
    r"(?<![\w:.,/-])(?P<h>\d{1,2})(?::(?P<m>[0-5]\d)(?::[0-5]\d(?:\.\d+)?)?|h(?P<hm>[0-5]\d))(?![\d:]|h\d)"
    rf"{_AMPM}?(?:\s*{_ZONE})?")
# An ISO 8601 date and time: its own offset ("z", "+01:00") or a zone after it
_ISO = re.compile(
    r"(?<![\w:.-])(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})[t ](?P<h>\d{2}):(?P<m>\d{2})(?::\d{2}(?:\.\d+)?)?"
    rf"(?:(?P<z>z)|(?P<osign>[+-])(?P<oh>\d{{2}}):?(?P<om>\d{{2}})|\s*{_ZONE})?(?![\w:])")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)(?![a-z])\.?")
# A date written right before a time: "5 Dec 2026, ", "Sat, December 5, 2026 at ", "Dec 17, " (a
# year left out: the fetch date's year, or the one either side), "05/12/2026 ", "today at " (the
# fetch date, give or take a day, as any date written there)
_DATE_BEFORE = re.compile(
    r"(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+)?"
    rf"(?:(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>{_MONTH})(?:,?\s+(?P<y1>\d{{4}}))?"
    rf"|(?P<m2>{_MONTH})\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y2>\d{{4}}))?"
    r"|(?P<a3>\d{1,2})[/.](?P<b3>\d{1,2})[/.](?P<y3>\d{4})"
    r"|(?P<rel>today|tonight|yesterday))"
    r"(?:,?\s+(?:at\s+)?|\s*[-\u2013|·]\s*|\s+)$")
_QUARTERS = range(-12 * 60, 14 * 60 + 1, 15)
_DAY = 24 * 60


def _zone_offset(match: re.Match[str]) -> int | None:
    """Minutes east of UTC of the zone written after a time (None: none written)."""
    zone = match.group("zone")
    if zone is None:
        return None
    offset = _ZONE_OFFSETS[zone]
    if match.group("zsign"):
        shift = int(match.group("zh")) * 60 + int(match.group("zm") or 0)
        offset += shift if match.group("zsign") == "+" else -shift
    return offset


def _times_of_day(match: re.Match[str]) -> tuple[int, ...]:
    """The minutes after midnight a time of day may mean: both halves of the day for "2:32"
    without am or pm (a twelve-hour clock), one for "14:32" or "2:32 pm"."""
    hour, minute = int(match.group("h")), int(match.group("m") or match.group("hm"))
    ampm = match.group("ampm")
    if hour > 23 or (ampm and not 1 <= hour <= 12):
        return ()
    if ampm:
        hour = hour % 12 + (12 if ampm.startswith("p") else 0)
        return (hour * 60 + minute,)
    if hour <= 12:
        return (hour % 12 * 60 + minute, hour % 12 * 60 + minute + 720)
    return (hour * 60 + minute,)


def _apart(a: int, b: int) -> int:
    """Minutes between two times of day, across midnight."""
    d = (a - b) % _DAY
    return min(d, _DAY - d)


def _minute_of_day(moment: datetime) -> int:
    return moment.hour * 60 + moment.minute + round(moment.second / 60)


def _date_before(line: str, end: int) -> tuple[int, re.Match[str] | None]:
    """Where a date written right before a time (at *end* of *line*) starts, and the date."""
    match = _DATE_BEFORE.search(line, max(0, end - 40), end)
    return (match.start(), match) if match else (end, None)


def _dates_of(match: re.Match[str], near: date) -> list[date]:
    """The dates a written date may mean (day and month either way round when numeric; without
    its year, in the year of *near* or the one either side)."""
    found: list[tuple[int, int, int]] = []
    for day, month, year in (("d1", "m1", "y1"), ("d2", "m2", "y2")):
        if match.group(day):
            written = match.group(year)
            years = (int(written),) if written else (near.year - 1, near.year, near.year + 1)
            found += [(one, _MONTHS.index(match.group(month)[:3]) + 1, int(match.group(day))) for one in years]
    if not found:
        a, b, y = int(match.group("a3")), int(match.group("b3")), int(match.group("y3"))
        found += [(y, b, a), (y, a, b)]
    dates = []
    for y, m, d in found:
        try:
            dates.append(date(y, m, d))
        except ValueError:
            continue
    return dates


def _tracks(times: tuple[int, ...], local: datetime, minutes: int, written: re.Match[str] | None) -> bool:
    """Whether a time of day (any of *times*), with the date *written* before it if any, is within
    *minutes* of *local* (the fetch time in the time's zone)."""
    now = _minute_of_day(local)
    if not any(_apart(t, now) <= minutes for t in times):
        return False
    return written is None or bool(written.group("rel")) \
        or any(abs((d - local.date()).days) <= 1 for d in _dates_of(written, local.date()))


def _offsets(clock: Clock) -> tuple[int, ...]:
    assert clock.offset is not None
    return (clock.offset, clock.offset - 60, clock.offset + 60)


def _iso_tracks(match: re.Match[str], clock: Clock, clock_line: bool, shifts: tuple[int, ...]) -> bool:
    assert clock.fetched is not None
    if match.group("z"):
        offsets: tuple[int, ...] = (0,)
        limit = ZONED_MINUTES
    elif match.group("osign"):
        shift = int(match.group("oh")) * 60 + int(match.group("om"))
        offsets, limit = (shift if match.group("osign") == "+" else -shift,), ZONED_MINUTES
    elif (zone := _zone_offset(match)) is not None:
        offsets, limit = (zone,), ZONED_MINUTES
    elif clock_line:
        offsets, limit = _offsets(clock), BARE_MINUTES
    else:
        return False  # a timestamp in no zone, outside the clock's lines: content
    try:
        written = datetime(int(match.group("y")), int(match.group("mo")), int(match.group("d")),
                           int(match.group("h")), int(match.group("m")))
    except ValueError:
        return False
    fetched = clock.fetched.astimezone(UTC).replace(tzinfo=None)
    return any(abs(written - timedelta(minutes=o - s) - fetched) <= timedelta(minutes=limit)
               for o in offsets for s in shifts)


def clock_fragments(line: str, clock: Clock, age: Age | None = None) -> Iterator[tuple[int, int]]:
    """The spans of *line* (lower case, one line) that are a clock tracking *clock*'s fetch time:
    a timestamp (with the date written before it) or a time of day, as the module says; the fetch
    time less the *age* the line states (:func:`~.stated_ages.stated_age`, taken before its words
    were removed) too."""
    if clock.fetched is None or not any(c in line for c in ":h"):
        return
    shifts = age_shifts(age)
    fetched = clock.fetched.astimezone(UTC)
    clock_line = clock.offset is not None and line_shape(line) in clock.lines
    stamps = []  # a time of an ISO timestamp is judged with its date, as the timestamp
    for match in _ISO.finditer(line):
        stamps.append(match.span())
        if _iso_tracks(match, clock, clock_line, shifts):
            yield match.span()
    stamp = 0
    for match in _TIME.finditer(line):
        while stamp < len(stamps) and stamps[stamp][1] <= match.start():
            stamp += 1
        if (stamp < len(stamps) and stamps[stamp][0] <= match.start()) or not (times := _times_of_day(match)):
            continue
        zone = _zone_offset(match)
        if zone is None and not clock_line:
            continue
        start, written = _date_before(line, match.start())
        offsets = (zone,) if zone is not None else _offsets(clock)
        limit = ZONED_MINUTES if zone is not None else BARE_MINUTES
        if any(_tracks(times, fetched + timedelta(minutes=o - s), limit, written) for o in offsets for s in shifts):
            yield start, match.end()


# Learning the offset: a line's shape is the line with its bare times of day taken out
def _bare_times(line: str) -> tuple[str, list[tuple[int, ...]]]:
    parts, times, at = [], [], 0
    for match in _TIME.finditer(line):
        if _zone_offset(match) is not None or not (found := _times_of_day(match)):
            continue
        parts.append(line[at:match.start()])
        times.append(found)
        at = match.end()
    parts.append(line[at:])
    return "\x00".join(parts), times


def _candidates(times: tuple[int, ...], fetched: datetime, age: Age | None = None) -> set[int]:
    """The quarter-hour offsets from UTC in which a time of day (any of *times*) is the fetch time
    (less the *age* its line states)."""
    now = _minute_of_day(fetched.astimezone(UTC))
    return {k for k in _QUARTERS for t in times for s in age_shifts(age) if _apart(t, now - s + k) <= BARE_MINUTES}


def _shapes(lines: Iterable[str]) -> dict[str, tuple[str, list[tuple[int, ...]]]]:
    shapes: dict[str, tuple[str, list[tuple[int, ...]]]] = {}
    for line in lines:
        if ":" in line or "h" in line:
            shape, times = _bare_times(line)
            if times:
                shapes.setdefault(shape, (line, times))
    return shapes


def learn_offset(old_lines: list[str], old_fetched: datetime | None, new_lines: list[str],
                 new_fetched: datetime | None, offset: int | None, lines: tuple[str, ...] = (), *,
                 old_ages: Mapping[str, Age] | None = None,
                 new_ages: Mapping[str, Age] | None = None) -> tuple[int | None, tuple[str, ...]]:
    """The page's clock (its offset and the shapes of its lines) once a line of *old_lines* and
    one of *new_lines* (lower case, volatile fragments removed: the lines two observations do not
    share) that are alike but for their bare times of day show, each at its own fetch time, a
    time that moved in one offset of whole quarter hours from UTC: what a clock does, and an edit
    only when it moves a time by exactly what the clock moved, in a round offset, in the same
    two observations. *offset* and *lines* (what was learned so far) otherwise; a line that
    moved by the learned offset, or an hour off it (daylight saving time), is one more of the
    clock's lines. *old_ages* and *new_ages* are the ages the lines state ("5 minutes ago",
    removed from them: :mod:`.stated_ages`), by line: such a line's time may track the fetch
    time less its age.

    >>> from datetime import datetime, UTC
    >>> at = datetime(2026, 12, 5, 14, 32, tzinfo=UTC)
    >>> learn_offset(["updated · 15:32"], at, ["updated · 16:47"], at + timedelta(minutes=75), None)[0]
    60
    >>> learn_offset(["doors open at 19:30"], at, ["doors open at 21:00"], at, None)[0] is None
    True
    """
    if old_fetched is None or new_fetched is None or old_fetched == new_fetched:
        return offset, lines
    old_shapes = _shapes(old_lines)
    if not old_shapes:
        return offset, lines
    old_ages, new_ages = old_ages or {}, new_ages or {}
    for shape, (line, new_times) in _shapes(new_lines).items():
        old_line, old_times = old_shapes.get(shape, ("", []))
        if len(old_times) != len(new_times):
            continue
        for before, after in zip(old_times, new_times, strict=True):
            if before == after:
                continue
            was = _candidates(before, old_fetched, old_ages.get(old_line))
            now = _candidates(after, new_fetched, new_ages.get(line))
            common = was & now
            if offset is not None and offset not in common:
                # the learned offset, an hour off on either side: a change of daylight saving time
                shifted = {offset - 60, offset, offset + 60}
                if was & shifted and now & shifted:
                    common = now & shifted
            if not common:
                continue
            learned = min(common, key=lambda k: (abs(k - offset) if offset is not None else 0, abs(k)))
            known = lines if learned == offset else ()
            return learned, _bounded(known, line_shape(line))
    return offset, lines


def _bounded(lines: tuple[str, ...], shape: str) -> tuple[str, ...]:
    if shape in lines:
        return lines
    return (*lines, shape)[-CLOCK_LINES:]
