"""The stable text told line by line (core/text/linewise.py) is the stable text told whole: the
patterns never match across a line end, two raw texts that share lines have the same stable lines
there, and what is decided from the lines not shared is what comparing the whole texts decides."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changewatch.core.comparisons.block_pages import _CASE_FIXES, blocked, first_text_passes
from changewatch.core.text.linewise import same_stable_text, stable_text_longer_than
from changewatch.core.text.normalise import visible_text
from changewatch.core.text.visible import VisibleText
from changewatch.core.text.volatile import stable_lines

from ._support import CORPUS_PAGES, require_corpus

#: fragments of lines: volatile ones of several languages, and words, numbers and separators
FRAGMENTS = ["montag", "30.", "November 2026", "10:32", "vor 5 Minuten", "5 minutes ago", "token=abc123",
             "il y a 3 jours", "Mon", "2026-11-30", "12/11/2026", "am", "pm", "Dec", "3rd", "hace 2 días", "30",
             "星期一", "2026年11月30日", "10h30", "sunday,", "today", "deadbeefdeadbeef0123", "Price 89.00",
             "abcdefghijklmnopqrstuvwxyz0123456789ab", "Terms of sale", "UPDATED:", "x", "·", "-", "|"]


def stable(raw: str, sort_lines: bool = False) -> str:
    return VisibleText(raw, sort_lines=sort_lines).stable


def raw_lines(rng: random.Random, count: int) -> list[str]:
    lines = []
    for _ in range(count):
        words = [rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 6))]
        lines.append(" ".join(words))
    return lines


def edited(rng: random.Random, lines: list[str]) -> list[str]:
    """*lines* with a few lines replaced, inserted, removed or moved."""
    out = list(lines)
    for _ in range(rng.randint(1, 4)):
        roll, at = rng.random(), rng.randrange(len(out) + 1)
        if roll < 0.4 and out:
            out[min(at, len(out) - 1)] = " ".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 5)))
        elif roll < 0.6:
            out.insert(at, rng.choice(FRAGMENTS))
        elif roll < 0.8 and len(out) > 1:
            del out[min(at, len(out) - 1)]
        elif out:
            out.insert(at, out.pop(rng.randrange(len(out))))
    return out or ["x"]


@pytest.mark.parametrize("sort_lines", [False, True])
def test_same_stable_text_agrees_with_the_whole_texts(sort_lines: bool) -> None:
    rng = random.Random(11)
    agreed = {True: 0, False: 0}
    for _ in range(3000):
        old = raw_lines(rng, rng.randint(1, 12))
        new = edited(rng, old)
        expected = stable("\n".join(old), sort_lines) == stable("\n".join(new), sort_lines)
        assert same_stable_text("\n".join(old), "\n".join(new), sort_lines=sort_lines) is expected, (old, new)
        agreed[expected] += 1
    assert min(agreed.values()) > 300  # both outcomes are exercised


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS + [f"10:{m:02d}" for m in range(60)]), min_size=1, max_size=8),
       st.lists(st.sampled_from(FRAGMENTS + [f"10:{m:02d}" for m in range(60)]), min_size=1, max_size=8),
       st.booleans())
def test_same_stable_text_on_any_lines(old: list[str], new: list[str], sort_lines: bool) -> None:
    expected = stable("\n".join(old), sort_lines) == stable("\n".join(new), sort_lines)
    assert same_stable_text("\n".join(old), "\n".join(new), sort_lines=sort_lines) is expected


def test_include_lines_cannot_be_told_line_by_line() -> None:
    # verbatim lines (include: links) move to the end of the stable text: not told this way
    assert same_stable_text("a\n\x00https://x/", "a\n\x00https://y/") is None


def test_longer_than_only_when_surely() -> None:
    rng = random.Random(3)
    said = 0
    plain = ["Terms of sale", "Kettle", "We ship to every country", "Returns"]
    for _ in range(2000):
        raw = "\n".join(raw_lines(rng, rng.randint(1, 30)) + rng.sample(plain, rng.randint(0, 4)))
        chars = rng.randint(0, 400)
        if stable_text_longer_than(raw, chars):
            said += 1
            assert len(stable(raw)) > chars, raw
    assert said > 100


def test_every_corpus_page_is_read_line_by_line() -> None:
    """The premise: each raw line's stable line depends on that line alone, on every corpus page."""
    require_corpus()
    pages = sorted(CORPUS_PAGES.glob("*/*.html"))
    assert pages
    for path in pages:
        raw = visible_text(path.read_bytes(), like_scrapy=True).raw
        assert stable_lines(raw) == [line for one in raw.split("\n") for line in stable_lines(one)], path.name
        lines = raw.split("\n")
        if len(lines) > 2:  # and a clock put in its middle line is no change of its stable text
            middle = len(lines) // 2
            noisy = [*lines[:middle], lines[middle] + " 10:32", *lines[middle + 1:]]
            assert same_stable_text(raw, "\n".join(noisy)) is (stable(raw) == stable("\n".join(noisy)))


# -- in the comparison: a part keeps its raw text, and a noisy page needs no more than its changed lines


def _judged(html: bytes, old: bytes | None) -> tuple[object, bytes | None]:
    from changewatch.core.comparisons import CompareContext, load_comparisons
    from changewatch.core.observation import Observation
    from changewatch.core.snapshot import Snapshot
    from changewatch.core.verdict import observe

    comparisons = load_comparisons()
    before = Snapshot.decode(old, comparisons) if old is not None else None
    verdict = observe(Observation(key="k", url="https://example.com/", html=html, encoding="utf-8"), before,
                      comparisons, context=CompareContext())
    return verdict, verdict.keep.encode(comparisons) if verdict.keep is not None else None


def _content_data(snapshot: bytes) -> dict[str, object]:
    import json
    import struct

    (size,) = struct.unpack_from(">I", snapshot, 4)
    return dict(json.loads(snapshot[8:8 + size])["content"]["data"])


def test_a_baseline_and_its_noise_are_kept_without_their_stable_text_computed() -> None:
    from changewatch.core.comparisons import Kind

    from ._support import article_html, prose_paragraphs

    paragraphs = prose_paragraphs(3000)
    page = lambda stamp, edit="": article_html([f"Updated {stamp}", *paragraphs[:20], edit, *paragraphs[20:]])  # noqa: E731
    baseline, stored = _judged(page("10:32").encode(), None)
    assert baseline.kind is Kind.BASELINE and stored is not None  # type: ignore[attr-defined]
    data = _content_data(stored)
    assert data["body"] == "zstd" and "raw_hash" not in data  # surely long: kept unread, as its body
    noise, kept = _judged(page("11:47").encode(), stored)
    assert noise.kind is Kind.NOISE and kept is not None  # type: ignore[attr-defined]
    data = _content_data(kept)  # read once the body differed, and kept as its raw text from then on
    assert data["raw"] is True and data["content_hash"] is None  # told from the one line that differs
    edit, _ = _judged(page("12:05", "A sentence added to the terms.").encode(), kept)
    assert edit.kind is Kind.CONTENT  # type: ignore[attr-defined]
    assert "+ A sentence added to the terms." in edit.diff  # type: ignore[attr-defined]


# -- a first text's checks told without its stable text (content.first_text_passes) -------------------

#: the words of block phrases, alone, together, split by volatile fragments, and in other cases
BLOCK_FRAGMENTS = ["Access", "denied", "ACCESS DENIED", "access 10:32 denied", "Just a moment...", "just",
                   "a moment...", "Attention", "Required!", "captcha", "CAPTCHA 2026-11-30", "you have been",
                   "blocked", "403", "Forbidden", "verify you are a human", "Security 5 minutes ago check",
                   "security check", "\u017fecurity check", "captcha"]


def first_page_fine(raw: str) -> bool:
    """What a first page's checks say, told the long way: its stable text not empty, no phrase in it."""
    text = stable(raw)
    return bool(text.strip()) and blocked(text) is None


def test_a_first_text_passes_only_when_its_stable_text_would() -> None:
    rng = random.Random(17)
    told = {True: 0, False: 0}
    words = FRAGMENTS + BLOCK_FRAGMENTS
    for _ in range(6000):
        lines = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 5))) for _ in range(rng.randint(1, 8))]
        raw = "\n".join(lines)
        passes = first_text_passes(raw)
        if passes:
            assert first_page_fine(raw), raw
        told[passes] += 1
    assert min(told.values()) > 200  # both answers are given


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS + BLOCK_FRAGMENTS), min_size=1, max_size=12), st.integers(1, 4))
def test_a_first_text_passes_only_when_its_stable_text_would_on_any_words(words: list[str], lines: int) -> None:
    raw = "\n".join(" ".join(words[i::lines]) for i in range(lines) if words[i::lines])
    if first_text_passes(raw):
        assert first_page_fine(raw), raw


def test_block_words_read_case_as_the_block_pattern_does() -> None:
    """The words are looked for in str.lower()'s text: every character re.IGNORECASE takes for a
    letter, digit or dot of a phrase lowers to it, but for the few first_text_passes refuses."""
    phrase_chars = re.compile("[a-z0-9.]", re.IGNORECASE)
    for code in range(0x110000):
        char = chr(code)
        if 0xD800 <= code <= 0xDFFF or not phrase_chars.fullmatch(char):
            continue
        assert char.lower() in "abcdefghijklmnopqrstuvwxyz0123456789." or char in _CASE_FIXES, hex(code)


def test_every_corpus_page_passes_its_first_checks_as_before() -> None:
    require_corpus()
    for path in sorted(CORPUS_PAGES.glob("*/*.html")):
        raw = visible_text(path.read_bytes(), like_scrapy=True).raw
        if first_text_passes(raw):
            assert first_page_fine(raw), path.name


def test_a_noise_page_is_told_against_the_stored_one_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its checks and its comparison both ask whether the stable texts are the same: the lines
    are compared, and the patterns run over those that differ, once."""
    from changewatch.core.comparisons import content_part, load_comparisons
    from changewatch.core.observation import Observation
    from changewatch.core.verdict import Kind, observe

    page = "<html><body><h1>Kettle</h1>" + "".join(f"<p>Line {i} of the page.</p>" for i in range(40))
    comparisons = load_comparisons()
    first = observe(Observation("k", "https://x.example/", html=page + "<p>Updated 10:32</p>"), None, comparisons)
    assert first.kind is Kind.BASELINE and first.keep is not None
    calls: list[int] = []
    told = content_part.same_stable_text

    def counted(*args: object, **kwargs: object) -> bool | None:
        calls.append(1)
        return told(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(content_part, "same_stable_text", counted)
    again = observe(Observation("k", "https://x.example/", html=page + "<p>Updated 11:47</p>"), first.keep, comparisons)
    assert again.kind is Kind.NOISE and len(calls) == 1
