"""normalise / visible_text / normalise_text: regions, sorting, bad input and the properties
that make two fetches of an unchanged page the same string."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changewatch.core.text.lxml_walker import RegionError, check_region
from changewatch.core.text.normalise import normalise, normalise_text, visible_text

from .._support import prose_paragraphs, prose_words

FAST = settings(max_examples=60, deadline=None)


def lines(html: str | bytes, **kwargs: object) -> list[str]:
    return normalise(html, **kwargs).split("\n")  # type: ignore[arg-type]


# --- region and sorting ------------------------------------------------------------------------------

PAGE = """<html><body>
<nav><a href='/'>Home</a> <a href='/news'>News</a></nav>
<main id='content'><h1>Title</h1><p class='lead'>Lead text</p><p>Body text</p></main>
<aside class='ad'>Buy now</aside><footer>Footer 2026</footer>
</body></html>"""


def test_region_restricts_text_to_the_selected_part() -> None:
    assert lines(PAGE, region="main") == ["Title", "Lead text", "Body text"]
    assert lines(PAGE, region="#content p.lead") == ["Lead text"]


def test_region_with_several_matches_keeps_all_in_order() -> None:
    assert lines(PAGE, region="main p, aside") == ["Lead text", "Body text", "Buy now"]


def test_region_matching_nothing_gives_empty_text() -> None:
    assert normalise(PAGE, region="div.nowhere") == ""


@pytest.mark.parametrize("bad", ["p[", "###", "main >", ":nth-child(", "a::", "[x=", "p:unknown-pseudo"])
def test_invalid_region_raises_region_error(bad: str) -> None:
    with pytest.raises(RegionError):
        normalise(PAGE, region=bad)
    with pytest.raises(RegionError):
        check_region(bad)
    assert issubclass(RegionError, ValueError)


def test_valid_region_passes_check() -> None:
    check_region("main article > p.lead")


def test_sort_lines_sorts_stable_lines() -> None:
    html = "<ul><li>cherry</li><li>apple</li><li>banana 3 minutes ago</li></ul>"
    assert lines(html) == ["cherry", "apple", "banana"]
    assert lines(html, sort_lines=True) == ["apple", "banana", "cherry"]
    shuffled = "<ul><li>banana 2 hours ago</li><li>cherry</li><li>apple</li></ul>"
    assert normalise(shuffled, sort_lines=True) == normalise(html, sort_lines=True)
    assert normalise(shuffled) != normalise(html)


def test_normalise_text_matches_page_normalisation() -> None:
    text = "  Updated 3 minutes ago \n\n Price   89.00\nToday only, 10:32 PM"
    result = normalise_text(text)
    assert result.raw == "Updated 3 minutes ago\nPrice 89.00\nToday only, 10:32 PM"
    assert result.stable == "Updated\nPrice 89.00\nToday only, 10:32 PM"
    assert normalise_text("b\na", sort_lines=True).stable == "a\nb"
    assert normalise_text("a\x00b").raw == "ab"


# --- bad input -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("<div><p>unclosed <b>bold<p>next", ["unclosed bold", "next"]),
        ("<p>stray</div></span> closers</p></p>", ["stray closers"]),
        ("<p>hello <b", ["hello"]),
        ("<p>text</p><a href=\"broken>link text</a><p>after</p>", ["text"]),
        ("<<p>>angle</p>>", None),
        ("</html><p>after end</p>", ["after end"]),
        ("plain text without tags", ["plain text without tags"]),
        ("<p>unterminated comment <!-- never closed <p>hidden", ["unterminated comment"]),
    ],
)
def test_malformed_and_truncated_html(html: str, expected: list[str] | None) -> None:
    result = normalise(html)
    assert isinstance(result, str)
    if expected is not None:
        assert result.split("\n")[: len(expected)] == expected


@pytest.mark.parametrize("empty", ["", b"", "   \n\t ", b"\n\n", "<html></html>", "<!-- only a comment -->",
                                   "<script>only()</script>", b"\xef\xbb\xbf"])
def test_empty_input_gives_empty_text(empty: str | bytes) -> None:
    assert normalise(empty) == ""
    assert visible_text(empty).raw == ""


@pytest.mark.parametrize(
    "blob",
    [
        b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nstream\n\x00\x01\x02\xff\nendstream",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00",
        b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01",
        b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(range(256)),
        bytes(range(256)) * 50,
    ],
)
def test_binary_input_does_not_raise(blob: bytes) -> None:
    result = normalise(blob)
    assert isinstance(result, str)
    assert "\x00" not in result


def test_nul_bytes_are_ignored() -> None:
    assert normalise("<p>hel\x00lo</p>\x00<p>wor\x00ld</p>") == "hello\nworld"
    assert normalise(b"<p>hel\x00lo</p><p>world</p>") == "hello\nworld"


def test_lone_surrogates_do_not_raise() -> None:
    result = normalise("<p>before \ud800 after</p>")
    assert result.startswith("before") and result.endswith("after")


def test_five_megabyte_page() -> None:
    paragraphs = prose_paragraphs(words=230_000, per_paragraph=50, seed=3)
    body = "".join(f"<div class='c'><p>{i} {p}</p><script>x({i})</script></div>" for i, p in enumerate(paragraphs))
    html = "<html><body><p>first marker</p>" + body * 3 + "<p>last marker</p></body></html>"
    assert len(html) > 5_000_000
    result = lines(html)
    assert result[0] == "first marker"
    assert result[-1] == "last marker"
    assert len(result) == 2 + 3 * len(paragraphs)


# --- properties ------------------------------------------------------------------------------------------

@FAST
@given(st.text())
def test_never_raises_on_arbitrary_text(text: str) -> None:
    result = normalise(text)
    assert isinstance(result, str)
    assert result == normalise(text)


@FAST
@given(st.binary())
def test_never_raises_on_bytes_decoded_with_replacement(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    assert normalise(text) == normalise(text)


@FAST
@given(st.binary(max_size=2000))
def test_never_raises_on_raw_bytes(data: bytes) -> None:
    assert isinstance(normalise(data), str)
    assert isinstance(normalise(b"<p>" + data + b"</p>", sort_lines=True), str)


_TAGS = ["p", "div", "span", "b", "li", "script", "style", "td", "h2", "br"]


@st.composite
def html_documents(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.one_of(
        st.sampled_from(_TAGS).map(lambda t: f"<{t}>"),
        st.sampled_from(_TAGS).map(lambda t: f"</{t}>"),
        st.text(alphabet=st.characters(codec="utf-8", exclude_characters="<>&"), max_size=30),
        st.sampled_from(["10:32", "2026-11-30", "3 minutes ago", "token=abc123", "89.00", "&amp;", "<!-- x -->"]),
    ), max_size=40))
    return "".join(parts)


@FAST
@given(html_documents(), st.booleans())
def test_same_input_same_output_and_lines_are_clean(html: str, sort_lines: bool) -> None:
    first = normalise(html, sort_lines=sort_lines)
    assert normalise(html, sort_lines=sort_lines) == first
    assert normalise(html.encode("utf-8"), sort_lines=sort_lines) == first
    for line in filter(None, first.split("\n")):
        assert line == line.strip()
        assert "  " not in line and "\t" not in line
    if sort_lines:
        assert first.split("\n") == sorted(first.split("\n"))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from([*prose_words(50, seed=9), "10:32", "89.00", "2026", "ago", "token=x1"]),
                min_size=1, max_size=30), st.integers(1, 5))
def test_normalising_normalised_text_changes_nothing(words: list[str], per_line: int) -> None:
    text = "\n".join(" ".join(words[i : i + per_line]) for i in range(0, len(words), per_line))
    once = normalise_text(text).stable
    assert normalise_text(once).stable == once


_LEFTOVER_TIME = re.compile(r"(?<![\w:.])\d{1,2}:\d{2}(?::\d{2})?\s*(?:am|pm)?(?![\w:])")
_LEFTOVER_ISO_DATE = re.compile(r"(?<![\w-])\d{4}-\d{2}-\d{2}(?![\w-])")
_LEFTOVER_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def test_corpus_stable_text_keeps_its_times_and_dates_and_drops_uuids(corpus_texts: dict[object, str]) -> None:
    found = kept = 0
    for path, text in corpus_texts.items():
        raw = visible_text(path.read_bytes()).raw  # type: ignore[attr-defined]
        assert not _LEFTOVER_UUID.search(text), (path, _LEFTOVER_UUID.search(text))
        for pattern in (_LEFTOVER_TIME, _LEFTOVER_ISO_DATE):
            # no fetch time: every time and date of the page is its content, kept as written
            assert [m.group(0) for m in pattern.finditer(text)] == [m.group(0) for m in pattern.finditer(raw)], path
            kept += len(pattern.findall(text))
        found += len(text)
    assert found > 100_000
    assert kept >= 50  # the pages are full of them


def test_corpus_normalisation_is_deterministic(corpus_texts: dict[object, str]) -> None:
    for path in list(corpus_texts)[:10]:
        assert normalise(path.read_bytes()) == corpus_texts[path]  # type: ignore[attr-defined]
