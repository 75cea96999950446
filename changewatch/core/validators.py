"""HTTP validators (ETag, Last-Modified): which to keep from a response, and whether a re-visit
may be a conditional request. Pure functions: the middleware only adapts and counts.

Validators are kept and sent back *verbatim*: a weak ETag stays weak, and If-Modified-Since
carries the server's own Last-Modified string (nginx, by default, answers 304 only on an exact
match; a local clock time would also skip changes made within the clock skew).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

__all__ = ["MAX_VALIDATOR_BYTES", "HttpValidators", "Revalidation", "accept_validators", "parse_http_date",
           "revalidation"]

#: Longer validators are not stored: no real server needs them, and a hostile one should not
#: make us store and resend kilobytes per page.
MAX_VALIDATOR_BYTES = 1024
#: A Last-Modified this far beyond the server's Date (or our clock, without a Date) is refused:
#: a server comparing "modified since a future time" would hide every change until then.
FUTURE_TOLERANCE = timedelta(minutes=5)


@dataclass(slots=True)
class HttpValidators:
    """What the store keeps for one (URL, key): the validators of the full response the key's
    last good observation came from, its size, and how long ago that full fetch was."""

    url: str
    key: str
    etag: str | None = None
    last_modified: str | None = None
    size: int = 0
    full_at: str | None = None  # ISO time of the full fetch these validators came from
    runs: int = 0  # 304 answers since then
    spec: str | None = None  # what the spider extracted with (a changed spec forces a full fetch)
    #: a rendered page's dependency set (changewatch.render.deps, as encoded); None: not rendered
    render: str | None = None
    #: a link-mode site page's links (one URL a line, as found): what a 304 of it still leads to
    links: str | None = None


@dataclass(frozen=True, slots=True)
class Revalidation:
    """Headers for a conditional request, or why the request must be a full fetch."""

    etag: str | None = None
    last_modified: str | None = None
    full_fetch: str | None = None  # reason; None means "send the validators"
    keys: tuple[str, ...] = ()
    size: int = 0


def _text(value: bytes | str | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    value = value.strip()
    return value or None


def _printable(value: str) -> bool:
    # header field values: visible ASCII, spaces and obs-text; no controls (they could not be sent back)
    return all(c in "\t " or 0x21 <= ord(c) <= 0x7E or 0x80 <= ord(c) <= 0xFF for c in value)


def parse_http_date(value: str) -> datetime | None:
    """An HTTP-date as an aware UTC datetime, or None when it is not one.

    >>> parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").isoformat()
    '1994-11-06T08:49:37+00:00'
    >>> parse_http_date("yesterday") is None
    True
    """
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed is None:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def accept_validators(etag: bytes | str | None, last_modified: bytes | str | None, date: bytes | str | None,
                      now: datetime) -> tuple[str | None, str | None, list[str]]:
    """The validators of a response worth keeping, and why any were refused.

    >>> accept_validators(b'W/"5f-1a"', b"Sun, 06 Nov 1994 08:49:37 GMT", None, datetime.now(UTC))
    ('W/"5f-1a"', 'Sun, 06 Nov 1994 08:49:37 GMT', [])
    >>> accept_validators(b'"' + b"x" * 2000 + b'"', b"garbage", None, datetime.now(UTC))
    (None, None, ['etag_too_long', 'last_modified_malformed'])
    """
    refused: list[str] = []
    kept_etag = _text(etag)
    if kept_etag is not None:
        if len(kept_etag.encode("latin-1")) > MAX_VALIDATOR_BYTES:
            refused.append("etag_too_long")
            kept_etag = None
        elif not _printable(kept_etag):
            refused.append("etag_malformed")
            kept_etag = None
    kept_lm = _text(last_modified)
    if kept_lm is not None:
        when = parse_http_date(kept_lm) if len(kept_lm) <= MAX_VALIDATOR_BYTES else None
        if when is None:
            refused.append("last_modified_too_long" if len(kept_lm) > MAX_VALIDATOR_BYTES
                           else "last_modified_malformed")
            kept_lm = None
        else:
            server_now = parse_http_date(_text(date) or "")
            reference = server_now if server_now is not None else now
            if when > reference + FUTURE_TOLERANCE:
                refused.append("last_modified_in_future")
                kept_lm = None
    return kept_etag, kept_lm, refused


def revalidation(rows: list[HttpValidators], *, now: datetime, spec: str | None, max_runs: int,
                 max_age: timedelta) -> Revalidation:
    """Whether a request for a URL whose stored validators are *rows* (one per key observed from
    it) may be conditional. Every key must have come from the same full response: a crash
    between the commits of two observations of one page leaves them disagreeing, and then
    only a full fetch is safe. A spec change, *max_runs* 304s in a row or a full fetch older
    than *max_age* also force a full fetch (the safety net for servers that answer 304 wrongly).

    >>> row = HttpValidators("u", "k", etag='"a"', full_at="2026-11-01T00:00:00Z", runs=2)
    >>> now = datetime(2026, 11, 2, tzinfo=UTC)
    >>> revalidation([row], now=now, spec=None, max_runs=24, max_age=timedelta(days=7)).etag
    '"a"'
    >>> revalidation([row], now=now, spec=None, max_runs=2, max_age=timedelta(days=7)).full_fetch
    'max_runs'
    """
    if not rows:
        return Revalidation(full_fetch="unknown")
    first = rows[0]
    if first.etag is None and first.last_modified is None:
        return Revalidation(full_fetch="no_validators")
    if any((r.etag, r.last_modified, r.full_at) != (first.etag, first.last_modified, first.full_at) for r in rows):
        return Revalidation(full_fetch="keys_disagree")
    if any(r.spec != spec for r in rows):
        return Revalidation(full_fetch="spec_changed")
    if max(r.runs for r in rows) >= max_runs:
        return Revalidation(full_fetch="max_runs")
    full_at = parse_iso(first.full_at)
    if full_at is None or now - full_at >= max_age:
        return Revalidation(full_fetch="max_age")
    return Revalidation(etag=first.etag, last_modified=first.last_modified, keys=tuple(r.key for r in rows),
                        size=max(r.size for r in rows))


def parse_iso(value: str | None) -> datetime | None:
    """``2026-11-30T12:00:00Z`` (as the store writes times) as an aware datetime."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed
