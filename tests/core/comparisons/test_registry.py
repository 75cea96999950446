"""The comparison registry: built-ins by name, a new comparison as one class, bad entries refused."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from changewatch.core.comparisons import (
    BUILTIN_COMPARISONS,
    CompareContext,
    ComparisonError,
    Difference,
    Kind,
    Status,
    load_comparisons,
)
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.verdict import observe


class WordCount:
    """A comparison a user could add: the number of words of the page's text, reported as a
    field-like change when it moves by more than a tenth."""

    name: ClassVar[str] = "word_count"
    kind: ClassVar[Kind] = Kind.FIELD
    rank: ClassVar[int] = 5
    part_version: ClassVar[int] = 1

    def digest(self, obs: Observation) -> int | None:
        return None if obs.text is None else len(obs.text.split())

    def check(self, old: int | None, new: int) -> str | None:
        return None

    def compare(self, old: int, new: int, context: CompareContext) -> Difference:
        if abs(new - old) > old / 10:
            return Difference(Status.CHANGED, {"changes": {"words": {"old": old, "new": new}}})
        return Difference(Status.NOISE if new != old else Status.NONE)

    def counters(self, part: int) -> Mapping[str, int]:
        return {}

    def encode(self, part: int) -> tuple[Any, bytes | None]:
        return part, None

    def decode(self, data: Any, blob: bytes | None, version: int) -> int | None:
        return data if version == self.part_version and isinstance(data, int) else None


class Nameless(WordCount):
    name: ClassVar[str] = "other"


class Incomplete:
    name: ClassVar[str] = "incomplete"

    def digest(self, obs: Observation) -> None:
        return None


def test_builtins_in_order() -> None:
    assert [c.name for c in load_comparisons()] == ["content", "fields", "entities", "bytes"]
    assert list(BUILTIN_COMPARISONS) == ["content", "fields", "entities", "bytes"]


def test_a_new_comparison_is_one_class_registered_by_name() -> None:
    comparisons = load_comparisons({"word_count": f"{__name__}.WordCount"})
    assert [c.name for c in comparisons] == ["content", "fields", "entities", "bytes", "word_count"]
    page = " ".join(["word"] * 100)
    first = observe(Observation(key="k", url="u", text=page), None, comparisons)
    assert first.kind is Kind.BASELINE and first.counters == {"content/digested": 1, "word_count/digested": 1}
    old = Snapshot.decode(first.keep.encode(comparisons), comparisons)  # type: ignore[union-attr]
    assert old.part("word_count") == 100
    grown = observe(Observation(key="k", url="u", text=page + " more" * 30), old, comparisons)
    # it ranks before the content comparison, so it names the record; content's diff comes along
    assert grown.kind is Kind.FIELD and grown.changes == {"words": {"old": 100, "new": 130}} and grown.diff


def test_none_removes_a_builtin() -> None:
    assert [c.name for c in load_comparisons({"content": None})] == ["fields", "entities", "bytes"]


@pytest.mark.parametrize(("table", "message"), [
    ({"x": "no.such.module.Comparison"}, "cannot import"),
    ({"x": f"{__name__}.NoSuchClass"}, "cannot import"),
    ({"word_count": f"{__name__}.Nameless"}, "registered as"),
    ({"incomplete": f"{__name__}.Incomplete"}, "lacks check, compare, counters, encode, decode"),
])
def test_bad_entries_are_refused_naming_them(table: dict[str, str], message: str) -> None:
    with pytest.raises(ComparisonError, match=message):
        load_comparisons(table)


def test_a_baseline_keeps_no_fingerprint_until_its_text_changes() -> None:
    """simhash is computed only when two texts differ: a baseline is stored without one, and
    the first change computes it from the stored text, with the same distance as ever."""
    from changewatch.core.comparisons import CompareContext
    from changewatch.core.simhash import distance, simhash

    comparisons = load_comparisons({"content": "changewatch.core.comparisons.content.ContentComparison"},
                                   merge=False)
    page = "<html><body><p>First paragraph of a page.</p><p>Second paragraph, price 89.</p></body></html>"
    baseline = observe(Observation(key="k", url="u", html=page), None, comparisons)
    assert baseline.keep is not None
    stored = baseline.keep.encode(comparisons)
    header = Snapshot.decode(stored, comparisons).part("content")
    assert header.known_fingerprint is None  # not computed, not stored

    same = observe(Observation(key="k", url="u", html=page), Snapshot.decode(stored, comparisons), comparisons)
    assert same.kind.value == "none" and same.keep is None

    edited = page.replace("price 89", "price 79")
    changed = observe(Observation(key="k", url="u", html=edited), Snapshot.decode(stored, comparisons), comparisons,
                      context=CompareContext(threshold=None))
    assert changed.kind.value == "content"
    old_text = header.text
    new_text = old_text.replace("89", "79")
    assert "price 89" in old_text and new_text != old_text
    assert changed.members["distance"] == distance(simhash(old_text), simhash(new_text)) > 0
    assert changed.keep is not None
    kept = Snapshot.decode(changed.keep.encode(comparisons), comparisons).part("content")
    assert kept.known_fingerprint == simhash(new_text)  # computed for the comparison: kept


def test_a_body_byte_for_byte_the_stored_one_is_unchanged_without_being_parsed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from changewatch.core.comparisons import content_page, content_part

    comparisons = load_comparisons({"content": "changewatch.core.comparisons.content.ContentComparison"},
                                   merge=False)
    page = b"<html><body><p>A page, price 89.</p><script>var token='a1';</script></body></html>"
    stored = observe(Observation(key="k", url="u", html=page, encoding="utf-8"), None, comparisons).keep
    assert stored is not None
    old = Snapshot.decode(stored.encode(comparisons), comparisons)
    assert old.part("content").body_hash is not None

    parsed: list[object] = []
    real = content_part.visible_text
    monkeypatch.setattr(content_part, "visible_text", lambda *a, **k: parsed.append(a) or real(*a, **k))

    same = observe(Observation(key="k", url="u", html=page, encoding="utf-8"), old, comparisons)
    assert same.kind is Kind.NONE and same.keep is None and parsed == []  # not even parsed

    # other bytes, the same text (a script's token): read, and unchanged by its raw text
    rotated = page.replace(b"a1", b"b2")
    assert observe(Observation(key="k", url="u", html=rotated, encoding="utf-8"), old, comparisons).kind is Kind.NONE
    assert len(parsed) == 1
    # the same bytes read another way (another encoding) or by another normaliser: read again
    assert observe(Observation(key="k", url="u", html=page, encoding="cp1252"), old, comparisons).kind is Kind.NONE
    monkeypatch.setattr(content_page, "NORMALISER_VERSION", content_page.NORMALISER_VERSION + 1)
    assert observe(Observation(key="k", url="u", html=page, encoding="utf-8"), old, comparisons).kind is Kind.NONE
    assert len(parsed) == 3
    # and a real edit is a change
    edited = page.replace(b"89", b"79")
    assert observe(Observation(key="k", url="u", html=edited, encoding="utf-8"), old, comparisons).kind is Kind.CONTENT
