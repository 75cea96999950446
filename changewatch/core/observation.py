"""What one look at one watched thing says: the input of every comparison."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from . import clock

if TYPE_CHECKING:
    from .siteset import PageSetDelta

__all__ = ["Observation", "canonical_time", "utc_now"]

_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def utc_now() -> str:
    return clock.now().astimezone(UTC).strftime(_FORMAT)


def canonical_time(value: str) -> str:
    """An ISO 8601 time as changewatch stores and compares them: UTC, seconds, ``Z``. A time
    without a zone is taken as UTC. Raises ValueError for anything else.

    >>> canonical_time("2026-11-30T13:00:00+01:00"), canonical_time("2026-11-30 12:00:00.5")
    ('2026-11-30T12:00:00Z', '2026-11-30T12:00:00Z')
    """
    parsed = datetime.fromisoformat(str(value).strip())
    parsed = parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    return parsed.strftime(_FORMAT)


@dataclass
class Observation:
    """One look at one watched thing. ``key`` is its identity in the store (a SKU, a canonical
    URL, anything stable); ``fields``, ``text``/``html`` and ``entities`` are what is compared.
    ``error`` set means the thing could not be observed: reported, never a new baseline.
    ``html`` may be the response's bytes, decoded with ``encoding``.
    ``options`` tune the comparisons (``kinds``, ``threshold``, ``sort_lines``,
    ``keep_params``/``drop_params``, ``content_type``, for the text ``include``/``ignore``:
    core/text/options.py) and say how the page was read (``field_specs``: field name → a short
    stable spec; ``entities_spec``): a field or entity set read another way than the stored one
    starts afresh, silently (an edited watch)."""

    key: str
    url: str
    fields: dict[str, Any] | None = None
    text: str | None = None
    html: str | bytes | None = None
    region: str | None = None
    entities: list[dict[str, Any]] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    #: when it was fetched (UTC, ISO 8601): an observation fetched before the stored one
    #: never replaces it
    observed_at: str = field(default_factory=utc_now)
    #: the server answered 304 Not Modified: the thing is as it was at its last full fetch
    not_modified: bool = False
    #: how to decode ``html`` when it is bytes (the response's encoding, as Scrapy decided it):
    #: a page compared by its text is shipped to the worker as the bytes it came in, and decoded
    #: there. None: a BOM or the page's own declaration, else UTF-8 or windows-1252.
    encoding: str | None = None
    #: a document that is not an HTML page, as the response's bytes: JSON, plain text or a PDF
    #: read in the worker (core/documents.py) as ``options["content_type"]`` says, or a file
    #: compared by its hash and size alone (``content_type`` "bytes", comparisons/bytes.py)
    body: bytes | None = None
    #: the URL the request started at, when only permanent redirects (every hop a 301 or a 308)
    #: led to ``url``: the thing moved there. None: no redirect, or a temporary one on the way.
    #: The first observation that moves a known key is reported as ``moved`` (once).
    moved_from: str | None = None
    #: a page of a site watch: the site watch's key (its records carry it as ``site_watch``)
    site_watch: str | None = None
    #: a site watch's page set, judged against its stored rows (``entities``: pages added and
    #: removed); None for every other observation
    page_set: PageSetDelta | None = None

    @property
    def has_text(self) -> bool:
        """Whether a text is compared: a page, a text, a plain-text or PDF document, or a JSON
        document read as its canonical text (no ``json`` paths: core/documents.py)."""
        if self.html is not None or self.text is not None:
            return True
        kind = self.options.get("content_type")
        return self.body is not None and (kind in ("text", "pdf") or (kind == "json" and not self.options.get("json")))

    def __repr__(self) -> str:
        """Its page and entity set by their sizes: Scrapy logs an item the pipeline drops (each
        unchanged page, at DEBUG) by its repr, which would otherwise copy every page into the log.

        >>> Observation("k", "https://a.example/", html=b"<p>" * 1000, observed_at="2026-12-05T12:00:00Z")
        Observation(key='k', url='https://a.example/', html=<3000 bytes>, observed_at='2026-12-05T12:00:00Z')
        """
        shown = []
        for member in fields(self):
            value = getattr(self, member.name)
            if value == member.default or (value == {} and member.name == "options"):
                continue
            if member.name == "page_set" and value is not None:
                shown.append(f"page_set=<{len(value.added)} added, {len(value.removed)} removed>")
            elif member.name in _SIZED and value is not None:
                unit = "bytes" if isinstance(value, bytes) else _SIZED[member.name]
                shown.append(f"{member.name}=<{len(value)} {unit}>")
            else:
                shown.append(f"{member.name}={value!r}")
        return f"Observation({', '.join(shown)})"


#: members shown by their size, and in what (bytes when they are bytes)
_SIZED = {"html": "characters", "body": "bytes", "text": "characters", "entities": "entities"}
