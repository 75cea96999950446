"""An unchanged page reads the same at any fetch time: no time of a corpus page's own (a listing's
bylines "Dec 17, 2:00pm CET", a schedule, an event) is taken for the clock when the page happens
to be fetched at that time of day. Only the lines that hold a time of day are normalised, at a
fetch time every 7 minutes over three days."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from changewatch.core.text.clock_times import Clock
from changewatch.core.text.normalise import visible_text
from changewatch.core.text.volatile import stable_lines

from .._support import corpus_files

_TIME = re.compile(r"\d:\d\d|\d{1,2}h\d\d")
FETCHES = [datetime(2026, 12, 5, tzinfo=UTC) + timedelta(minutes=7 * k) for k in range(3 * 24 * 60 // 7)]


def test_no_corpus_page_reads_differently_at_another_fetch_time() -> None:
    varying = []
    for path in corpus_files():
        raw = visible_text(path.read_bytes()).raw
        timed = "\n".join(line for line in raw.split("\n") if _TIME.search(line))
        if not timed:
            continue
        first = stable_lines(timed, Clock(FETCHES[0]))
        for at in FETCHES[1:]:
            now = stable_lines(timed, Clock(at))
            if now != first:
                changed = [(a, b) for a, b in zip(first, now, strict=True) if a != b][:2]
                varying.append(f"{path.name} fetched at {at:%Y-%m-%d %H:%M}: {changed}")
                break
    assert not varying, "\n".join(varying)
