"""Repeated noisy loads of every corpus page give no change: with case and punctuation kept, what
varies between two loads of an unchanged page (relative times in the page's language, a clock
tracking the fetch time, script contents, nonces, whitespace) must still normalise away. Besides
an injected line of the page's language and a clock, each load varies the relative times found in
the page's own text (other numbers). The page's own dates and times are content: a changed one is
reported in the page's words."""

from __future__ import annotations

import random
import re
import unicodedata
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.observation import Observation
from changewatch.core.text import volatile
from changewatch.core.text.normalise import visible_text
from changewatch.core.verdict import classify, digest

from .._support import LANGUAGE_LINES

COMPARISONS = load_comparisons()
_LANG = re.compile(rb"<html[^>]*?\blang=[\"']?([a-zA-Z]{2})", re.IGNORECASE)
_BODY = re.compile(rb"<body[^>]*>", re.IGNORECASE)
_CLOCK = re.compile(rb"(?<![\w:.+-])\d{1,2}:\d{2}(?![\w:])")
LOADS = 4
START = datetime(2026, 12, 5, 9, 14, 20, tzinfo=UTC)


def _ascii(text: str) -> bytes:
    """*text* as character references: readable in whatever charset the page declares."""
    return "".join(c if c.isascii() else f"&#{ord(c)};" for c in text).encode("ascii")


# The relative times (not the ids varied above)
_RELATIVE = [p for p, needs in zip(volatile._VOLATILE, volatile._NEEDS, strict=True)
             if any(word in needs for word in ("ago", "前", "vor", "temu"))]
_NUMBER = re.compile(r"\d+")


@cache
def written_fragments(html: bytes) -> tuple[str, ...]:
    """The relative times of the page's text (with a number) that the normaliser removes wherever
    they occur in it, and that the page's bytes hold as written (UTF-8), longest first, none
    inside another."""
    raw = visible_text(html).raw
    folded = raw.lower()
    removed: dict[str, int] = {}
    for pattern in _RELATIVE:
        for match in pattern.finditer(folded):
            fragment = raw[match.start():match.end()]
            if not volatile._not_at_word_start(match) and _NUMBER.search(fragment):
                removed[fragment] = removed.get(fragment, 0) + 1
    kept: list[str] = []
    for fragment in sorted(removed, key=len, reverse=True):
        if (raw.count(fragment) == removed[fragment] and fragment.encode() in html
                and not any(fragment in k for k in kept)):
            kept.append(fragment)
    return tuple(kept)


def _other_number(number: str, rng: random.Random) -> str:
    value = rng.randrange(2000, 2040) if len(number) == 4 else rng.randrange(1, 13)
    zero = ord(number[0]) - unicodedata.digit(number[0])  # the script's digits (Bengali ones too)
    return "".join(chr(zero + int(d)) for d in f"{value:0{len(number)}d}")


def varied(fragment: str, rng: random.Random) -> str:
    """*fragment* with other numbers."""
    return _NUMBER.sub(lambda m: _other_number(m.group(0), rng), fragment)


def fetched(load: int) -> datetime:
    return START + timedelta(minutes=47 * load)


def noisy_load(html: bytes, load: int) -> bytes:
    """The page as load number *load* serves it: the same content, other volatile fragments, and
    clocks showing its fetch time (one in UTC, one bare in UTC+1)."""
    rng = random.Random(load)
    lang = (m.group(1).decode().lower() if (m := _LANG.search(html[:4096])) else "en")
    line = LANGUAGE_LINES.get(lang, LANGUAGE_LINES["en"])[load % 2]
    at = fetched(load)
    stamp = (f"<p>{_ascii(line).decode()}</p><p>Generated {at:%Y-%m-%d %H:%M} UTC</p>"
             f"<p>Updated {rng.randint(2, 59)} minutes ago · {at + timedelta(hours=1):%H:%M}</p>"
             f"<script nonce='{rng.getrandbits(64):x}'>var build = '{rng.getrandbits(128):x}';</script>").encode()
    if fragments := written_fragments(html):  # in one pass: a varied fragment is not varied again
        html = re.sub(b"|".join(re.escape(f.encode()) for f in fragments),
                      lambda m: _ascii(varied(m.group(0).decode(), rng)), html)
    body = _BODY.search(html)
    at_body = body.end() if body else 0
    return html[:at_body] + stamp + html[at_body:].replace(b"\n", b"\n" + b" " * (load % 3))


def snapshot(html: bytes, load: int = 0):  # type: ignore[no-untyped-def]
    return digest(Observation(key="k", url="https://corpus.example/", html=html,
                              observed_at=f"{fetched(load):%Y-%m-%dT%H:%M:%SZ}"), COMPARISONS)


def test_no_corpus_page_gains_a_change_across_repeated_noisy_loads(corpus_texts: dict[Path, str]) -> None:
    checked = 0
    for path in corpus_texts:
        html = path.read_bytes()
        baseline = snapshot(noisy_load(html, 0))
        if classify(None, baseline, COMPARISONS).kind is Kind.ERROR:
            continue
        for load in range(1, LOADS):
            verdict = classify(baseline, snapshot(noisy_load(html, load), load), COMPARISONS, context=CompareContext())
            assert verdict.kind in (Kind.NONE, Kind.NOISE), (path.name, load, verdict.diff)
            baseline = verdict.keep or baseline
        checked += 1
    assert checked >= len(corpus_texts) - 3
    # the pages' own relative times were varied too
    assert sum(len(written_fragments(path.read_bytes())) for path in corpus_texts) >= 20


def test_a_noisy_load_whose_only_change_is_one_word_s_case_is_content(long_article: tuple[Path, bytes, str]) -> None:
    _, html, text = long_article
    word = next(w for w in text.split() if w.isalpha() and w.islower() and len(w) >= 8
                and html.count(f" {w} ".encode()) == 1)
    baseline = snapshot(noisy_load(html, 0))
    changed = noisy_load(html, 1).replace(f" {word} ".encode(), f" {word.upper()} ".encode())
    verdict = classify(baseline, snapshot(changed, 1), COMPARISONS)
    assert verdict.kind is Kind.CONTENT and verdict.diff is not None
    assert f" {word.upper()} " in verdict.diff and f" {word} " in verdict.diff


def test_a_noisy_load_whose_only_change_is_a_time_of_the_page_is_content(corpus_texts: dict[Path, str]) -> None:
    """A page's own times are content: one changed on a noisy load is reported, in its words."""
    checked = 0
    for path in corpus_texts:
        html = path.read_bytes()
        times = [m for m in _CLOCK.finditer(html) if html.count(m.group(0)) == 1]
        raw = visible_text(html).raw
        times = [m for m in times if raw.count(m.group(0).decode()) == 1]
        if not times:
            continue
        found = times[0].group(0)
        other = b"23:59" if found != b"23:59" else b"00:01"
        baseline = snapshot(noisy_load(html, 0))
        changed = noisy_load(html, 1).replace(found, other)
        verdict = classify(baseline, snapshot(changed, 1), COMPARISONS)
        assert verdict.kind is Kind.CONTENT and verdict.diff is not None, path.name
        assert found.decode() in verdict.diff and other.decode() in verdict.diff, (path.name, verdict.diff)
        checked += 1
    assert checked >= 5
