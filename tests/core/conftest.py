from __future__ import annotations

from pathlib import Path

import pytest

from changewatch.core import normalise

from ._support import corpus_files


@pytest.fixture(scope="session")
def corpus_texts() -> dict[Path, str]:
    """Normalised text of every corpus page (skips when the corpus is absent)."""
    return {path: normalise(path.read_bytes()) for path in corpus_files()}


@pytest.fixture(scope="session")
def long_article(corpus_texts: dict[Path, str]) -> tuple[Path, bytes, str]:
    """The corpus article with the most words: (path, html, normalised text)."""
    articles = corpus_files("article")
    path = max(articles, key=lambda p: len(corpus_texts[p].split()))
    return path, path.read_bytes(), corpus_texts[path]
