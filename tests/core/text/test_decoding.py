"""Decoding a page's bytes: declared, undeclared and mislabelled encodings."""

from __future__ import annotations

import pytest

from changewatch.core.text.normalise import normalise


def lines(html: str | bytes, **kwargs: object) -> list[str]:
    return normalise(html, **kwargs).split("\n")  # type: ignore[arg-type]


def test_undeclared_latin1_bytes_keep_their_accented_letters() -> None:
    # Decoded as the crawl decodes them (Scrapy auto-detects when nothing is declared):
    # a change of one accented letter must stay visible.
    a = normalise("<p>Café crème brûlée</p>".encode("latin-1"))
    b = normalise("<p>Cafè crème brûlée</p>".encode("latin-1"))
    assert a == "Café crème brûlée"
    assert a != b


@pytest.mark.parametrize(
    ("declaration", "encoding", "text"),
    [
        ("<meta charset='iso-8859-1'>", "latin-1", "café crème"),
        ("<meta http-equiv='Content-Type' content='text/html; charset=windows-1252'>", "cp1252",
         "prix 5 € \u2013 soldes"),
        ("<meta charset='shift_jis'>", "shift_jis", "日本語のテキスト"),
        ("<meta charset='utf-8'>", "utf-8", "ünïcödé ✓"),
        ("", "utf-8", "ünïcödé ✓"),
    ],
)
def test_declared_encodings_decoded(declaration: str, encoding: str, text: str) -> None:
    html = f"<html><head>{declaration}</head><body><p>{text}</p></body></html>".encode(encoding)
    assert normalise(html) == text


def test_mislabelled_encoding_does_not_raise_and_keeps_ascii_text() -> None:
    html = "<meta charset='utf-8'><p>hello café world</p><p>next line</p>".encode("latin-1")
    result = lines(html)
    assert result[0].startswith("hello caf") and result[0].endswith(" world")
    assert result[1] == "next line"


def test_invalid_utf8_sequences_do_not_raise() -> None:
    html = b"<p>good \xff\xfe\xc3( bad \xed\xa0\x80 surrogate</p><p>after</p>"
    result = lines(html)
    assert result[0].startswith("good") and result[0].endswith("surrogate")
    assert result[1] == "after"
