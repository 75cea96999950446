"""Snapshots of observations and their classification: the decision at the heart of changewatch."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from enum import StrEnum
from hashlib import blake2b
from typing import Any

from .diff import line_diff
from .entities import Entity, compare_entities
from .fields import compare_fields
from .normalise import VisibleText, normalise_text, visible_text
from .simhash import distance as hamming
from .simhash import simhash

__all__ = ["DiffOptions", "Kind", "Snapshot", "Verdict", "check_observable", "classify",
           "page_digest", "page_snapshot", "text_snapshot"]


class Kind(StrEnum):
    BASELINE = "baseline"
    NONE = "none"
    NOISE = "noise"
    FIELD = "field"
    ENTITIES = "entities"
    CONTENT = "content"
    ERROR = "error"

    @property
    def reported(self) -> bool:
        return self in (Kind.FIELD, Kind.ENTITIES, Kind.CONTENT, Kind.ERROR)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What is kept of one good observation, to compare the next one with. Each part is None
    when the observation does not track it."""

    fields: dict[str, Any] | None = None
    norm_fields: dict[str, Any] | None = None
    text: str | None = None
    raw_hash: str | None = None
    content_hash: str | None = None
    fingerprint: int | None = None
    entities: dict[str, Entity] | None = None


def _digest(text: str) -> str:
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def text_snapshot(visible: VisibleText) -> Snapshot:
    return Snapshot(text=visible.stable, raw_hash=_digest(visible.raw),
                    content_hash=_digest(visible.stable), fingerprint=simhash(visible.stable))


def page_snapshot(html: str | bytes | None, text: str | None, region: str | None,
                  sort_lines: bool) -> Snapshot:
    """Text part of a snapshot from a page's HTML or from extracted text. CPU-bound: the
    pipelines run it off the reactor thread."""
    if html is not None:
        return text_snapshot(visible_text(html, region, sort_lines=sort_lines))
    return text_snapshot(normalise_text(text or "", sort_lines=sort_lines))


def page_digest(html: str | bytes | None, text: str | None, region: str | None,
                sort_lines: bool) -> tuple[Snapshot, str | None]:
    """:func:`page_snapshot`, plus why the page cannot be observed when its region is empty:
    a blocked page says so outside the region, a redesign leaves the region matching nothing."""
    snapshot = page_snapshot(html, text, region, sort_lines)
    if snapshot.text or html is None or not region:
        return snapshot, None
    whole = page_snapshot(html, None, None, False)
    if whole.text and (blocked := _blocked(whole.text)):
        return snapshot, blocked
    if whole.text:
        return snapshot, f"extraction: region {region!r} matched nothing"
    return snapshot, None


@dataclass(slots=True)
class Verdict:
    kind: Kind
    changes: dict[str, Any] = field(default_factory=dict)
    added: list[dict[str, Any]] = field(default_factory=list)
    removed: list[dict[str, Any]] = field(default_factory=list)
    changed: list[dict[str, Any]] = field(default_factory=list)
    distance: int | None = None
    diff: str | None = None
    error: str | None = None
    #: what the store keeps as the new baseline (None: keep the old one)
    keep: Snapshot | None = None


_BLOCKED = re.compile(
    r"access denied|access to this page has been denied|captcha|are you a robot|are you human"
    r"|verify you are (?:a )?human|unusual traffic|request (?:was )?blocked|you have been blocked"
    r"|attention required|just a moment\.\.\.|enable javascript and cookies|too many requests"
    r"|403 forbidden|pardon our interruption|bot detection|checking your browser|security check"
)
BLOCKED_MAX_CHARS = 3000
COLLAPSE_MIN_CHARS = 400
COLLAPSE_RATIO = 0.1


def _blocked(text: str, baseline: str | None = None) -> str | None:
    """Why a short page looks like a block page. A phrase the last good page said too is part of
    the page (a form that mentions its captcha), not a block."""
    if len(text) <= BLOCKED_MAX_CHARS and (m := _BLOCKED.search(text)):
        if baseline is not None and m.group(0) in baseline:
            return None
        return f"blocked: page says {m.group(0)!r}"
    return None


def check_observable(old: Snapshot | None, new: Snapshot) -> str | None:
    """Why *new* cannot be trusted as an observation of the page (None: it can)."""
    if new.text is not None:
        if not new.text.strip():
            return "empty: no visible text"
        if blocked := _blocked(new.text, old.text if old is not None else None):
            return blocked
        if old is not None and old.text and len(old.text) >= COLLAPSE_MIN_CHARS \
                and len(new.text) < COLLAPSE_RATIO * len(old.text):
            return (f"collapsed: visible text fell to {len(new.text)} characters "
                    f"from {len(old.text)} on the last good page")
    if old is not None and old.norm_fields and new.norm_fields is not None:
        for name, before in old.norm_fields.items():
            if before is not None and name in new.norm_fields and new.norm_fields[name] is None:
                return f"field {name!r} is missing (was {old.fields.get(name) if old.fields else before!r})"
    if old is not None and old.entities and new.entities is not None and not new.entities:
        return f"entities: all {len(old.entities)} entities are missing"
    return None


@dataclass(frozen=True, slots=True)
class DiffOptions:
    context: int = 1
    max_lines: int = 60
    max_chars: int = 4000


def _compare_text(old: Snapshot, new: Snapshot, threshold: int | None, verdict: Verdict,
                  diff: DiffOptions) -> str:
    """Fill the content members of *verdict*; return the text outcome: none, noise,
    threshold (noise that keeps the old baseline) or content."""
    if old.content_hash == new.content_hash:
        return "none" if old.raw_hash == new.raw_hash else "noise"
    dist = hamming(old.fingerprint or 0, new.fingerprint or 0)
    verdict.distance = dist
    if threshold is not None and dist <= threshold:
        return "threshold"
    verdict.diff = line_diff(old.text or "", new.text or "", context=diff.context, max_lines=diff.max_lines,
                             max_chars=diff.max_chars)
    return "content"


def classify(old: Snapshot | None, new: Snapshot, *, threshold: int | None = None,
             error: str | None = None, diff: DiffOptions = DiffOptions()) -> Verdict:
    """Compare a new observation with the last good one.

    Field and entity changes win over text changes in the record's ``kind``; every member that
    applies is filled in. Parts that only one side tracks are not compared (a watch that starts
    tracking a field starts silently).
    """
    error = error or check_observable(old, new)
    if error:
        return Verdict(Kind.ERROR, error=error)
    if old is None:
        return Verdict(Kind.BASELINE, keep=new)
    verdict = Verdict(Kind.NONE, keep=new)
    if old.norm_fields is not None and new.norm_fields is not None:
        verdict.changes = compare_fields(old.norm_fields, new.norm_fields, old.fields or {}, new.fields or {})
    if old.entities is not None and new.entities is not None:
        verdict.added, verdict.removed, verdict.changed = compare_entities(old.entities, new.entities)
    text_outcome = "none"
    if old.content_hash is not None and new.content_hash is not None:
        text_outcome = _compare_text(old, new, threshold, verdict, diff)
        if text_outcome == "threshold":
            # Keep the old text as the baseline, so slow drift adds up until it is reported.
            verdict.keep = replace(new, text=old.text, raw_hash=old.raw_hash,
                                   content_hash=old.content_hash, fingerprint=old.fingerprint)
    if verdict.changes:
        verdict.kind = Kind.FIELD
    elif verdict.added or verdict.removed or verdict.changed:
        verdict.kind = Kind.ENTITIES
    elif text_outcome == "content":
        verdict.kind = Kind.CONTENT
    elif text_outcome in ("noise", "threshold"):
        verdict.kind = Kind.NOISE
    return verdict
