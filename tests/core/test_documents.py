"""Documents that are not HTML pages: JSON paths and pointers, the canonical
JSON text, text files kept line by line, PDF text, and files compared by hash and size."""

from __future__ import annotations

import json
from typing import Any

import pytest

from changewatch.core.comparisons import Kind, load_comparisons
from changewatch.core.comparisons.base import Unobservable
from changewatch.core.documents import (
    JSON_MAX_BYTES,
    PDF_MAX_PAGES,
    decode_text,
    json_document,
    json_extraction,
    pdf_text,
    read_document,
)
from changewatch.core.json_paths import MISSING, canonical_json, check_path, resolve, scalar
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.verdict import Verdict, observe
from tests.changes import field

from ..pdf import encrypted_pdf, minimal_pdf

COMPARISONS = load_comparisons()
PRODUCT = {"product": {"name": "Kettle 2000", "price": 89.0, "a.b": True, "tags": ["x", "y"]},
           "items": [{"id": 7, "name": "seven"}, {"id": 8, "name": "eight"}], "a/b": {"~c": 1}, "null": None}


def document(body: bytes, content_type: str, **options: Any) -> Observation:
    return Observation(key="k", url="https://api.example/p", body=body, options={"content_type": content_type,
                                                                                **options})


def runs(*observations: Observation) -> list[Verdict]:
    """The verdicts of *observations* in turn, each compared with the last good snapshot."""
    old: Snapshot | None = None
    verdicts = []
    for obs in observations:
        verdict = observe(obs, old, COMPARISONS)
        if verdict.keep is not None:  # through the store's encoding, as a crawl keeps it
            old = Snapshot.decode(verdict.keep.encode(COMPARISONS), COMPARISONS)
        verdicts.append(verdict)
    return verdicts


# -- paths ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "value"), [
    ("product.price", 89.0), ("items.0.id", 7), ("items.1.name", "eight"), ("/items/0/id", 7),
    ("/product/a.b", True), ("/a~1b/~0c", 1), ("null", None), ("product.tags", ["x", "y"]),
])
def test_a_path_finds_its_value(path: str, value: Any) -> None:
    assert resolve(PRODUCT, path) == value


@pytest.mark.parametrize("path", ["product.cost", "items.2.id", "items.01.id", "items.-1.id", "product.a.b",
                                  "/items/x", "product.price.amount", "/product/price/0"])
def test_a_path_that_matches_nothing_is_missing_not_none(path: str) -> None:
    assert resolve(PRODUCT, path) is MISSING


@pytest.mark.parametrize("path", ["", "a..b", ".a", "a.", "/a~2b", "/~"])
def test_invalid_paths_are_refused(path: str) -> None:
    with pytest.raises(ValueError):
        check_path(path)


def test_containers_are_fields_as_canonical_json() -> None:
    assert scalar({"b": [1, "é"], "a": None}) == '{"a":null,"b":[1,"é"]}'
    assert scalar(3) == 3 and scalar(None) is None


def test_fields_are_named_as_written_with_their_types_and_every_missing_path_is_named() -> None:
    read = json_extraction(PRODUCT, {"fields": ["product.price", "/items/0/id"], "entities": None})
    assert read.fields == {"product.price": 89.0, "/items/0/id": 7} and read.entities is None
    assert read.types == {"product.price": "number", "/items/0/id": "number"} and read.missing == {}
    partly = json_extraction(PRODUCT, {"fields": ["product.price", "product.cost", "/items/5"]})
    assert partly.fields == {"product.price": 89.0}
    assert partly.missing == {"product.cost": "json field 'product.cost' matched nothing",
                              "/items/5": "json field '/items/5' matched nothing"}
    array = json_extraction([PRODUCT], {"fields": ["product.price"]})
    assert array.missing == {"product.price": "json field 'product.price' matched nothing (the document is an array)"}


def test_entities_from_an_array_keyed_by_a_path_inside_each_element() -> None:
    entities = json_extraction(PRODUCT, {"entities": {"path": "items", "key": "id", "fields": ["name"]}}).entities
    assert entities == [{"key": "7", "fields": {"name": "seven"}}, {"key": "8", "fields": {"name": "eight"}}]
    whole = json_extraction(PRODUCT, {"entities": {"path": "/items", "key": "id", "fields": None}}).entities
    assert whole is not None and whole[0] == {"key": "7", "fields": {"id": 7, "name": "seven"}}
    top = json_extraction([{"id": "a"}], {"entities": {"path": None, "key": "id", "fields": None}}).entities
    assert top == [{"key": "a", "fields": {"id": "a"}}]
    for path, why in (("product", "is not an array (a dict)"), ("nothing", "matched nothing")):
        with pytest.raises(Unobservable) as caught:
            json_extraction(PRODUCT, {"entities": {"path": path, "key": "id"}})
        assert str(caught.value) == f"extraction: json entities path '{path}' {why}"


# -- JSON ----------------------------------------------------------------------------------------

def test_canonical_text_sorts_keys_one_a_line_and_keeps_non_ascii() -> None:
    text = canonical_json(json.loads('{"b": {"z": 1, "y": "Größe"}, "a": [true, null]}'))
    assert text.splitlines() == ['{', '  "a": [', '    true,', '    null', '  ],', '  "b": {', '    "y": "Größe",',
                                 '    "z": 1', '  }', '}']
    assert canonical_json(json.loads('{"a": [true, null], "b": {"y": "Größe", "z": 1}}')) == text


@pytest.mark.parametrize(("body", "why"), [
    (b"<!doctype html><html><body>Oops</body></html>", "unsupported: not JSON (it looks like HTML): Expecting value"),
    (b'{"a": 1,}', "unsupported: not JSON: "),
    (b"[" * 100_000, "unsupported: JSON nested too deeply"),
])
def test_a_body_that_is_not_json_is_unsupported(body: bytes, why: str) -> None:
    with pytest.raises(Unobservable) as caught:
        json_document(body, None)
    assert str(caught.value).startswith(why)


def test_json_boms_and_declared_charsets_are_read() -> None:
    assert json_document(b'\xef\xbb\xbf{"a": "\xc3\xa9"}', None) == {"a": "é"}
    assert json_document('\ufeff{"a": "é"}'.encode("utf-16"), None) == {"a": "é"}
    assert json_document('{"a": "é"}'.encode("latin-1"), "iso-8859-1") == {"a": "é"}


def test_a_json_document_over_the_limit_is_not_parsed() -> None:
    with pytest.raises(Unobservable, match=f"over the {JSON_MAX_BYTES} bytes"):
        json_document(b" " * (JSON_MAX_BYTES + 1), None)


def test_json_text_view_a_change_names_its_key_and_a_reordering_is_none() -> None:
    first = json.dumps({"name": "KETTLE 2000", "price": 89, "stock": {"count": 4}}).encode()
    reordered = json.dumps({"stock": {"count": 4}, "price": 89, "name": "KETTLE 2000"}, indent=4).encode()
    renamed = json.dumps({"stock": {"count": 4}, "price": 89, "name": "Kettle 2000"}).encode()
    baseline, same, changed = runs(*(document(body, "json") for body in (first, reordered, renamed)))
    assert (baseline.kind, same.kind, changed.kind) == (Kind.BASELINE, Kind.NONE, Kind.CONTENT)
    assert changed.diff is not None
    assert '- "name": "KETTLE 2000",' in changed.diff and '+ "name": "Kettle 2000",' in changed.diff
    assert "price" not in changed.diff.replace('"price": 89', "")  # only the changed key and its context


def test_json_text_view_removes_volatile_values_per_line_and_keeps_the_lines() -> None:
    at = {"generated": "Updated 3 minutes ago", "items": ["one", "two"]}
    later = {"generated": "Updated 2 hours ago", "items": ["one", "two"]}
    obs = read_document(document(json.dumps(at).encode(), "json"))
    assert obs.text is not None and obs.text.count("\n") == 6
    assert [v.kind for v in runs(document(json.dumps(at).encode(), "json"),
                                 document(json.dumps(later).encode(), "json"))] == [Kind.BASELINE, Kind.NOISE]


def test_json_fields_report_old_and_new_and_a_missing_path_is_an_error() -> None:
    spec = {"fields": ["product.price", "/items/0/id"], "entities": None}
    bodies = [PRODUCT, {**PRODUCT, "product": {**PRODUCT["product"], "price": 79.0}}, {"product": {"price": 79.0}}]
    baseline, changed, broken = runs(*(document(json.dumps(b).encode(), "json", json=spec) for b in bodies))
    assert baseline.kind is Kind.BASELINE
    assert changed.kind is Kind.FIELD and changed.changes == {"product.price": field(89.0, 79.0, "89", "79")}
    assert changed.diff is None  # fields are compared, not the text
    assert broken.kind is Kind.ERROR and broken.error == "extraction: json field '/items/0/id' matched nothing (was 7)"


def test_json_entities_are_compared_as_a_set() -> None:
    spec = {"entities": {"path": "items", "key": "id", "fields": None}}
    before = {"items": [{"id": 1, "price": 5}, {"id": 2, "price": 6}]}
    after = {"items": [{"id": 3, "price": 7}, {"price": 5, "id": 1}]}
    _, verdict = runs(*(document(json.dumps(b).encode(), "json", json=spec) for b in (before, after)))
    assert verdict.kind is Kind.ENTITIES
    assert verdict.added == [{"key": "3", "fields": {"id": 3, "price": 7}}]
    assert verdict.removed == [{"key": "2", "fields": {"id": 2, "price": 6}}]
    assert verdict.changed == []


# -- text ----------------------------------------------------------------------------------------

def test_a_text_file_keeps_its_lines_and_a_change_is_a_diff_of_that_line() -> None:
    before = b"Release notes\n\nv1.2: faster parsing\nv1.1: first release\n"
    after = b"Release notes\n\nv1.2: faster parsing, fewer bugs\nv1.1: first release\n"
    _, verdict = runs(document(before, "text"), document(after, "text"))
    assert verdict.kind is Kind.CONTENT and verdict.diff is not None
    assert verdict.diff.splitlines() == ["  Release notes", "- v1.2: faster parsing",
                                         "+ v1.2: faster parsing, fewer bugs", "  v1.1: first release"]


def test_crlf_to_lf_and_a_bom_are_no_change() -> None:
    crlf = b"\xef\xbb\xbfname,price\r\nkettle,89\r\nlamp,129\r\n"
    lf = b"name,price\nkettle,89\nlamp,129\n"
    assert decode_text(crlf, None) == "name,price\r\nkettle,89\r\nlamp,129\r\n"  # no BOM left
    assert decode_text("\ufeffname".encode("utf-16-le").replace(b"\xff\xfe", b"\xff\xfe", 1), None) == "name"
    assert [v.kind for v in runs(document(crlf, "text"), document(lf, "text"))] == [Kind.BASELINE, Kind.NONE]


def test_a_page_that_turns_into_another_type_is_compared_as_text() -> None:
    page = Observation(key="k", url="https://a.example/terms", html=b"<p>Terms of service</p><p>Cancel any time</p>")
    pdf = document(minimal_pdf(["Terms of service", "Cancel at no time"]), "pdf")
    verdicts = runs(page, pdf)
    assert verdicts[1].kind is Kind.CONTENT and "+ Cancel at no time" in (verdicts[1].diff or "")


# -- PDF -----------------------------------------------------------------------------------------

def test_pdf_text_is_read_page_by_page_and_a_changed_word_is_a_line_diff() -> None:
    before = minimal_pdf(["Terms of service", "You may cancel at any time."], ["Page two"])
    after = minimal_pdf(["Terms of service", "You may cancel at no time."], ["Page two"])
    assert pdf_text(before).split("\n") == ["Terms of service", "You may cancel at any time.", "", "Page two", ""]
    _, verdict = runs(document(before, "pdf"), document(after, "pdf"))
    assert verdict.kind is Kind.CONTENT and verdict.diff is not None
    assert "- You may cancel at any time.\n+ You may cancel at no time." in verdict.diff


@pytest.mark.parametrize(("body", "why"), [
    (encrypted_pdf(["secret"]), "unsupported: PDF: encrypted (it needs a password)"),
    (b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage", "unsupported: PDF: unreadable ("),
    (minimal_pdf([]), "unsupported: PDF: no text in 1 page (scanned images?)"),
])
def test_an_encrypted_broken_or_textless_pdf_is_an_error(body: bytes, why: str) -> None:
    verdict = observe(document(body, "pdf"), None, COMPARISONS)
    assert verdict.kind is Kind.ERROR and verdict.error is not None and verdict.error.startswith(why)


def test_a_long_pdf_is_read_up_to_the_page_limit_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("changewatch.core.documents.PDF_MAX_PAGES", 2)
    text = pdf_text(minimal_pdf(["one"], ["two"], ["three"]))
    assert "three" not in text and text.endswith("[changewatch read the first 2 of 3 pages]")
    assert PDF_MAX_PAGES >= 100


# -- bytes ---------------------------------------------------------------------------------------

def test_bytes_are_compared_by_hash_and_size_and_a_change_has_no_diff() -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    verdicts = runs(document(png, "bytes"), document(png, "bytes"), document(png + b"\x00" * 10, "bytes"),
                    document(png + b"\x00" * 9 + b"\x01", "bytes"))
    assert [v.kind for v in verdicts] == [Kind.BASELINE, Kind.NONE, Kind.CONTENT, Kind.CONTENT]
    grown, same_size = verdicts[2], verdicts[3]
    assert grown.diff is None and grown.changes["size"] == {"old": 264, "new": 274}
    assert grown.changes["sha256"]["old"] != grown.changes["sha256"]["new"]
    assert set(same_size.changes) == {"sha256"}


def test_an_observation_without_a_document_is_left_as_it_is() -> None:
    obs = Observation(key="k", url="u", html="<p>x</p>", options={"content_type": "html"})
    assert read_document(obs) is obs


# -- JSON values compared by their JSON type -----------------------------------------------------

def _values(spec: dict[str, Any], *bodies: Any) -> list[Verdict]:
    return runs(*(document(json.dumps(b).encode(), "json", json=spec) for b in bodies))


def test_a_json_value_of_another_type_is_a_field_change_that_says_both_types() -> None:
    spec = {"fields": ["a", "b", "c"]}
    _, verdict = _values(spec, {"a": "10", "b": 1, "c": True}, {"a": 10, "b": True, "c": "true"})
    assert verdict.kind is Kind.FIELD
    assert verdict.changes == {
        "a": {**field("10", 10, "10", "10"), "old_type": "string", "new_type": "number"},
        "b": {**field(1, True, "1", "true"), "old_type": "number", "new_type": "boolean"},
        "c": {**field(True, "true", "true", "true"), "old_type": "boolean", "new_type": "string"}}
    whole = runs(*(document(json.dumps(b).encode(), "json") for b in ({"a": "10"}, {"a": 10})))[1]
    assert whole.kind is Kind.CONTENT and whole.diff is not None  # a whole document: the same rule
    assert '- "a": "10"\n+ "a": 10' in whole.diff
    same = _values(spec, {"a": 10, "b": 1.0, "c": False}, {"a": 10.0, "b": 1, "c": False})[1]
    assert same.kind is Kind.NONE  # one type, one value


def test_every_normalised_json_value_is_text_and_null_is_a_value() -> None:
    spec = {"fields": ["product.price", "product.sale"]}
    _, flag, null = _values(spec, {"product": {"price": 12.5, "sale": False}},
                            {"product": {"price": 12.5, "sale": True}}, {"product": {"price": None, "sale": True}})
    assert flag.changes == {"product.sale": field(False, True, "false", "true")}
    assert null.kind is Kind.FIELD and null.changes == {
        "product.price": {**field(12.5, None, "12.5", "null"), "old_type": "number", "new_type": "null"}}


def test_a_missing_path_is_an_extraction_error_and_the_other_fields_are_still_reported() -> None:
    spec = {"fields": ["product.price", "product.name"]}
    base = {"product": {"price": 12.5, "name": "Kettle"}}
    _, both, alone, back = _values(spec, base, {"product": {"name": "Kettle XL"}}, {"product": {"name": "Kettle XL"}},
                                   {"product": {"price": 11, "name": "Kettle XL"}})
    assert both.kind is Kind.FIELD and both.changes == {"product.name": field("Kettle", "Kettle XL")}
    assert both.members["error"] == "extraction: json field 'product.price' matched nothing (was 12.5)"
    assert alone.kind is Kind.ERROR and alone.error == both.members["error"]
    # the missing field kept its last good value: when it is back, it is compared with that
    assert back.kind is Kind.FIELD and back.changes == {"product.price": field(12.5, 11, "12.5", "11")}


def test_a_document_whose_top_level_becomes_an_array_is_an_error_naming_it() -> None:
    spec = {"fields": ["product.price"]}
    _, array = _values(spec, {"product": {"price": 12.5}}, [{"product": {"price": 12.5}}])
    assert array.kind is Kind.ERROR and array.error == (
        "extraction: json field 'product.price' matched nothing (the document is an array) (was 12.5)")
    whole = runs(*(document(json.dumps(b).encode(), "json") for b in ({"a": 1, "b": 2}, [{"a": 1, "b": 2}])))[1]
    assert whole.kind in (Kind.CONTENT, Kind.ERROR)  # a whole document: a change of its text (or collapsed)
