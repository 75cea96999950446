"""Content types on the crawl's side: what a response is, how a watch's `type`
and `json` options are validated, and what the watch spider's observation carries to the worker."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.http import Request, Response, TextResponse

from changewatch.core.documents import JSON_MAX_BYTES
from changewatch.extract.content_types import BINARY, detect_type, media_type
from changewatch.extract.watch import observe_watch
from changewatch.watchlist import Watch, WatchlistError, parse_watchlist

from ..pdf import minimal_pdf

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


@pytest.mark.parametrize(("ctype", "body", "url", "kind"), [
    ("text/html; charset=utf-8", b"<p>x</p>", "https://a.example/", "html"),
    ("application/json", b'{"a": 1}', "https://a.example/api", "json"),
    ("application/ld+json", b"{}", "https://a.example/", "json"),
    ("application/json", b"<html>not json</html>", "https://a.example/", "json"),  # the header wins
    ("text/plain; charset=utf-8", b"a\nb", "https://a.example/notes", "text"),
    ("text/plain", b'{"a": 1}', "https://raw.example/data.json", "json"),  # raw file hosts say text/plain
    ("text/plain", b"<!DOCTYPE html>\n<html><p>x</p></html>", "https://a.example/", "html"),
    ("text/plain", b"<html lang=en>", "https://a.example/", "html"),
    ("text/plain", b"<b>bold</b> is how you write bold", "https://a.example/", "text"),
    ("text/markdown", b"# x", "https://a.example/", "text"), ("text/csv", b"a,b", "https://a.example/", "text"),
    ("application/pdf", b"%PDF-1.4", "https://a.example/x", "pdf"),
    ("image/png", PNG, "https://a.example/i.png", BINARY),
    ("application/zip", b"PK\x03\x04", "https://a.example/", BINARY),
    ("application/x-unknown", b"\x00\x01\x02\x03" * 10, "https://a.example/", BINARY),
    ("text/xml", b"<a/>", "https://a.example/", "html"),
    ("application/octet-stream", b"%PDF-1.7 ...", "https://a.example/download", "pdf"),
    (None, b"\xef\xbb\xbf  [1, 2]", "https://a.example/x", "json"),
    (None, "{}".encode("utf-16"), "https://a.example/x", "json"),
    (None, b"hello\r\nworld", "https://a.example/README.md", "text"),
    (None, b"hello", "https://a.example/notes.TXT", "text"), (None, b"hello", "https://a.example/x.pdf", "pdf"),
    (None, b"<html>", "https://a.example/page", "html"), (None, b"plain words", "https://a.example/page", "html"),
])
def test_detect_type_header_then_first_bytes_then_url(ctype: str | None, body: bytes, url: str, kind: str) -> None:
    assert detect_type(ctype, body, url) == kind


def test_media_type_drops_parameters_and_case() -> None:
    assert media_type(b"Application/JSON; charset=UTF-8") == "application/json" and media_type(None) == ""


def watch(**options: Any) -> Watch:
    return parse_watchlist({"watches": [{"url": "https://a.example/doc", **options}]})[0]


def response(body: bytes, ctype: str | None, url: str = "https://a.example/doc") -> Response:
    headers = {"Content-Type": ctype} if ctype else {}
    textual = ctype is None or ctype.startswith(("text/", "application/json"))
    cls = TextResponse if textual else Response
    return cls(url=url, body=body, headers=headers, request=Request(url))


def test_a_json_response_is_shipped_as_bytes_with_its_type_and_specs() -> None:
    w = watch(json={"fields": ["product.price", "/items/0/id"], "entities": {"path": "items", "key": "id"}},
              kinds={"product.price": "price"})
    obs, _ = observe_watch(w, response(b'{"product": {"price": 5}}', "application/json; charset=utf-8"))
    assert obs.error is None and obs.html is None and obs.fields is None
    assert obs.body == b'{"product": {"price": 5}}' and obs.encoding == "utf-8"
    assert obs.options["content_type"] == "json" and obs.options["type"] is None
    assert obs.options["json"] == {"fields": ["product.price", "/items/0/id"],
                                   "entities": {"path": "items", "key": "id", "fields": None}}
    assert obs.options["field_specs"] == {"product.price": "json:product.price", "/items/0/id": "json:/items/0/id"}
    assert obs.options["entities_spec"] == "json:items|id" and obs.options["kinds"] == {"product.price": "price"}


def test_json_options_imply_json_whatever_the_server_says() -> None:
    obs, _ = observe_watch(watch(json={"fields": "a"}), response(b'{"a": 1}', "text/html"))
    assert obs.options["content_type"] == "json" and obs.body == b'{"a": 1}'


def test_a_declared_type_overrides_the_response() -> None:
    w = watch(type="text")
    obs, _ = observe_watch(w, response(b"<html><p>a</p>\n<p>b</p></html>", "text/html"))
    assert obs.options == {**w.options(), "content_type": "text"} and obs.options["type"] == "text"
    assert obs.body is not None and obs.html is None


def test_a_watch_reading_html_stays_html_whatever_the_type() -> None:
    """Selectors and a region read HTML pages: their watches read the response as before."""
    obs, _ = observe_watch(watch(fields={"a": "p::text"}), response(b'{"a": 1}', "application/json"))
    assert "content_type" not in obs.options and obs.body is None
    obs, _ = observe_watch(watch(region="main"), response(b"a\nb", "text/plain"))
    assert "content_type" not in obs.options and obs.html is not None


def test_a_plain_text_watch_of_an_html_page_is_unchanged() -> None:
    obs, _ = observe_watch(watch(), response(b"<html><p>x</p></html>", "text/html; charset=utf-8"))
    assert obs.html == b"<html><p>x</p></html>" and obs.body is None and "content_type" not in obs.options


def test_an_image_is_an_error_naming_its_type_unless_the_watch_asks_for_bytes() -> None:
    obs, _ = observe_watch(watch(), response(PNG, "image/png"))
    assert obs.error == "unsupported: image/png (PNG image); `type: bytes` watches its hash and size"
    obs, _ = observe_watch(watch(type="bytes"), response(PNG, "image/png"))
    assert obs.error is None and obs.body == PNG and obs.options["content_type"] == "bytes"


def test_a_pdf_is_shipped_as_bytes() -> None:
    pdf = minimal_pdf(["x"])
    obs, _ = observe_watch(watch(), response(pdf, "application/pdf"))
    assert obs.error is None and obs.body == pdf and obs.options["content_type"] == "pdf"


@pytest.mark.parametrize(("options", "body", "ctype", "error"), [
    ({}, b"  \n", "application/json", "empty: the response body is empty"),
    ({"type": "json"}, PNG, "image/png", "unsupported: PNG image, not json (Content-Type: image/png)"),
    ({}, b"[" + b"1," * (JSON_MAX_BYTES // 2) + b"1]", "application/json",
     f"unsupported: a JSON document of {JSON_MAX_BYTES + 3} bytes, over the {JSON_MAX_BYTES} bytes"),
])
def test_what_the_crawl_can_tell_is_an_error_before_any_worker(options: dict[str, Any], body: bytes, ctype: str,
                                                                error: str) -> None:
    obs, _ = observe_watch(watch(**options), response(body, ctype))
    assert obs.error is not None and obs.error.startswith(error) and obs.body is None


@pytest.mark.parametrize(("options", "message"), [
    ({"type": "xml"}, "type"),
    ({"type": "text", "json": {"fields": ["a"]}}, "json needs type json, not text"),
    ({"type": "json", "fields": {"a": "p"}}, "fields read HTML pages, not a json document"),
    ({"json": {"fields": ["a"]}, "region": "main"}, "region read HTML pages, not a json document"),
    ({"json": {}}, "json needs fields or entities"),
    ({"json": {"fields": ["a..b"]}}, "json.fields.0"),
    ({"json": {"entities": {"path": "items"}}}, "json.entities.key"),
    ({"json": {"fields": ["a"], "field": ["b"]}}, "json: unknown option field (did you mean fields?)"),
])
def test_bad_type_and_json_options_are_watchlist_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(WatchlistError) as caught:
        watch(**options)
    assert message in str(caught.value)


def test_type_and_json_enter_the_spec_and_leave_other_watches_specs_as_they_were() -> None:
    plain = watch()
    assert watch(type="text").spec() != plain.spec() != watch(json={"fields": "a"}).spec()
    assert watch(json={"fields": "a"}).spec() != watch(json={"fields": "b"}).spec()
    assert plain.spec() == Watch(url=plain.url, key=plain.key).spec()


def test_defaults_may_give_a_type() -> None:
    w = parse_watchlist({"defaults": {"type": "text"}, "watches": [{"url": "https://a.example/x"}]})[0]
    assert w.type == "text"


def test_a_type_from_the_defaults_and_a_watchs_html_options_do_not_go_together() -> None:
    with pytest.raises(WatchlistError) as caught:
        parse_watchlist({"defaults": {"type": "pdf"}, "watches": [{"url": "https://a.example/x", "key": "x",
                                                                   "fields": {"a": "p"}}]})
    assert str(caught.value) == "watchlist: watch #1 (x): fields read HTML pages, not a pdf document"


@pytest.mark.parametrize("path", ["/a~2b", "a..b", ".a", "/", "/items/0/id", "a.b.0", "/a~0b~1c"])
def test_the_schema_and_the_crawl_agree_on_json_paths(path: str) -> None:
    import json as json_module
    from pathlib import Path

    import jsonschema

    schema = json_module.loads((Path(__file__).parents[2] / "changewatch" / "watchlist.schema.json").read_text())
    document = {"watches": [{"url": "https://a.example/x", "json": {"fields": [path]}}]}
    schema_ok = not list(jsonschema.Draft202012Validator(schema).iter_errors(document))
    try:
        parse_watchlist(document)
    except WatchlistError:
        crawl_ok = False
    else:
        crawl_ok = True
    assert schema_ok == crawl_ok


JSON_FEED = b'{"version": "https://jsonfeed.org/version/1.1", "items": [{"id": "1", "title": "One"}]}'
RSS = b'<?xml version="1.0"?><rss version="2.0"><channel><item><guid>a</guid><title>A</title></item></channel></rss>'


def test_feeds_are_told_apart_first_and_a_declared_type_wins() -> None:
    obs, _ = observe_watch(watch(), response(JSON_FEED, "application/json"))
    assert obs.options["entities_spec"] == "feed" and obs.entities and obs.body is None
    obs, _ = observe_watch(watch(type="json"), response(JSON_FEED, "application/json"))
    assert obs.options["content_type"] == "json" and obs.entities is None and obs.body == JSON_FEED
    obs, _ = observe_watch(watch(type="feed"), response(RSS, "text/plain"))
    assert obs.options["entities_spec"] == "feed" and obs.entities and obs.entities[0]["key"]
    obs, _ = observe_watch(watch(type="text"), response(RSS, "application/rss+xml"))
    assert obs.options["content_type"] == "text" and obs.entities is None
