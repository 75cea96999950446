"""``changewatch status`` streams: listing a store of 20 times as many keys takes no more peak
memory (tracemalloc, after a warm-up run has imported everything) than a small one. The stores are
made by SQL in a few seconds; 1,000,000 keys behave the same (docs/cli.md gives the figures)."""

from __future__ import annotations

import io
import sqlite3
import tracemalloc
from pathlib import Path

import pytest

from changewatch.cli import main
from changewatch.store import open_store

pytestmark = pytest.mark.slow  # ~20 s: 60,000 keys listed under tracemalloc

SMALL, LARGE = 3_000, 60_000  # 3 batches and 60: each reads the next batch while it holds one

_KEYS = """
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
INSERT INTO observations (spider, key, url, version, counters, first_seen, last_seen, last_good, last_error,
                          error_streak, due_at)
SELECT 'watch', printf('https://s.example/p/%07d', i), printf('https://s.example/p/%07d', i), 1, '{"baseline":1}',
       '2024-05-01T00:00:00Z', '2024-05-01T00:00:00Z', '2024-05-01T00:00:00Z',
       CASE WHEN i % 10 = 0 THEN 'timeout: no answer within 30 s' END, CASE WHEN i % 10 = 0 THEN 2 ELSE 0 END,
       CASE WHEN i % 3 = 0 THEN '2099-01-01T00:00:00Z' END
FROM n
"""
_CHANGES = """
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
INSERT INTO changes (spider, key, kind, observed_at, record)
SELECT 'watch', printf('https://s.example/p/%07d', i * 10), 'error', '2024-05-01T00:00:00Z',
       '{"error":"timeout: no answer within 30 s"}'
FROM n
"""


def synthetic_store(path: Path, keys: int) -> str:
    """A store of *keys* keys, one in ten failing with a logged error, one in three scheduled."""
    uri = f"sqlite:///{path}"
    open_store(uri).close()
    with sqlite3.connect(path) as db:
        db.execute(_KEYS, (keys,))
        db.execute(_CHANGES, (keys // 10,))
    return uri


class Discarded(io.TextIOBase):
    """stdout that keeps nothing, so that only the command's own memory is measured."""

    lines = 0

    def write(self, text: str) -> int:
        self.lines += text.count("\n")
        return len(text)


def peak_of_status(uri: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    out = Discarded()
    monkeypatch.setattr("sys.stdout", out)
    tracemalloc.start()
    try:
        assert main(["status", "--store", uri]) == 0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, out.lines


def test_listing_a_large_store_takes_the_memory_of_a_small_one(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    small, large = synthetic_store(tmp_path / "small.db", SMALL), synthetic_store(tmp_path / "large.db", LARGE)
    peak_of_status(small, monkeypatch)  # imports everything
    small_peak, small_lines = peak_of_status(small, monkeypatch)
    large_peak, large_lines = peak_of_status(large, monkeypatch)
    assert (small_lines, large_lines) == (SMALL + 1, LARGE + 1)  # a line per key and the summary
    # everything kept per key would be 20 times as much; a batch at a time is the same
    assert large_peak < 1.5 * small_peak, (small_peak, large_peak)
