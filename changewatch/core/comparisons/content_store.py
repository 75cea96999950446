"""How a content part is kept in a snapshot: its hashes, fingerprint and spec as JSON, and its raw
text (or, for a first page kept unread, its body) compressed as the blob."""

from __future__ import annotations

from typing import Any

from ..evidence import COMPRESSION
from ..learned import Learned
from ..observation import canonical_time
from ..text.clock_times import Clock, parse_fetch_time
from .content_page import PageBody
from .content_part import ContentPart

__all__ = ["decode_part", "encode_part"]


def encode_part(part: ContentPart) -> tuple[Any, bytes | None]:
    """What the snapshot keeps of *part*: its JSON value and its blob."""
    # A fingerprint not computed yet stays so (simhash is 0.36 ms of a corpus page: a baseline
    # whose text never changes never needs it). Two's complement: SQLite and PostgreSQL
    # integers (and most JSON readers) are signed 64-bit.
    if part.kept_unread:
        return _encode_body(part)
    fp = part.known_fingerprint
    signed = None if fp is None else fp - (1 << 64) * (fp >> 63)
    # A part keeps its raw text (its stable text is made again when needed); its content hash
    # and length only once computed.
    data: dict[str, Any] = {"raw_hash": part.raw_hash, "content_hash": part.known_content_hash,
                            "fingerprint": signed, "length": part.known_length, "raw": True}
    if part.sort_lines:
        data["sort_lines"] = True
    if part.body_hash is not None:
        data["body_hash"] = part.body_hash
    if part.spec is not None:
        data["spec"] = part.spec
    if part.reading is not None:
        data["reading"] = part.reading
    if part.undecodable:
        data["undecodable"] = part.undecodable
    if part.learned is not None:
        data["learned"] = part.learned.encode()
    return _with_clock(part, data), part.blob()


def _encode_body(part: ContentPart) -> tuple[Any, bytes | None]:
    # A first page not read: its body, compressed, and how to read it.
    page = part.page
    assert page is not None
    data: dict[str, Any] = {"body": COMPRESSION, "body_hash": part.body_hash, "encoding": page.encoding,
                            "reading": part.reading}
    if part.sort_lines:
        data["sort_lines"] = True
    if part.spec is not None:
        data["spec"] = part.spec
    if part.learned is not None:
        data["learned"] = part.learned.encode()
    return _with_clock(part, data), page.compressed()


def _with_clock(part: ContentPart, data: dict[str, Any]) -> dict[str, Any]:
    # When the page was fetched (its stable text leaves out the times that track it), the offset
    # learned for its bare times of day, and the normaliser that read it.
    if part.clock.fetched is not None:
        data["fetched_at"] = canonical_time(part.clock.fetched.isoformat())
    if part.clock.offset is not None:
        data["clock"] = {"offset": part.clock.offset, "lines": list(part.clock.lines)}
    if part.normaliser is not None:
        data["normaliser"] = part.normaliser
    return data


def _clock(data: dict[str, Any]) -> dict[str, Any]:
    learned = data.get("clock")
    offset = learned.get("offset") if isinstance(learned, dict) else None
    lines = learned.get("lines") if isinstance(learned, dict) else None
    fetched = data.get("fetched_at")
    normaliser = data.get("normaliser")
    return {"clock": Clock(parse_fetch_time(fetched) if isinstance(fetched, str) else None,
                           offset if isinstance(offset, int) else None,
                           tuple(str(line) for line in lines) if isinstance(lines, list) else ()),
            "normaliser": normaliser if isinstance(normaliser, int) else None}


def _decode_body(data: dict[str, Any], blob: bytes) -> ContentPart | None:
    if data["body"] != COMPRESSION or not isinstance(data.get("body_hash"), str):
        return None
    spec, encoding = data.get("spec"), data.get("encoding")
    sort_lines = bool(data.get("sort_lines"))
    return ContentPart(page=PageBody(None, encoding if isinstance(encoding, str) else None, sort_lines,
                                     compressed=blob),
                       body_hash=data["body_hash"], spec=spec if isinstance(spec, str) else None,
                       reading=data.get("reading"), undecodable=0,
                       learned=Learned.decode(data["learned"]) if "learned" in data else None,
                       keeps_body=True, stored_as_body=True, **_clock(data))


def decode_part(data: Any, blob: bytes | None) -> ContentPart | None:
    """The part :func:`encode_part` kept (None: not one it wrote)."""
    if not isinstance(data, dict) or blob is None:
        return None
    if "body" in data:
        return _decode_body(data, blob)
    spec = data.get("spec")
    fp = data.get("fingerprint")
    known = {"raw_hash": data["raw_hash"], "fingerprint": None if fp is None else int(fp) & ((1 << 64) - 1),
             "body_hash": data.get("body_hash"), "spec": spec if isinstance(spec, str) else None,
             "reading": data.get("reading"), "undecodable": int(data.get("undecodable") or 0),
             "learned": Learned.decode(data["learned"]) if "learned" in data else None}
    if not data.get("raw"):
        return None
    length = data.get("length")
    return ContentPart(**known, content_hash=data.get("content_hash"), length=None if length is None else int(length),
                       raw_compressed=blob, sort_lines=bool(data.get("sort_lines")), **_clock(data))

