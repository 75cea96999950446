"""A first text's checks told without its stable text (block_pages.first_text_passes): it passes
only when its stable text would, empty or a block page's."""

from __future__ import annotations

import random
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from changewatch.core.comparisons.block_pages import _CASE_FIXES, blocked, first_text_passes
from changewatch.core.text.normalise import visible_text
from changewatch.core.text.visible import VisibleText

from .._support import CORPUS_PAGES, FRAGMENTS, require_corpus


def stable(raw: str) -> str:
    return VisibleText(raw).stable


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
