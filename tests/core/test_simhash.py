"""simhash: the vectorised fingerprint equals the reference loop, is stable and behaves like simhash."""

from __future__ import annotations

import itertools
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changewatch.core import distance, simhash, simhash_reference

from ._support import prose_words

FAST = settings(max_examples=80, deadline=None)

# Words as a page could hold them: any characters, including lone surrogates (which the word
# hash must encode without raising), astral characters and combining marks.
any_char = st.one_of(st.characters(), st.characters(categories=["Cs"]), st.sampled_from("é中😀\u0301\u200b"))
words = st.lists(st.text(alphabet=any_char, min_size=1, max_size=12), max_size=60)


@FAST
@given(words)
def test_simhash_equals_reference_on_word_lists(ws: list[str]) -> None:
    text = " ".join(ws)
    assert simhash(text) == simhash_reference(text)


@FAST
@given(st.text(alphabet=any_char, max_size=300))
def test_simhash_equals_reference_on_arbitrary_text(text: str) -> None:
    assert simhash(text) == simhash_reference(text)


@FAST
@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=200))
def test_simhash_equals_reference_with_many_repeated_words(ws: list[str]) -> None:
    # Few distinct words, many grams: exercises the per-word hash table and ties in bit counts.
    text = " ".join(ws)
    assert simhash(text) == simhash_reference(text)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5, 64, 1000, 20_000])
def test_simhash_equals_reference_on_generated_text(count: int) -> None:
    text = " ".join(prose_words(count, seed=count))
    assert simhash(text) == simhash_reference(text)


def test_simhash_equals_reference_on_corpus(corpus_texts: dict[Path, str]) -> None:
    for path, text in itertools.islice(corpus_texts.items(), 0, None, 4):
        assert simhash(text) == simhash_reference(text), path


def _independent_simhash(text: str) -> int:
    """The fingerprint format written out from its definition, so that a change to it (which
    would turn every stored fingerprint into a false alert) cannot pass unnoticed: a word's hash
    is the SplitMix64 finaliser of (its UTF-8 bytes, each plus one, as the digits of a number in
    base 0x100000001B3 modulo 2**64) XOR its byte length; a gram hash XORs its words rotated
    left by 0, 21 and 42 bits, XORs in the gram length and applies the finaliser; bit i is set
    when more than half of the grams have it."""
    mask = 2**64 - 1

    def word(w: str) -> int:
        data = w.encode("utf-8", "surrogatepass")
        value = sum((byte + 1) * 0x100000001B3 ** (len(data) - 1 - j) for j, byte in enumerate(data)) & mask
        return finalise(value ^ len(data))

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (64 - r))) & mask if r else x

    def finalise(z: int) -> int:
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    ws = text.split()
    n = min(3, len(ws))
    grams = [ws[i : i + n] for i in range(len(ws) - n + 1)] if n else []
    hashes = []
    for gram in grams:
        z = 0
        for i, w in enumerate(gram):
            z ^= rotl(word(w), (0, 21, 42)[i])
        hashes.append(finalise(z ^ len(gram)))
    return sum(1 << bit for bit in range(64) if 2 * sum((h >> bit) & 1 for h in hashes) > len(hashes))


@pytest.mark.parametrize("count", [0, 1, 2, 3, 4, 50, 400])
def test_fingerprint_format_is_unchanged(count: int) -> None:
    text = " ".join(prose_words(count, seed=count + 1))
    assert simhash(text) == _independent_simhash(text)
    assert simhash("café 中文 😀 \ud800") == _independent_simhash("café 中文 😀 \ud800")


@FAST
@given(st.text(max_size=200))
def test_fingerprint_is_a_64_bit_unsigned_int(text: str) -> None:
    value = simhash(text)
    assert isinstance(value, int)
    assert 0 <= value < 2**64


@pytest.mark.parametrize("empty", ["", " ", "\n\t  \n", "\u3000"])
def test_empty_text_is_zero(empty: str) -> None:
    assert simhash(empty) == 0
    assert simhash_reference(empty) == 0


def test_whitespace_between_words_does_not_matter() -> None:
    assert simhash("alpha beta gamma delta") == simhash("  alpha\nbeta\t\tgamma   delta\n")


def test_word_order_matters() -> None:
    ws = prose_words(40, seed=2)
    assert simhash(" ".join(ws)) != simhash(" ".join(reversed(ws)))


def test_different_short_texts_differ() -> None:
    values = {simhash(w) for w in prose_words(200, seed=3)}
    # 200 draws from a vocabulary, some repeated; distinct words must give distinct values.
    assert len(values) == len(set(prose_words(200, seed=3)))


_CHILD = """
import json, sys
from changewatch.core import simhash
print(json.dumps([simhash(t) for t in json.load(sys.stdin)]))
"""


@pytest.mark.parametrize("seed", ["0", "1", "4242", "random"])
def test_stable_across_processes_and_hash_seeds(seed: str) -> None:
    texts = [" ".join(prose_words(n, seed=n)) for n in (1, 3, 10, 500)] + ["café naïve 中文 😀 words", ""]
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(texts), env=env,
                         capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(out.stdout) == [simhash(t) for t in texts]


# --- similarity ---------------------------------------------------------------------------------------

def _one_word_changed(ws: list[str], rng: random.Random) -> list[str]:
    changed = list(ws)
    changed[rng.randrange(len(changed))] = "replacementword"
    return changed


def test_near_duplicates_of_generated_text_are_within_a_few_bits() -> None:
    rng = random.Random(11)
    base = prose_words(3000, seed=4)
    fp = simhash(" ".join(base))
    dists = [distance(fp, simhash(" ".join(_one_word_changed(base, rng)))) for _ in range(30)]
    assert max(dists) <= 6


def test_near_duplicates_of_a_corpus_article_are_within_a_few_bits(long_article: tuple[Path, bytes, str]) -> None:
    _path, _html, text = long_article
    base = text.split()
    assert len(base) > 2000
    rng = random.Random(12)
    fp = simhash(text)
    for _ in range(20):
        assert distance(fp, simhash(" ".join(_one_word_changed(base, rng)))) <= 6


def test_unrelated_generated_texts_are_about_32_bits_apart() -> None:
    fps = [simhash(" ".join(prose_words(400, seed=100 + i))) for i in range(16)]
    dists = [distance(a, b) for a, b in itertools.combinations(fps, 2)]
    assert 24 <= statistics.mean(dists) <= 40
    assert min(dists) > 6


def test_unrelated_corpus_pages_are_about_32_bits_apart(corpus_texts: dict[Path, str]) -> None:
    fps = {p: simhash(t) for p, t in corpus_texts.items() if len(t.split()) >= 200}
    assert len(fps) >= 10
    dists = [distance(fps[a], fps[b]) for a, b in itertools.combinations(sorted(fps), 2)]
    assert 20 <= statistics.mean(dists) <= 44


def test_more_edits_move_the_fingerprint_further_on_average() -> None:
    base = prose_words(2000, seed=6)
    fp = simhash(" ".join(base))
    rng = random.Random(13)

    def mean_distance(edits: int) -> float:
        total = 0
        for _ in range(10):
            changed = list(base)
            for i in rng.sample(range(len(base)), edits):
                changed[i] = "replacementword"
            total += distance(fp, simhash(" ".join(changed)))
        return total / 10

    assert mean_distance(1) < mean_distance(100) < mean_distance(1000)


# --- distance -------------------------------------------------------------------------------------------

def test_distance_basics() -> None:
    assert distance(0, 0) == 0
    assert distance(0, 2**64 - 1) == 64
    assert distance(0b1011, 0b0001) == 2
    assert distance(1 << 63, 0) == 1


u64 = st.integers(min_value=0, max_value=2**64 - 1)


@FAST
@given(u64, u64, u64)
def test_distance_is_a_metric(a: int, b: int, c: int) -> None:
    assert distance(a, a) == 0
    assert distance(a, b) == distance(b, a) == bin(a ^ b).count("1")
    assert 0 <= distance(a, b) <= 64
    assert distance(a, c) <= distance(a, b) + distance(b, c)


def test_every_whitespace_character_separates_words_as_str_split_does() -> None:
    for code in range(0x110000):
        char = chr(code)
        if char.isspace():
            text = f"alpha{char}beta gamma é"
            assert simhash(text) == simhash_reference(text), hex(code)
