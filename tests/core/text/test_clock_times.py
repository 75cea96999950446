"""Times that vary like a clock: a stated-zone timestamp near the fetch time, a bare time of day
that tracks the fetch time in the page's learned offset; every other date and time is content."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from changewatch.core.text.clock_times import CLOCK_LINES, Clock, learn_offset, line_shape, parse_fetch_time
from changewatch.core.text.linewise import learned_clock, same_stable_text
from changewatch.core.text.stated_ages import stated_age
from changewatch.core.text.volatile import stable_lines

AT = datetime(2026, 12, 5, 14, 32, 20, tzinfo=UTC)


def stable(line: str, clock: Clock | None) -> str:
    return "\n".join(stable_lines(line, clock))


@pytest.mark.parametrize("stamp", [
    "2026-12-05T14:32:10Z", "2026-12-05T15:30:00+01:00", "2026-12-05 14:31 UTC", "2026-12-05T09:32-0500",
    "14:32 GMT", "2:40 PM UTC", "15:32 CET", "16:32 UTC+2", "Sat, 05 Dec 2026 14:32:00 GMT",
    "5 Dec 2026, 14:25 GMT", "December 5, 2026 at 9:32 am EST", "05/12/2026 14:32 UTC", "today at 14:32 GMT",
    "Today, 14:30 UTC",
])
def test_a_stamp_in_its_own_zone_near_the_fetch_time_is_a_clock(stamp: str) -> None:
    assert stable(f"Updated {stamp}", Clock(AT)) == "Updated"


@pytest.mark.parametrize("stamp", [
    "2026-12-05T13:32:10Z", "2025-12-05T14:32:10Z", "2026-12-05 14:32", "14:32", "2:32 pm", "14h32",
    "15:32 GMT", "Sat, 05 Dec 2025 14:32:00 GMT", "5 Dec 2025, 14:32 GMT", "14:32 EST",
])
def test_a_time_in_no_zone_or_far_from_the_fetch_time_is_content(stamp: str) -> None:
    assert stable(f"Updated {stamp}", Clock(AT)) == f"Updated {stamp}"


@pytest.mark.parametrize("line", [
    "by Jim Salter | Dec 17, 3:32pm CET", "by Andrii Degeler - Dec 16, 2:32pm CET", "Sat 17 Dec, 14:32 GMT",
    "Published 3 December at 14:30 UTC", "Posted Nov. 5, 14:32 UTC",
])
def test_a_zoned_time_dated_another_day_without_its_year_is_content(line: str) -> None:
    # a listing's bylines: their times match the fetch time once a day, their dates never
    assert stable(line, Clock(AT)) == line


@pytest.mark.parametrize("line", ["Updated Dec 5, 14:32 GMT", "Updated 5 December 14:30 UTC",
                                  "Updated Sat, Dec. 5 at 3:32 pm CET"])
def test_a_zoned_time_dated_the_fetch_date_without_its_year_is_a_clock(line: str) -> None:
    assert stable(line, Clock(AT)) == "Updated"


def test_a_month_is_a_whole_word() -> None:
    # "Market 5" is no date (Mar 5): the time after it is judged as undated
    assert stable("Market 5, 14:32 GMT", Clock(AT)) == "Market 5"


def test_today_is_a_word_unless_it_dates_a_clock() -> None:
    assert stable("Updated today at 14:32 GMT", Clock(AT)) == "Updated"
    assert stable("Updated today at 11:00 GMT", Clock(AT)) == "Updated today at 11:00 GMT"
    assert stable("Closed today, open tomorrow at 9:00", Clock(AT)) == "Closed today, open tomorrow at 9:00"


def test_no_fetch_time_no_clock() -> None:
    assert stable("Updated 2026-12-05T14:32:10Z", None) == "Updated 2026-12-05T14:32:10Z"
    assert stable("Updated 14:32", Clock(None, 0)) == "Updated 14:32"


@pytest.mark.parametrize(("line", "offset", "expected"), [
    ("Updated · 15:32", 60, "Updated"),
    ("Updated · 3:33 pm", 60, "Updated"),
    ("Updated · 3:33", 60, "Updated"),  # a twelve-hour clock without am or pm
    ("Updated · 15h31", 60, "Updated"),
    ("Updated · 16:32", 60, "Updated"),  # an hour off the learned offset: daylight saving time
    ("Updated · 17:32", 60, "Updated · 17:32"),
    ("Updated · 15:40", 60, "Updated · 15:40"),
    ("Updated · 15:32", None, "Updated · 15:32"),
    ("As of 2026-12-05 15:32", 60, "As of"),
    ("As of 5 Dec 2026 15:32", 60, "As of"),
    ("As of 5 Dec 2025 15:32", 60, "As of 5 Dec 2025 15:32"),
    ("Open 10:00 - 16:00", 60, "Open 10:00 - 16:00"),
])
def test_a_bare_time_is_a_clock_only_in_the_learned_offset(line: str, offset: int | None, expected: str) -> None:
    assert stable(line, Clock(AT, offset, (line_shape(line.lower()),))) == expected


@pytest.mark.parametrize("line", ["Updated · 15:32", "As of 2026-12-05 15:32"])
def test_a_bare_time_is_a_clock_only_in_a_line_learned_to_be_the_clock(line: str) -> None:
    clock = Clock(AT, 60, (line_shape(line.lower().replace("15:32", "9:59")),))
    assert stable(line, clock) == line.split(" ·")[0].split(" 2026")[0]
    # a video's length, a schedule's time that happens to show the fetch time: content
    assert stable(f"Video {line}", clock) == f"Video {line}"


def test_the_offset_is_learned_from_a_time_that_moved_with_the_clock() -> None:
    later = AT + timedelta(minutes=75)
    learned = learn_offset(["updated · 15:32"], AT, ["updated · 16:47"], later, None)
    assert learned == (60, (line_shape("updated · 1:1"),))
    assert learn_offset(["updated · 9:02 am"], AT, ["updated · 10:17 am"], later, None)[0] == -330
    # a page in an offset of a quarter hour
    assert learn_offset(["updated · 20:17"], AT, ["updated · 21:32"], later, None)[0] == 345


def test_the_clock_s_lines_are_bounded() -> None:
    lines: tuple[str, ...] = ()
    later = AT + timedelta(minutes=75)
    for n in range(CLOCK_LINES + 2):
        name = "abcdefgh"[n]
        offset, lines = learn_offset([f"clock {name} · 15:32"], AT, [f"clock {name} · 16:47"], later, 60, lines)
        assert offset == 60
    assert len(lines) == CLOCK_LINES and lines[-1] == line_shape(f"clock {'abcdefgh'[CLOCK_LINES + 1]} · 1:1")


@pytest.mark.parametrize(("old", "new", "minutes"), [
    ("doors open at 19:30", "doors open at 21:00", 0),  # an edit, fetched at once
    ("doors open at 19:30", "doors open at 21:00", 60),  # moved, but not by what the clock did
    ("doors open at 19:30", "doors open at 19:30", 75),  # did not move
    ("updated · 15:32", "changed · 16:47", 75),  # another line
    ("updated · 15:32", "updated · 16:55", 75),  # not the fetch time in one offset
])
def test_no_offset_is_learned_from_times_that_do_not_track_the_clock(old: str, new: str, minutes: int) -> None:
    assert learn_offset([old], AT, [new], AT + timedelta(minutes=minutes), None) == (None, ())


def test_a_learned_offset_is_kept_and_follows_daylight_saving_time() -> None:
    later = AT + timedelta(hours=2)
    clock = (line_shape("updated · 1:1"),)
    assert learn_offset(["doors 19:30"], AT, ["doors 21:00"], later, 60, clock) == (60, clock)
    assert learn_offset(["updated · 15:32"], AT, ["updated · 18:32"], later, 60, clock) == (120, clock)


def test_two_loads_of_a_clock_page_read_alike_once_the_offset_is_learned() -> None:
    old = "Prices\nUpdated 5 minutes ago · 15:32\nKettle 89.00"
    later = AT + timedelta(minutes=47)
    new = "Prices\nUpdated 12 minutes ago · 16:19\nKettle 89.00"
    learned = learned_clock(old, Clock(AT), new, Clock(later))
    assert learned.offset == 60 and learned.fetched == later
    old_clock = Clock(AT, learned.offset, learned.lines)
    assert same_stable_text(old, new, old_clock=old_clock, new_clock=learned)
    assert not same_stable_text(old, new.replace("89.00", "79.00"), old_clock=old_clock, new_clock=learned)
    # not assumed: without the offset, the times are the page's words
    assert not same_stable_text(old, new, old_clock=Clock(AT), new_clock=Clock(later))


def test_a_time_on_a_line_that_states_its_age_tracks_the_fetch_time_less_that_age() -> None:
    old = "Prices\nUpdated 2 minutes ago · 14:30\nKettle 89.00"
    later = AT + timedelta(minutes=88)  # 16:00
    new = "Prices\nUpdated 5 minutes ago · 15:55\nKettle 89.00"  # 5 minutes off the clock, as it says
    learned = learned_clock(old, Clock(AT), new, Clock(later))
    assert learned.offset == 0 and learned.lines == (line_shape("updated · 1:1"),)
    old_clock = Clock(AT, 0, learned.lines)
    assert same_stable_text(old, new, old_clock=old_clock, new_clock=learned)
    assert stable(new, learned) == "Prices\nUpdated\nKettle 89.00"
    # the age is the line's own: "just now" at 15:55 is 5 minutes off the fetch time, content
    assert stable(new.replace("5 minutes ago", "just now"), learned) == "Prices\nUpdated · 15:55\nKettle 89.00"
    assert not same_stable_text(old, new.replace("89.00", "79.00"), old_clock=old_clock, new_clock=learned)
    # an age is no zone: a time that tracks the fetch time less its age in no round offset is content
    assert learned_clock(old, Clock(AT), new.replace("15:55", "15:47"), Clock(later)).offset is None


@pytest.mark.parametrize(("line", "age"), [
    ("updated 5 minutes ago · 09:55", (5, 6)), ("a minute ago", (1, 2)), ("5m ago", (5, 6)), ("1 min ago", (1, 2)),
    ("posted 40 seconds ago", (0, 1)), ("just now", (0, 1)), ("2 hours ago", None), ("5 months ago", None),
    ("3 minutes ago, 5 minutes ago", None), ("updated · 09:55", None), ("vor 5 minuten", None),
])
def test_the_age_a_line_states_to_the_minute(line: str, age: tuple[int, int] | None) -> None:
    assert stated_age(line) == age


def test_fetch_times_read_as_observations_keep_them() -> None:
    assert parse_fetch_time("2026-12-05T14:32:20Z") == AT
    assert parse_fetch_time("2026-12-05T15:32:20+01:00") == AT
    assert parse_fetch_time("") is None and parse_fetch_time("yesterday") is None
