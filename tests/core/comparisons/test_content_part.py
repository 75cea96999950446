"""A first page that surely has more text than a block page is kept as its body, unread (content
part version 8), and read only when a later body differs from it: what a first crawl saves. These
tests hold it to what a read baseline does: the same verdicts, the same diffs, the same errors."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.comparisons.block_pages import BLOCKED_MAX_CHARS, UNREAD_MIN_CHARS
from changewatch.core.comparisons.content_part import ContentPart
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.text.normalise import visible_text
from changewatch.core.text.textbound import text_chars_at_least
from changewatch.core.verdict import Verdict, observe
from changewatch.runtime.offload import ObserveTask, _judge

from .._support import article_html, corpus_cases, corpus_files, prose_paragraphs

COMPARISONS = load_comparisons()


def _observe(html: bytes, old: bytes | None, *, encoding: str | None = "utf-8", **options: object) -> Verdict:
    before = Snapshot.decode(old, COMPARISONS) if old is not None else None
    obs = Observation(key="k", url="https://example.com/", html=html, encoding=encoding, options=dict(options))
    return observe(obs, before, COMPARISONS, context=CompareContext())


def _stored(verdict: Verdict) -> bytes:
    assert verdict.keep is not None
    return verdict.keep.encode(COMPARISONS)


def _content_data(snapshot: bytes) -> dict[str, object]:
    (size,) = struct.unpack_from(">I", snapshot, 4)
    return dict(json.loads(snapshot[8:8 + size])["content"]["data"])


def _page(*, stamp: str = "3 minutes ago", edit: str = "", token: str = "a1") -> bytes:
    paragraphs = prose_paragraphs(3000)
    body = article_html([f"Updated {stamp}", *paragraphs[:20], edit, *paragraphs[20:]])
    return body.replace("</body>", f"<script>var csrf = '{token}';</script></body>").encode()


def _read_baseline(html: bytes) -> bytes:
    """The same first page stored as a read one is (part version 7's form): its text read first."""
    obs = Observation(key="k", url="https://example.com/", html=html, encoding="utf-8")
    verdict = observe(obs, None, COMPARISONS, context=CompareContext())
    assert verdict.keep is not None
    part = verdict.keep.part("content")
    assert part.visible is not None  # read: stored as its text
    return verdict.keep.encode(COMPARISONS)


def test_a_long_first_page_is_kept_as_its_body_and_not_read_while_it_comes_back_the_same() -> None:
    first = _observe(_page(), None)
    assert first.kind is Kind.BASELINE
    assert first.keep is not None and first.keep.part("content").unread  # never parsed beyond the bound
    assert first.counters.get("content/kept_unread") == 1
    stored = _stored(first)
    data = _content_data(stored)
    assert data["body"] == "zstd" and "raw_hash" not in data and data["encoding"] == "utf-8"
    again = _observe(_page(), stored)
    assert again.kind is Kind.NONE and again.keep is None  # the same body: nothing read, nothing rewritten


def test_an_edit_of_an_unread_baseline_is_reported_as_from_a_read_one() -> None:
    edited = _page(stamp="2 hours ago", edit="A Sentence, added to the TERMS.")
    from_unread = _observe(edited, _stored(_observe(_page(), None)))
    from_read = _observe(edited, _read_baseline(_page()))
    assert from_unread.kind is from_read.kind is Kind.CONTENT
    assert from_unread.diff == from_read.diff and "+ A Sentence, added to the TERMS." in (from_unread.diff or "")
    assert from_unread.distance == from_read.distance


def test_other_bytes_with_the_same_text_read_the_baseline_once_and_keep_it_as_its_text() -> None:
    stored = _stored(_observe(_page(), None))
    verdict = _observe(_page(token="b2", stamp="2 hours ago"), stored)  # a new token, a new relative time: noise
    assert verdict.kind in (Kind.NONE, Kind.NOISE)
    kept = _stored(verdict)  # rewritten as its text: the next differing body does not read it again
    assert _content_data(kept).get("raw") is True and "body" not in _content_data(kept)
    later = _observe(_page(token="c3", stamp="just now"), kept)
    assert later.kind in (Kind.NONE, Kind.NOISE)


def test_the_baselines_compressed_body_is_the_evidence_made_once() -> None:
    html = _page()
    obs = Observation(key="k", url="https://example.com/", html=html, encoding="utf-8")
    judged = _judge(ObserveTask(obs, None, _table(), CompareContext(), html))
    assert judged.kind is Kind.BASELINE and judged.kept is not None and judged.snapshot is not None
    (size,) = struct.unpack_from(">I", judged.snapshot, 4)
    header = json.loads(judged.snapshot[8:8 + size])
    at, length = header["content"]["blob"]
    assert judged.snapshot[8 + size + at:8 + size + at + length] == judged.kept.data


def _table() -> dict[str, str]:
    from changewatch.core.comparisons import BUILTIN_COMPARISONS

    return dict(BUILTIN_COMPARISONS)


@pytest.mark.parametrize("case", ["short", "cp1252", "invalid utf-8", "ignore", "region"])
def test_pages_that_cannot_be_told_long_unread_are_read_as_before(case: str) -> None:
    html, options, encoding = _page(), {}, "utf-8"
    if case == "short":
        html = article_html(prose_paragraphs(200)).encode()
    elif case == "cp1252":
        html, encoding = _page().replace(b"Updated", "Mis \u00e0 jour".encode("cp1252")), "cp1252"
    elif case == "invalid utf-8":
        html = _page().replace(b"Updated", b"Updated \xff\xfe")
    elif case == "ignore":
        options = {"ignore": {"text": ["Updated"]}}
    kwargs: dict[str, object] = dict(options)
    obs_region = "main" if case == "region" else None
    before = None
    obs = Observation(key="k", url="https://example.com/", html=html, encoding=encoding, options=kwargs,
                      region=obs_region)
    verdict = observe(obs, before, COMPARISONS, context=CompareContext())
    assert verdict.kind is Kind.BASELINE, verdict.error
    assert "body" not in _content_data(_stored(verdict))


def _volatile_block_page() -> bytes:
    # Thousands of characters that are not digits, all of them volatile (session tokens): the bound
    # counts them, the stable text has none of them, and what is left is a block page.
    letters = "abcdefghijklmnopqrstuvwxyzabcdefghijkl"
    tokens = "".join(f"<p>session_token={letters}{'xyz' * (i % 5)}</p>" for i in range(300))
    return f"<html><body><h1>Access denied</h1>{tokens}</body></html>".encode()


def test_an_unread_baseline_that_reads_as_a_block_page_is_replaced_by_the_next_good_page_silently() -> None:
    blocked = _volatile_block_page()
    assert text_chars_at_least(blocked, UNREAD_MIN_CHARS)  # what fools the bound
    assert len(visible_text(blocked, like_scrapy=True).stable) <= BLOCKED_MAX_CHARS
    first = _observe(blocked, None)
    assert first.kind is Kind.BASELINE  # not read: the bound said it is long
    good = _observe(_page(), _stored(first))
    assert good.kind is Kind.NONE and not good.error  # no change from a block page to the page
    assert good.counters.get("content/unread_baseline_replaced") == 1
    assert good.counters.get("content/rebaselined") == 1
    then = _observe(_page(edit="An edit after the block."), _stored(good))
    assert then.kind is Kind.CONTENT and "+ An edit after the block." in (then.diff or "")


def test_a_page_read_against_an_unread_block_baseline_is_checked_as_a_first_page() -> None:
    # the stored "baseline" says captcha; a block page saying it too is no longer excused by it
    tokens = "".join(f"<p>session_token=abcdefghijklmnopqrstuvwxyzabcdefghijkl{i % 7 * 'q'}</p>" for i in range(300))
    page = f"<html><body><p>Please solve the captcha</p>{tokens}</body></html>".encode()
    first = _observe(page, None)
    assert first.kind is Kind.BASELINE
    again = _observe(b"<html><body><p>Please solve the captcha to go on.</p></body></html>", _stored(first))
    assert again.kind is Kind.ERROR and (again.error or "").startswith("blocked:")


def test_learned_and_calibrated_state_survive_an_unread_baseline() -> None:
    stored = _stored(_observe(_page(), None))
    obs = Observation(key="k", url="https://example.com/", html=_page(stamp="2 hours ago", token="zz"),
                      encoding="utf-8", options={"calibration": True})
    verdict = observe(obs, Snapshot.decode(stored, COMPARISONS), COMPARISONS,
                      context=CompareContext(options={"calibration": True}))
    assert verdict.kind is Kind.NONE
    if verdict.keep is not None:
        part = verdict.keep.part("content")
        assert isinstance(part, ContentPart)
        kept = _stored(verdict)
        assert Snapshot.decode(kept, COMPARISONS).part("content") is not None


@pytest.mark.parametrize("markup", [
    b"<body>" + b"x" * 10_000_000,  # 10 MB of one line
    b"<body>" + b"<div>" * 100_000 + b"text" + b"</div>" * 100_000,  # nested too deeply for lexbor
    b"<body><script>" + b"var a = '<p>not text</p>';" * 40_000 + b"</script></body>",  # all script
    b"<body>" + b"<p>Short.</p>" * 200_000,  # 200,000 short paragraphs
    bytes(range(256)) * 4000,  # binary
    b"<body>" + b"<<<<" * 250_000,
])
def test_the_bound_survives_bad_input(markup: bytes) -> None:
    assert text_chars_at_least(markup, UNREAD_MIN_CHARS) in (True, False)


def test_the_bound_is_from_below_on_every_corpus_page() -> None:
    for path in corpus_files():
        html = Path(path).read_bytes()
        if text_chars_at_least(html, UNREAD_MIN_CHARS):
            stable = visible_text(html, like_scrapy=True).stable
            assert len(stable) > BLOCKED_MAX_CHARS, Path(path).name


@pytest.mark.parametrize("path", corpus_cases("article", 16), ids=lambda p: Path(p).name if p else "no-corpus")
def test_corpus_pages_compare_the_same_from_an_unread_baseline(path: Path) -> None:
    html = Path(path).read_bytes()
    first = _observe(html, None)
    assert first.kind is Kind.BASELINE
    words = [w for w in visible_text(html, like_scrapy=True).raw.split() if len(w) > 6 and w.isalpha()]
    word = next((w for w in words if html.count(w.encode()) == 1), None)
    if word is None:
        pytest.skip(f"{Path(path).name}: no word of its text found once in its HTML to edit")
    edited = html.replace(word.encode(), b"Zyxwvutsr")
    from_unread = _observe(edited, _stored(first))
    from_read = _observe(edited, _read_baseline(html))
    assert from_unread.kind is from_read.kind
    assert from_unread.diff == from_read.diff and from_unread.distance == from_read.distance


def _not_surely_long_pages() -> list[bytes]:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
    try:
        from bench_crawl import page_template  # the synthetic pages: most are not surely long
    finally:
        sys.path.pop(0)
    return [page_template(i).encode() for i in range(40)]


def test_a_page_not_surely_long_is_read_from_the_same_parse_as_the_normaliser_reads_it() -> None:
    from changewatch.core.text.decoding import utf8_markup
    from changewatch.core.text.textbound import first_page_read

    pages = _not_surely_long_pages() + [Path(p).read_bytes() for p in corpus_files()]
    read = 0
    for html in pages:
        markup, bad = utf8_markup(html, "utf-8", like_scrapy=True)
        if bad is not None:
            continue
        for sort_lines in (False, True):
            long, visible = first_page_read(markup, UNREAD_MIN_CHARS, sort_lines)
            if long or visible is None:
                continue
            expected = visible_text(html, sort_lines=sort_lines, encoding="utf-8", like_scrapy=True)
            assert (visible.raw, visible.stable) == (expected.raw, expected.stable)
            read += 1
    assert read >= 40  # the synthetic pages at least, both ways


def test_a_first_page_not_surely_long_is_parsed_once() -> None:
    from unittest import mock

    from changewatch.core.text import lexbor_walker

    html = _not_surely_long_pages()[1]
    with mock.patch.object(lexbor_walker, "LexborHTMLParser", wraps=lexbor_walker.LexborHTMLParser) as parser:
        verdict = _observe(html, None)
    assert verdict.kind is Kind.BASELINE
    assert parser.call_count == 1


def _damaged(snapshot: bytes) -> bytes:
    """*snapshot* with 16 bytes of its content blob flipped, a third of the way in."""
    (size,) = struct.unpack_from(">I", snapshot, 4)
    at, length = json.loads(snapshot[8:8 + size])["content"]["blob"]
    damaged = bytearray(snapshot)
    start = 8 + size + at + length // 3
    damaged[start:start + 16] = bytes(b ^ 0xFF for b in damaged[start:start + 16])
    return bytes(damaged)


@pytest.mark.parametrize("stored", ["kept unread", "read"])
def test_a_damaged_blob_starts_the_key_again_silently_instead_of_failing_or_alerting(stored: str) -> None:
    """A blob is decompressed only when its text is needed, so damage shows then, not when the
    snapshot is decoded. It failed the page on every run (an `unprocessable` error, the baseline
    never replaced); a kept-unread body, whose zstd frames had no checksum, decompressed to other
    bytes and was reported as a content change. Now: a silent baseline, counted."""
    html = _page()
    obs = Observation(key="k", url="https://example.com/", html=html, encoding="utf-8")
    first = _judge(ObserveTask(obs, None, _table(), CompareContext(), html)).snapshot \
        if stored == "kept unread" else _read_baseline(html)
    assert first is not None
    assert _content_data(first).get("body") == ("zstd" if stored == "kept unread" else None)
    edited = _page(edit="A sentence that was not there before.")
    again = Observation(key="k", url="https://example.com/", html=edited, encoding="utf-8")
    judged = _judge(ObserveTask(again, _damaged(first), _table(), CompareContext(), edited))
    assert (judged.kind, judged.error) == (Kind.BASELINE, None)
    assert judged.counters["store/snapshot_unreadable"] == 1
    # the new baseline is whole: the next edit is reported against it
    later = _page(edit="A sentence that was not there before. And another one.")
    obs3 = Observation(key="k", url="https://example.com/", html=later, encoding="utf-8")
    assert _judge(ObserveTask(obs3, judged.snapshot, _table(), CompareContext(), later)).kind is Kind.CONTENT


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["word", " ", "\n", "\u3000", "\xa0", "12", "é", "\u2028", "x" * 50, "\t\t"]),
                max_size=400).map("".join), st.integers(0, 3000))
def test_the_count_goes_chunk_by_chunk_to_the_same_answer(text: str, chars: int) -> None:
    from changewatch.core.text import textbound

    joined = "".join(text.split())
    expected = len(joined) - sum(map(joined.count, "0123456789")) >= chars
    for chunk in (3, 64, textbound._CHUNK):  # chunks that cut words, spaces and digits apart
        textbound._CHUNK, saved = chunk, textbound._CHUNK
        try:
            assert textbound._counted_at_least(text, chars) is expected
        finally:
            textbound._CHUNK = saved
