"""The content comparison keeps a part's raw text, and tells a noisy page from the lines that
changed, once."""

from __future__ import annotations

import pytest

from .._support import article_html, prose_paragraphs


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


    paragraphs = prose_paragraphs(3000)
    page = lambda stamp, edit="": article_html([f"Updated {stamp}", *paragraphs[:20], edit, *paragraphs[20:]])  # noqa: E731
    baseline, stored = _judged(page("3 minutes ago").encode(), None)
    assert baseline.kind is Kind.BASELINE and stored is not None  # type: ignore[attr-defined]
    data = _content_data(stored)
    assert data["body"] == "zstd" and "raw_hash" not in data  # surely long: kept unread, as its body
    noise, kept = _judged(page("2 hours ago").encode(), stored)
    assert noise.kind is Kind.NOISE and kept is not None  # type: ignore[attr-defined]
    data = _content_data(kept)  # read once the body differed, and kept as its raw text from then on
    assert data["raw"] is True and data["content_hash"] is None  # told from the one line that differs
    edit, _ = _judged(page("just now", "A sentence added to the terms.").encode(), kept)
    assert edit.kind is Kind.CONTENT  # type: ignore[attr-defined]
    assert "+ A sentence added to the terms." in edit.diff  # type: ignore[attr-defined]


def test_a_noise_page_is_told_against_the_stored_one_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its checks and its comparison both ask whether the stable texts are the same: the lines
    are compared, and the patterns run over those that differ, once."""
    from changewatch.core.comparisons import content_part, load_comparisons
    from changewatch.core.observation import Observation
    from changewatch.core.verdict import Kind, observe

    page = "<html><body><h1>Kettle</h1>" + "".join(f"<p>Line {i} of the page.</p>" for i in range(40))
    comparisons = load_comparisons()
    first = observe(Observation("k", "https://x.example/", html=page + "<p>Updated 3 minutes ago</p>"), None, comparisons)
    assert first.kind is Kind.BASELINE and first.keep is not None
    calls: list[int] = []
    told = content_part.same_stable_text

    def counted(*args: object, **kwargs: object) -> bool | None:
        calls.append(1)
        return told(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(content_part, "same_stable_text", counted)
    again = observe(Observation("k", "https://x.example/", html=page + "<p>Updated 2 hours ago</p>"), first.keep, comparisons)
    assert again.kind is Kind.NOISE and len(calls) == 1
