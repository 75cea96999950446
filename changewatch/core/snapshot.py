"""The per-key snapshot: one typed, versioned value with one part per comparison.

Encoded for the store as one byte string: a magic and format version, a JSON header (each
part's own version and JSON value, and where its blob is) and the blobs (compressed text) after
it, so that reading a snapshot never decompresses text that no diff needs. The store treats the
bytes as opaque.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .comparisons import Comparison

__all__ = ["FORMAT", "Snapshot", "SnapshotError"]

_MAGIC = b"CWS"
FORMAT = 1
_HEADER = struct.Struct(">3sBI")  # magic, format, header length


class SnapshotError(ValueError):
    """Bytes that are not a snapshot this version of changewatch can read."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What is kept of one good observation: a part per comparison that digested it, plus parts
    of comparisons not loaded in this crawl, carried along untouched."""

    parts: Mapping[str, Any] = field(default_factory=dict)
    #: parts of comparisons not loaded now: (version, JSON value, blob), written back as they were
    foreign: Mapping[str, tuple[int, Any, bytes | None]] = field(default_factory=dict, compare=False)

    def part(self, name: str) -> Any | None:
        return self.parts.get(name)

    # Views of the built-in parts, for spiders (a 304 callback re-visiting a listing's entities).

    @property
    def fields(self) -> dict[str, Any] | None:
        """The tracked values as the page showed them, or None."""
        part = self.parts.get("fields")
        return None if part is None else dict(part.raw)

    @property
    def entities(self) -> dict[str, Any] | None:
        """The entity set (canonical key → Entity, in page order), or None."""
        part = self.parts.get("entities")
        return None if part is None else dict(part.entities)

    @property
    def text(self) -> str | None:
        """The stable text (decompressed on use), or None."""
        part = self.parts.get("content")
        return None if part is None else str(part.text)

    def __iter__(self) -> Iterator[str]:
        return iter(self.parts)

    def encode(self, comparisons: Iterable[Comparison]) -> bytes:
        by_name = {c.name: c for c in comparisons}
        header: dict[str, Any] = {}
        blobs: list[bytes] = []
        offset = 0
        entries = [(name, by_name[name].part_version, *by_name[name].encode(part))
                   for name, part in self.parts.items()]
        entries += [(name, *value) for name, value in self.foreign.items() if name not in self.parts]
        for name, version, data, blob in entries:
            entry: dict[str, Any] = {"v": version, "data": data}
            if blob is not None:
                entry["blob"] = [offset, len(blob)]
                blobs.append(blob)
                offset += len(blob)
            header[name] = entry
        head = json.dumps(header, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                          default=str).encode("utf-8", "surrogatepass")
        return b"".join([_HEADER.pack(_MAGIC, FORMAT, len(head)), head, *blobs])

    @classmethod
    def decode(cls, data: bytes, comparisons: Iterable[Comparison]) -> Snapshot:
        """The snapshot :meth:`encode` wrote. A part its comparison cannot read (another part
        version) is left out: that comparison restarts silently from the next observation."""
        if len(data) < _HEADER.size:
            raise SnapshotError("truncated snapshot")
        magic, version, size = _HEADER.unpack_from(data)
        if magic != _MAGIC or version != FORMAT:
            raise SnapshotError(f"not a changewatch snapshot of format {FORMAT} (magic {magic!r}, format {version})")
        start = _HEADER.size + size
        try:
            header = json.loads(data[_HEADER.size:start].decode("utf-8", "surrogatepass"))
        except ValueError as exc:
            raise SnapshotError(f"unreadable snapshot header: {exc}") from None
        by_name = {c.name: c for c in comparisons}
        parts: dict[str, Any] = {}
        foreign: dict[str, tuple[int, Any, bytes | None]] = {}
        for name, entry in header.items():
            blob = None
            if "blob" in entry:
                at, length = entry["blob"]
                blob = bytes(data[start + at:start + at + length])
            if name not in by_name:
                foreign[name] = (entry["v"], entry["data"], blob)
            elif (part := by_name[name].decode(entry["data"], blob, entry["v"])) is not None:
                parts[name] = part
        return cls(parts, foreign)
