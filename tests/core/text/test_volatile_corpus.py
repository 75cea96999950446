"""Repeated noisy loads of every corpus page give no change: with case and punctuation kept, what
varies between two loads of an unchanged page (clock times, dates and relative times in the
page's language, script contents, nonces, whitespace) must still normalise away. Besides an
injected line of the page's language, each load varies the written dates and relative times
found in the page's own text (what the volatile patterns remove there: other numbers, other
month and weekday names of the same language)."""

from __future__ import annotations

import random
import re
import unicodedata
from functools import cache
from pathlib import Path

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.observation import Observation
from changewatch.core.text import volatile
from changewatch.core.text.normalise import visible_text
from changewatch.core.text.volatile_languages import _AMBIGUOUS_MONTHS, _MONTH_NAMES, _WEEKDAY_NAMES
from changewatch.core.verdict import classify, digest

from .._support import LANGUAGE_LINES

COMPARISONS = load_comparisons()
_LANG = re.compile(rb"<html[^>]*?\blang=[\"']?([a-zA-Z]{2})", re.IGNORECASE)
_BODY = re.compile(rb"<body[^>]*>", re.IGNORECASE)
_CLOCK = re.compile(rb"(?<![\w:.+-])\d{1,2}:\d{2}(?![\w:])")
_ISO_DATE = re.compile(rb"(?<![\w-])\d{4}-\d{2}-\d{2}(?![\w-])")
# A digit right before a time, with only tags between ("5 maj 2021</span>11:15"): the text reads
# "202111:15", which is not a clock time the normaliser can tell (a page's publication times do
# not change from one load to the next; the reading of glued numbers is not this test's subject).
_GLUED = re.compile(rb"\d(?:<[^<>]*>)*$")
LOADS = 4


def _ascii(text: str) -> bytes:
    """*text* as character references: readable in whatever charset the page declares."""
    return "".join(c if c.isascii() else f"&#{ord(c)};" for c in text).encode("ascii")


_NORMALISE = volatile
# The written dates and relative times (not the ids, ISO dates and clock times varied above)
_WRITTEN = [p for p in _NORMALISE._VOLATILE if p in _NORMALISE._OTHER or p in _NORMALISE._ENGLISH[5:10]
            or p in _NORMALISE._ENGLISH[12:]]
_NAME_LISTS = [text.split() for text in (*_MONTH_NAMES.values(), *_WEEKDAY_NAMES.values())]
_WORD = re.compile(r"[^\W\d_]+")
_NUMBER = re.compile(r"\d+")


@cache
def written_fragments(html: bytes) -> tuple[str, ...]:
    """The written dates and relative times of the page's text (with a number) that the
    normaliser removes wherever they occur in it ("2019August 6, 2019" glued: not), and that the
    page's bytes hold as written (UTF-8), longest first, none inside another."""
    raw = visible_text(html).raw
    folded = raw.lower()
    removed: dict[str, int] = {}
    for pattern in _WRITTEN:
        for match in pattern.finditer(folded):
            fragment = raw[match.start():match.end()]
            if not _NORMALISE._not_at_word_start(match) and _NUMBER.search(fragment):
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


# Not swapped: names English shares ("December 29" is no German date), and month names that
# are words too, a date after a day only with a year ("15 novembre" -> "15 mars" would be content)
_KEEP_NAMES = frozenset("january february march april may june july august september october november december"
                        .split()) | _AMBIGUOUS_MONTHS


def _other_name(word: str, rng: random.Random) -> str:
    if word.lower() in _KEEP_NAMES:
        return word
    for names in _NAME_LISTS:
        if word.lower() in names:
            other = rng.choice([name for name in names if name not in _KEEP_NAMES])
            return other.capitalize() if word[:1].isupper() else other
    return word


def varied(fragment: str, rng: random.Random) -> str:
    """*fragment* with other numbers and month or weekday names (of the same language)."""
    fragment = _NUMBER.sub(lambda m: _other_number(m.group(0), rng), fragment)
    return _WORD.sub(lambda m: _other_name(m.group(0), rng), fragment)


def noisy_load(html: bytes, load: int) -> bytes:
    """The page as load number *load* serves it: the same content, other volatile fragments."""
    rng = random.Random(load)
    lang = (m.group(1).decode().lower() if (m := _LANG.search(html[:4096])) else "en")
    line = LANGUAGE_LINES.get(lang, LANGUAGE_LINES["en"])[load % 2]
    stamp = (f"<p>{_ascii(line).decode()}</p><script nonce='{rng.getrandbits(64):x}'>"
             f"var build = '{rng.getrandbits(128):x}';</script>").encode()
    html = _CLOCK.sub(lambda m: m.group(0) if _GLUED.search(m.string[max(0, m.start() - 300):m.start()])
                      else f"{rng.randrange(24)}:{rng.randrange(60):02d}".encode(), html)
    html = _ISO_DATE.sub(lambda _: f"20{rng.randrange(10, 30)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
                         .encode(), html)
    if fragments := written_fragments(html):  # in one pass: a varied date is not varied again
        html = re.sub(b"|".join(re.escape(f.encode()) for f in fragments),
                      lambda m: _ascii(varied(m.group(0).decode(), rng)), html)
    body = _BODY.search(html)
    at = body.end() if body else 0
    return html[:at] + stamp + html[at:].replace(b"\n", b"\n" + b" " * (load % 3))


def snapshot(html: bytes):  # type: ignore[no-untyped-def]
    return digest(Observation(key="k", url="https://corpus.example/", html=html), COMPARISONS)


def test_no_corpus_page_gains_a_change_across_repeated_noisy_loads(corpus_texts: dict[Path, str]) -> None:
    checked = 0
    for path in corpus_texts:
        html = path.read_bytes()
        baseline = snapshot(noisy_load(html, 0))
        if classify(None, baseline, COMPARISONS).kind is Kind.ERROR:
            continue
        for load in range(1, LOADS):
            verdict = classify(baseline, snapshot(noisy_load(html, load)), COMPARISONS, context=CompareContext())
            assert verdict.kind in (Kind.NONE, Kind.NOISE), (path.name, load, verdict.diff)
            baseline = verdict.keep or baseline
        checked += 1
    assert checked >= len(corpus_texts) - 3
    # the pages' own dates and relative times were varied too
    assert sum(len(written_fragments(path.read_bytes())) for path in corpus_texts) >= 300


def test_a_noisy_load_whose_only_change_is_one_word_s_case_is_content(long_article: tuple[Path, bytes, str]) -> None:
    _, html, text = long_article
    word = next(w for w in text.split() if w.isalpha() and w.islower() and len(w) >= 8
                and html.count(f" {w} ".encode()) == 1)
    baseline = snapshot(noisy_load(html, 0))
    changed = noisy_load(html, 1).replace(f" {word} ".encode(), f" {word.upper()} ".encode())
    verdict = classify(baseline, snapshot(changed), COMPARISONS)
    assert verdict.kind is Kind.CONTENT and verdict.diff is not None
    assert f" {word.upper()} " in verdict.diff and f" {word} " in verdict.diff
