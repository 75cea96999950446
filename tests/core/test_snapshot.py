"""The per-key snapshot: one versioned value, text decompressed only when a diff needs it."""

from __future__ import annotations

import json
import struct
from typing import Any

import pytest

from changewatch.core.comparisons import load_comparisons
from changewatch.core.comparisons.content_part import ContentPart
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot, SnapshotError
from changewatch.core.verdict import digest

COMPARISONS = load_comparisons()
PAGE = "<main>" + "".join(f"<p>Paragraph {i}: steady words about the subject, é ü 漢字.</p>"
                          for i in range(50)) + "</main>"


def full() -> Snapshot:
    obs = Observation(key="k", url="https://s.example/list", html=PAGE, fields={"price": "89.00", "name": "Tea"},
                      entities=[{"key": "/a?utm_source=x", "fields": {"t": "A"}}, {"key": "/b", "fields": {}}])
    return digest(obs, COMPARISONS)


def test_every_part_round_trips() -> None:
    snapshot = full()
    data = snapshot.encode(COMPARISONS)
    again = Snapshot.decode(data, COMPARISONS)
    assert again == snapshot
    assert again.fields == {"price": "89.00", "name": "Tea"}
    assert list(again.entities or {}) == ["https://s.example/a", "https://s.example/b"]
    assert again.text == snapshot.text and "漢字" in (again.text or "")


def test_a_fingerprint_with_the_top_bit_set_round_trips() -> None:
    part = ContentPart(raw_hash="r", content_hash="c", fingerprint=(1 << 63) | 12345, length=4, raw="text")
    again = Snapshot.decode(Snapshot({"content": part}).encode(COMPARISONS), COMPARISONS)
    assert again.part("content").fingerprint == (1 << 63) | 12345


def test_reading_does_not_decompress_the_text() -> None:
    data = full().encode(COMPARISONS)
    part = Snapshot.decode(data, COMPARISONS).part("content")
    assert isinstance(part, ContentPart)
    assert part._text is None  # still compressed
    assert part.length == len(part.text) and part._text is not None


def test_keeping_unchanged_text_reuses_its_compressed_form() -> None:
    stored = Snapshot.decode(full().encode(COMPARISONS), COMPARISONS).part("content")
    kept = stored.with_stable_text_of(stored)
    assert kept.blob() is stored.blob()


def test_parts_of_comparisons_not_loaded_are_carried_along() -> None:
    data = full().encode(COMPARISONS)
    only_fields = load_comparisons({"content": None, "entities": None})
    partial = Snapshot.decode(data, only_fields)
    assert set(partial.parts) == {"fields"} and set(partial.foreign) == {"content", "entities"}
    rewritten = Snapshot.decode(partial.encode(only_fields), COMPARISONS)
    assert rewritten == full()  # nothing lost by a crawl that did not load them


def _rewrite_header(data: bytes, change: Any) -> bytes:
    (size,) = struct.unpack_from(">I", data, 4)
    header = json.loads(data[8:8 + size])
    change(header)
    head = json.dumps(header).encode()
    return data[:4] + struct.pack(">I", len(head)) + head + data[8 + size:]


def test_a_part_of_another_version_is_dropped_not_misread() -> None:
    data = _rewrite_header(full().encode(COMPARISONS), lambda h: h["fields"].update(v=9))
    decoded = Snapshot.decode(data, COMPARISONS)
    assert set(decoded.parts) == {"content", "entities"}
    assert decoded.text == full().text  # the blobs of the others are where they were


@pytest.mark.parametrize("data", [b"", b"CWS", b"XYZ\x01\x00\x00\x00\x02{}", b"CWS\x02\x00\x00\x00\x02{}",
                                  b"CWS\x01\x00\x00\x00\x05{nope"])
def test_bytes_that_are_no_snapshot_are_refused(data: bytes) -> None:
    with pytest.raises(SnapshotError):
        Snapshot.decode(data, COMPARISONS)
