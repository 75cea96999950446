"""Undecodable bytes: windows-1252 bytes served as UTF-8 read apart, each a
character of its own, wherever a page is decoded; a valid page reads as ever."""

from __future__ import annotations

import pytest

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.text import charset
from changewatch.core.text.decoding import decode_page_counted
from changewatch.core.text.normalise import visible_text
from changewatch.core.verdict import observe

from .._support import CORPUS_PAGES, require_corpus

COMPARISONS = load_comparisons()
STAT = "charset/undecodable_pages"


def mislabelled(price: str, extra: str = "") -> bytes:
    """A windows-1252 page, to be served as UTF-8."""
    return f"<html><body><h1>Kettle</h1><p>Price: 5 {price}</p>{extra}</body></html>".encode("cp1252")


def test_every_undecodable_byte_is_a_character_of_its_own() -> None:
    texts = {b: charset.decode(bytes([b]), "utf-8")[0] for b in range(0x80, 0x100)}
    assert len(set(texts.values())) == 128 and all(len(t) == 1 for t in texts.values())
    text, bad = charset.decode(b"5 \x80, 5 \xa3, caf\xc3\xa9", "utf-8")
    assert bad == 2 and text.endswith("café") and charset.readable(text) == "5 \\x80, 5 \\xa3, café"
    # what lxml, lexbor, the store and a JSON export need: valid UTF-8, no lone surrogates
    assert text.encode("utf-8").decode("utf-8") == text


def test_gb18030_keeps_the_euro_sign_of_the_encoding_standard() -> None:
    assert charset.decode(b"\x80 5", "gb18030") == ("€ 5", 0)


@pytest.mark.parametrize("region", [None, "p"])
def test_a_price_change_between_two_undecodable_bytes_is_seen(region: str | None) -> None:
    before, after = (visible_text(mislabelled(p), region, encoding="utf-8", like_scrapy=True) for p in "€£")
    assert before.stable != after.stable
    assert before.undecodable == after.undecodable == 1
    assert "\ufffd" not in before.raw


def test_a_page_too_deep_for_lexbor_reads_its_bytes_apart_too() -> None:
    deep = b"<div>" * 5000
    before, after = (visible_text(deep + mislabelled(p), encoding="utf-8") for p in "€£")
    assert before.raw != after.raw and before.undecodable == 1


def test_a_declared_charset_without_some_bytes_reads_them_apart() -> None:
    # 0x81 and 0x8d are not windows-1252 characters
    a, b = (visible_text(b"<p>a " + byte + b" \xe9</p>", encoding="cp1252") for byte in (b"\x81", b"\x8d"))
    assert a.raw != b.raw and a.raw.endswith("é") and a.undecodable == 1


def test_a_valid_page_reads_as_ever_even_when_it_writes_u_fffd_itself() -> None:
    body = "<p>Price: 5 \ufffd, café</p>".encode()
    visible = visible_text(body, encoding="utf-8")
    assert visible.raw == "Price: 5 \ufffd, café" and visible.undecodable == 0
    assert decode_page_counted(body, "utf-8") == (body.decode(), 0)


def test_a_bom_decides_the_encoding_of_what_did_not_decode() -> None:
    body = b"\xef\xbb\xbf<p>caf\xc3\xa9 \x80</p>"
    text, bad = decode_page_counted(body, "cp1252")
    assert bad == 1 and text == "<p>café \U0010dc80</p>"


def test_utf_16_without_a_bom_reads_as_w3lib_reads_it() -> None:
    from changewatch.core.text.decoding import escape_undecodable

    body = "<p>5 €</p>".encode("utf-16-be") + b"\xd8"  # a lone high byte of a surrogate at the end
    text, bad = escape_undecodable(body, "utf-16", body.decode("utf-16-be", "replace"))
    assert text.startswith("<p>5 €</p>") and bad == 1


def test_corpus_pages_have_undecodable_characters_only_where_bytes_did_not_decode() -> None:
    require_corpus()
    for path in sorted(p for p in CORPUS_PAGES.rglob("*") if p.is_file()):
        visible = visible_text(path.read_bytes(), like_scrapy=True)
        assert bool(charset.UNDECODABLE.search(visible.raw)) == bool(visible.undecodable), path


def judge(body: bytes, old: Snapshot | None, **kwargs: object) -> tuple[Kind, Snapshot | None, dict[str, int]]:
    obs = Observation(key="k", url="https://shop.example/", html=body, encoding="utf-8", **kwargs)  # type: ignore[arg-type]
    verdict = observe(obs, old, COMPARISONS, context=CompareContext())
    return verdict.kind, verdict.keep, verdict.counters


def reread(snapshot: Snapshot | None) -> Snapshot:
    assert snapshot is not None
    return Snapshot.decode(snapshot.encode(COMPARISONS), COMPARISONS)


def test_the_change_is_a_content_record_with_a_readable_diff_and_the_page_is_counted() -> None:
    kind, first, counters = judge(mislabelled("€"), None)
    assert kind is Kind.BASELINE and counters[STAT] == 1
    obs = Observation(key="k", url="u", html=mislabelled("£"), encoding="utf-8")
    verdict = observe(obs, reread(first), COMPARISONS, context=CompareContext())
    assert verdict.kind is Kind.CONTENT and verdict.counters[STAT] == 1
    assert verdict.diff == "  Kettle\n- Price: 5 \\x80\n+ Price: 5 \\xa3"


def test_a_page_not_read_again_is_counted_as_it_was_when_read() -> None:
    _, first, _ = judge(mislabelled("€"), None)
    kind, keep, counters = judge(mislabelled("€"), reread(first))
    assert kind is Kind.NONE and keep is None and counters[STAT] == 1
    _, valid, _ = judge("<p>5 €</p>".encode(), None)
    assert STAT not in judge("<p>5 €</p>".encode(), reread(valid))[2]


def test_a_mostly_undecodable_page_is_still_an_error() -> None:
    body = b"<html><body><p>" + b"\x80\xbf\xc0\xfe\xff terms " * 200 + b"</p></body></html>"
    for kwargs in ({}, {"region": "p"}):
        verdict = observe(Observation(key="k", url="u", html=body, encoding="utf-8", **kwargs), None,  # type: ignore[arg-type]
                          COMPARISONS)
        assert verdict.kind is Kind.ERROR and verdict.error is not None
        assert verdict.error.startswith("unsupported: undecodable text (1000 of ")
        assert "not valid utf-8" in verdict.error
    # bad bytes here and there on a page of words: a page (more than 16, under a tenth of it)
    assert judge(mislabelled("€", "<p>déjà vu, a phrase English borrowed from French</p>" * 20), None)[0] \
        is Kind.BASELINE
