"""End to end: a damaged snapshot in a real store, on SQLite and PostgreSQL.

A stored text, or a first page kept unread, is decompressed only when a later page needs it:
damage shows on a later run, not when the snapshot is read. That run must neither fail the key
(an `unprocessable` error every run after, the baseline never replaced) nor report garbage as a
change: the key starts again silently, counted, and the next edit is reported against it.
"""
# ruff: noqa: F811 -- the store fixtures of tests/store/conftest.py, imported to be requested by name

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from changewatch.store import store_from_uri

from ..store.conftest import postgresql_store_uri, sqlite_store_uri, store_uri  # noqa: F401
from .crawl import Crawler, by_key
from .hostile import HostileSite, good_page, page


def _damage_snapshot(uri: str, key: str) -> None:
    """Flip 16 bytes a third of the way into the key's content blob, through the store's API."""
    store = store_from_uri(uri)
    store.open()
    try:
        state = store.read("watch", key)
        assert state is not None and state.snapshot is not None
        snapshot = state.snapshot
        (size,) = struct.unpack_from(">I", snapshot, 4)
        at, length = json.loads(snapshot[8:8 + size])["content"]["blob"]
        damaged = bytearray(snapshot)
        start = 8 + size + at + length // 3
        damaged[start:start + 16] = bytes(b ^ 0xFF for b in damaged[start:start + 16])
        store.replace_snapshot("watch", key, state.version, bytes(damaged))
    finally:
        store.close()


@pytest.mark.parametrize("paragraphs", [pytest.param(12, id="read"), pytest.param(600, id="kept-unread")])
def test_a_damaged_snapshot_starts_the_key_again_silently(site: HostileSite, tmp_path: Path, store_uri: str,
                                                         paragraphs: int) -> None:
    html = good_page("p", paragraphs)
    site.good["/p"] = page(html)
    crawler = Crawler(tmp_path, [{"key": "p", "url": f"{site.base}/p"}], store=store_uri)
    first = crawler.run()
    assert first.returncode == 0 and first.records == [], first.stderr[-3000:]

    _damage_snapshot(store_uri, "p")
    site.good["/p"] = page(html.replace(b"paragraph 5 says", b"paragraph 5 now says"))
    second = crawler.run()
    assert second.returncode == 0, second.stderr[-3000:]
    assert second.records == []  # neither an error nor a change made of damaged bytes
    assert second.stats["changewatch/store/snapshot_unreadable"] == 1
    assert second.stats["changewatch/commit/baseline"] == 1
    assert "cannot be read" in second.stderr

    site.good["/p"] = page(html.replace(b"paragraph 7 says", b"paragraph 7 at last says"))
    third = by_key(crawler.run().records)
    assert third["p"]["kind"] == "content"
    assert "+ p: paragraph 7 at last says something stable about p." in third["p"]["diff"]
