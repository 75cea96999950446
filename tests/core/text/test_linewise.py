"""The stable text told line by line (core/text/linewise.py) is the stable text told whole: the
patterns never match across a line end, two raw texts that share lines have the same stable lines
there, and what is decided from the lines not shared is what comparing the whole texts decides."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changewatch.core.text.linewise import same_stable_text, stable_text_longer_than
from changewatch.core.text.normalise import visible_text
from changewatch.core.text.visible import VisibleText
from changewatch.core.text.volatile import stable_lines

from .._support import CORPUS_PAGES, FRAGMENTS, require_corpus


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
    assert min(agreed.values()) > 100  # both outcomes are exercised


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
