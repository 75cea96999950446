"""Bytes: a file watched with ``type: bytes`` (an image, an archive), compared by its hash and
size alone. A change is a ``content`` change without a diff; its ``changes`` say what moved
(``size`` and ``sha256``, old and new)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from hashlib import sha256
from typing import Any, ClassVar

from ..observation import Observation
from .base import CompareContext, Difference, Kind, Status

__all__ = ["BytesComparison", "BytesPart"]


@dataclass(frozen=True, slots=True)
class BytesPart:
    sha256: str
    size: int


class BytesComparison:
    name: ClassVar[str] = "bytes"
    kind: ClassVar[Kind] = Kind.CONTENT
    rank: ClassVar[int] = 40
    part_version: ClassVar[int] = 1

    def digest(self, obs: Observation) -> BytesPart | None:
        if obs.body is None or obs.options.get("content_type") != "bytes":
            return None
        return BytesPart(sha256(obs.body).hexdigest(), len(obs.body))

    def check(self, old: BytesPart | None, new: BytesPart) -> str | None:
        if new.size == 0 and (old is None or old.size):
            return "empty: the response body is empty"
        return None

    def compare(self, old: BytesPart, new: BytesPart, context: CompareContext) -> Difference:
        if old == new:
            return Difference(Status.NONE)
        changes: dict[str, Any] = {"size": {"old": old.size, "new": new.size},
                                   "sha256": {"old": old.sha256, "new": new.sha256}}
        if old.size == new.size:
            del changes["size"]
        return Difference(Status.CHANGED, {"changes": changes})

    def counters(self, part: BytesPart) -> Mapping[str, int]:
        return {}

    def encode(self, part: BytesPart) -> tuple[Any, bytes | None]:
        return {"sha256": part.sha256, "size": part.size}, None

    def decode(self, data: Any, blob: bytes | None, version: int) -> BytesPart | None:
        if version != self.part_version or not isinstance(data, dict):
            return None
        return BytesPart(str(data["sha256"]), int(data["size"]))
