"""Repeated noisy loads of every corpus page give no change: with case and punctuation kept, what
varies between two loads of an unchanged page (clock times, dates and relative times in the
page's language, script contents, nonces, whitespace) must still normalise away."""

from __future__ import annotations

import random
import re
from pathlib import Path

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.observation import Observation
from changewatch.core.verdict import classify, digest

from ._support import LANGUAGE_LINES

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


def test_a_noisy_load_whose_only_change_is_one_word_s_case_is_content(long_article: tuple[Path, bytes, str]) -> None:
    _, html, text = long_article
    word = next(w for w in text.split() if w.isalpha() and w.islower() and len(w) >= 8
                and html.count(f" {w} ".encode()) == 1)
    baseline = snapshot(noisy_load(html, 0))
    changed = noisy_load(html, 1).replace(f" {word} ".encode(), f" {word.upper()} ".encode())
    verdict = classify(baseline, snapshot(changed), COMPARISONS)
    assert verdict.kind is Kind.CONTENT and verdict.diff is not None
    assert f" {word.upper()} " in verdict.diff and f" {word} " in verdict.diff
