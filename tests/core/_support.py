"""Helpers shared by the core tests: generated prose and the real-page corpus (read in place,
never copied into the repository)."""

from __future__ import annotations

import csv
import os
import random
from pathlib import Path

import pytest

# ../shared/corpus beside the checkout (where CI puts it too), unless CHANGEWATCH_CORPUS says otherwise
_DEFAULT_CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "pages"
CORPUS_PAGES = Path(os.environ.get("CHANGEWATCH_CORPUS", str(_DEFAULT_CORPUS)))
CORPUS_SKIP_REASON = (
    f"real-page corpus not found at {CORPUS_PAGES} (set CHANGEWATCH_CORPUS to its pages/ folder)"
)

_CONSONANTS = "bcdfghjklprstvz"
_VOWELS = "aeiou"


def _pseudo_word(rng: random.Random) -> str:
    # Letters only, at least four of them: no digit for the id/date patterns to catch and no
    # three-letter word that could be a weekday or month abbreviation.
    return "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(rng.randint(2, 4)))


def vocabulary(size: int = 2000, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < size:
        words.add(_pseudo_word(rng))
    return sorted(words)


def prose_words(count: int, seed: int = 1) -> list[str]:
    """*count* words of deterministic pseudo-prose."""
    rng = random.Random(seed)
    vocab = vocabulary()
    return [rng.choice(vocab) for _ in range(count)]


def prose_paragraphs(words: int = 3000, per_paragraph: int = 60, seed: int = 1) -> list[str]:
    flat = prose_words(words, seed)
    return [" ".join(flat[i : i + per_paragraph]) for i in range(0, len(flat), per_paragraph)]


def article_html(paragraphs: list[str], *, header: str = "", footer: str = "") -> str:
    body = "\n".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        "<!doctype html><html><head><title>Generated article</title>"
        "<script>var tracker = 'abc';</script></head><body>"
        f"<header>{header}</header><main><article>{body}</article></main><footer>{footer}</footer>"
        "</body></html>"
    )


def require_corpus() -> Path:
    if not CORPUS_PAGES.is_dir():
        pytest.skip(CORPUS_SKIP_REASON)
    return CORPUS_PAGES


def corpus_files(kind: str | None = None) -> list[Path]:
    """Pages of the corpus (``kind``: article, structured or listing), from its MANIFEST.tsv
    when there is one, else by globbing."""
    root = require_corpus()
    manifest = next((m for m in (root / "MANIFEST.tsv", root.parent / "MANIFEST.tsv") if m.is_file()), None)
    files: list[Path] = []
    if manifest is not None:
        with manifest.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                path = manifest.parent / row["file"]
                if path.is_file() and (kind is None or row.get("kind") == kind):
                    files.append(path)
    if not files:
        pattern = {"article": "articles", "structured": "structured", "listing": "listings"}.get(kind or "", "*")
        files = sorted(root.glob(f"{pattern}/*.html"))
    if not files:
        pytest.skip(f"no {kind or ''} pages in the corpus at {root}")
    return sorted(files)
