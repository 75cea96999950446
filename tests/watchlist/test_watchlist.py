"""Watchlist loading: every error fails at start, naming the watch and the problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from changewatch.watchlist import WatchlistError, load_watchlist, parse_watchlist, parse_watchlist_text

GOOD = """
defaults: {threshold: 3}
watches:
  - url: https://example.com/terms
    key: example-terms
    region: "main article"
    threshold: 4
  - url: https://shop.example/p/1?utm_source=x
    jsonld: {type: Product, fields: [name, offers.price, offers.availability]}
    fields: {stock: "p.stock::text", title: "//h1/text()"}
  - url: https://rentals.example/search?q=2br
    entities:
      selector: "article.listing"
      key: "a.title::attr(href)"
      fields: {title: "h2::text", price: "span.price::text"}
"""


def test_loads_the_design_example(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(GOOD)
    watches = load_watchlist(path)
    assert [w.key for w in watches] == ["example-terms", "https://shop.example/p/1",
                                        "https://rentals.example/search?q=2br"]
    assert watches[0].threshold == 4 and watches[1].threshold == 3  # defaults apply, watches override
    assert watches[0].compares_text and not watches[1].compares_text and not watches[2].compares_text
    assert watches[1].jsonld is not None and watches[1].jsonld.types == ("Product",)
    assert watches[2].entities is not None and watches[2].entities.key == "a.title::attr(href)"


def test_json_watchlist(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"watches": [{"url": "https://a.example/"}]}))
    assert load_watchlist(path)[0].url == "https://a.example/"


@pytest.mark.parametrize("doc,message", [
    (["https://a.example/"], "must be a mapping"),
    ("just a string", "must be a mapping"),
    (None, "must be a mapping"),
    ({}, "'watches' must be a non-empty list"),
    ({"watches": []}, "'watches' must be a non-empty list"),
    ({"watches": "https://a.example"}, "'watches' must be a non-empty list"),
    ({"watches": [{"url": "https://a.example/"}], "extra": 1}, "unknown top-level option"),
    ({"defaults": {"url": "https://x.example/"}, "watches": [{"url": "https://a.example/"}]}, "defaults"),
    ({"watches": ["https://a.example/"]}, r"watch #1: must be a mapping"),
    ({"watches": [{"key": "k"}]}, r"watch #1 \(k\): url is required"),
    ({"watches": [{"url": "ftp://a.example/"}]}, "absolute http"),
    ({"watches": [{"url": "/relative"}]}, "absolute http"),
    ({"watches": [{"url": "https://a.example/", "colour": "red"}]},
     r"watch #1 \(https://a\.example/\): unknown option colour; known: accept_language, "),
    ({"watches": [{"url": "https://a.example/", "jsonld": {"type": "Product", "feilds": ["name"]}}]},
     r"watch #1 \(https://a\.example/\): jsonld: unknown option feilds \(did you mean fields\?\); known: fields, key, "
     r"type"),
    ({"watches": [{"url": "https://a.example/", "region": "p[[["}]}, "invalid region selector"),
    ({"watches": [{"url": "https://a.example/", "fields": {"p": "span::nope("}}]}, r"fields\.p: invalid CSS"),
    ({"watches": [{"url": "https://a.example/", "fields": {"p": "//span[@"}}]}, r"fields\.p: invalid XPath"),
    ({"watches": [{"url": "https://a.example/", "fields": {}}]}, "fields must be a mapping"),
    ({"watches": [{"url": "https://a.example/", "threshold": 99}]}, "threshold"),
    ({"watches": [{"url": "https://a.example/", "threshold": "3"}]}, "threshold"),
    ({"watches": [{"url": "https://a.example/", "sort_lines": "yes"}]}, "sort_lines"),
    ({"watches": [{"url": "https://a.example/", "jsonld": {"type": "Product"}}]}, "jsonld"),
    ({"watches": [{"url": "https://a.example/", "jsonld": {"fields": ["price"], "key": "sku"}}]}, "jsonld.key needs"),
    ({"watches": [{"url": "https://a.example/", "jsonld": {"type": "Offer", "fields": ["price"], "key": ""}}]},
     "jsonld.key must be"),
    ({"watches": [{"url": "https://a.example/", "fields": {"p": "p"}, "kinds": {"p": "money"}}]},
     r"kinds\.p: unknown kind 'money'"),
    ({"watches": [{"url": "https://a.example/", "accept_language": "??"}]}, "accept_language must be"),
    ({"watches": [{"url": "https://a.example/", "entities": {"selector": "li"}}]}, r"entities\.key is required"),
    ({"watches": [{"url": "https://a.example/", "entities": {"selector": "li[", "key": "a"}}]},
     r"entities\.selector"),
    ({"watches": [{"url": "https://a.example/x"}, {"url": "https://a.example/x?utm_source=y"}]},
     r"watch #2 .*duplicate key 'https://a.example/x' \(also watch #1\)"),
    ({"watches": [{"url": "https://a.example/1", "key": "k"}, {"url": "https://a.example/2", "key": "k"}]},
     "duplicate key 'k'"),
])
def test_errors_name_the_watch_and_problem(doc: Any, message: str) -> None:
    with pytest.raises(WatchlistError, match=message):
        parse_watchlist(doc, "w.yaml")


def test_unreadable_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(WatchlistError, match="cannot read watchlist"):
        load_watchlist(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("watches: [unclosed")
    with pytest.raises(WatchlistError, match="not valid YAML"):
        load_watchlist(bad)
    badjson = tmp_path / "bad.json"
    badjson.write_text("{")
    with pytest.raises(WatchlistError, match="not valid JSON"):
        load_watchlist(badjson)
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(WatchlistError):
        load_watchlist(binary)


def test_kinds_key_and_vantage_options() -> None:
    [watch] = parse_watchlist({"watches": [{
        "url": "https://shop.example/c/lamps", "jsonld": {"type": "Product", "key": "sku", "fields": ["offers.price"]},
        "kinds": {"offers.price": "price"}, "accept_language": "en-GB", "headers": {"X-A": "1"}}]})
    assert watch.jsonld is not None and watch.jsonld.key == "sku"
    assert watch.kinds == {"offers.price": "price"}
    assert watch.vantage.accept_language == "en-GB" and watch.vantage.headers == (("X-A", "1"),)


@pytest.mark.parametrize(("name", "text", "message"), [
    ("dup.yaml", "watches:\n  - url: https://a.example/\n    key: a\n    key: b\n", "found duplicate key 'key'"),
    ("dup-top.yaml", "watches: []\nwatches:\n  - url: https://a.example/\n", "found duplicate key 'watches'"),
    ("dup.json", '{"watches": [{"url": "https://a.example/", "url": "https://b.example/"}]}', "duplicate key 'url'"),
    ("space.yaml", "watches:\n  - url: https://a.example/a page\n", "url must not contain spaces"),
])
def test_duplicate_keys_and_unencoded_spaces_are_errors(tmp_path: Path, name: str, text: str, message: str) -> None:
    """The last of two keys does not silently win, and a URL with a space fails when loaded, not when fetched."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(WatchlistError, match=message):
        load_watchlist(path)


@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="this PyYAML has no libyaml parser (a source build "
                    "without libyaml): watchlists are read by PyYAML's own, as the other tests show")
def test_libyaml_reads_the_watchlist_and_refuses_duplicate_keys_too() -> None:
    """Watchlists are parsed by libyaml where PyYAML has it (twice as fast on 20,000 watches), with
    the same constructor: a duplicate key is refused by it as well."""
    from changewatch.watchlist import loading as watchlist

    loader = watchlist._FastUniqueKeyLoader
    assert loader is not None and issubclass(loader, yaml.CSafeLoader)
    assert yaml.load("watches:\n  - url: https://a.example/\n", Loader=loader) == {
        "watches": [{"url": "https://a.example/"}]}
    with pytest.raises(yaml.constructor.ConstructorError, match="found duplicate key 'url'"):
        yaml.load("watches:\n  - url: https://a.example/\n    url: https://b.example/\n", Loader=loader)


@pytest.mark.parametrize(("text", "told"), [
    ("watches:\n\t- url: https://a.example/\n", "found character '\\t' that cannot start any token"),
    ("watches:\n  - *shop\n", "found undefined alias 'shop'"),
    ("watches:\n  - url: https://a.example/\n    url: https://b.example/\n", "    url: https://b.example/\n"),
    ("watches:\n" + "".join(" " * i + "a:\n" for i in range(2, 1500)), "nested too deeply to be a watchlist"),
])
def test_a_yaml_error_quotes_the_line_and_what_was_found(text: str, told: str) -> None:
    """libyaml's messages give a line and column only, and it stops at 1,000 levels of nesting: a
    document it refuses is read again by PyYAML's parser, whose message is the user's."""
    with pytest.raises(WatchlistError) as raised:
        parse_watchlist_text(text, "w.yaml", is_json=False)
    assert told in str(raised.value)


def test_yaml_merge_keys_still_work(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text("watches:\n  - &shop {url: 'https://a.example/p', threshold: 3}\n"
                    "  - {<<: *shop, url: 'https://a.example/q%20r'}\n", encoding="utf-8")
    assert [(w.url, w.threshold) for w in load_watchlist(path)] == [
        ("https://a.example/p", 3), ("https://a.example/q%20r", 3)]


def test_every_problem_is_listed_one_a_line_in_words() -> None:
    """One model validates the watchlist; its errors are listed in words, all of them at once."""
    doc = {"defaults": {"thresold": 3, "sort_lines": "yes"}, "watches": [
        {"url": "https://a.example/a page", "regoin": "main"},
        {"url": "https://b.example/", "key": "b", "fields": {"price": "span[", "name": 3}, "kinds": {"price": "money"}},
        "https://c.example/",
        {"url": "https://d.example/", "jsonld": {"type": ["Product", 3], "fields": []}, "keep_params": ["x", ""]},
    ], "watchs": []}
    with pytest.raises(WatchlistError) as raised:
        parse_watchlist(doc, "w.yaml")
    lines = str(raised.value).splitlines()
    assert all(line.startswith("w.yaml: ") for line in lines), lines
    text = "\n".join(line.removeprefix("w.yaml: ") for line in lines)
    for expected in [
        "defaults: unknown option thresold (did you mean threshold?)",
        "defaults: sort_lines must be true or false, not 'yes'",
        "watch #1 (https://a.example/a page): url must not contain spaces (encode them as %20)",
        "watch #1 (https://a.example/a page): unknown option regoin (did you mean region?)",
        "watch #2 (b): fields.price: invalid CSS selector 'span['",
        "watch #2 (b): fields.name must be a CSS or XPath selector string, not 3",
        "watch #2 (b): kinds.price: unknown kind 'money'; known: ",
        "watch #3: must be a mapping, not str",
        "watch #4 (https://d.example/): jsonld.type.1 must be a non-empty string, not 3",
        "watch #4 (https://d.example/): jsonld.fields must be a string or a non-empty list of strings, not []",
        "watch #4 (https://d.example/): keep_params.1 must be a non-empty string, not ''",
        "unknown top-level option watchs (did you mean watches?); known: defaults, watches",
    ]:
        assert expected in text, text
    assert len(lines) == 12, text
    for noise in ("pydantic", "errors.pydantic.dev", "Input should", "Value error", "validation error", "For further"):
        assert noise not in text


def test_problems_are_capped() -> None:
    doc = {"watches": [{"url": f"https://a.example/{i}", "threshold": -1} for i in range(30)]}
    with pytest.raises(WatchlistError) as raised:
        parse_watchlist(doc, "w.yaml")
    lines = str(raised.value).splitlines()
    assert len(lines) == 21 and lines[-1] == "w.yaml: … and 10 more problems", lines


def test_defaults_apply_and_a_watch_overrides_them() -> None:
    doc = {"defaults": {"threshold": 3, "sort_lines": True, "keep_params": "ref", "accept_language": "de-CH",
                        "conditional": False},
           "watches": [{"url": "https://a.example/?ref=1&utm_source=x"},
                       {"url": "https://b.example/", "threshold": None, "sort_lines": False, "key": 7}]}
    a, b = parse_watchlist(doc)
    assert (a.threshold, a.sort_lines, a.keep_params, a.key, a.conditional) == (
        3, True, ("ref",), "https://a.example/?ref=1", False)
    assert a.vantage.accept_language == "de-CH" and b.vantage.accept_language == "de-CH"
    assert (b.threshold, b.sort_lines, b.key) == (None, False, "7")
    assert a.spec() != b.spec() and a.options()["keep_params"] == ["ref"]


def test_a_version_that_reads_pages_differently_changes_every_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first run after NORMALISER_VERSION moves must fetch every page in full (a spec change),
    not take a 304 and keep comparing against a baseline read the old way for days."""
    import changewatch.spider as base_spider
    import changewatch.watchlist.watch as module
    from changewatch.spider import ChangewatchSpider

    watch = parse_watchlist({"watches": [{"url": "https://example.com/"}]}, "w")[0]
    spider = ChangewatchSpider(name="shop")
    before, before_spider = watch.spec(), spider.watch("https://example.com/", spider.parse).meta["changewatch_spec"]
    monkeypatch.setattr(module, "NORMALISER_VERSION", module.NORMALISER_VERSION + 1)
    monkeypatch.setattr(base_spider, "NORMALISER_VERSION", base_spider.NORMALISER_VERSION + 1)
    assert watch.spec() != before
    assert spider.watch("https://example.com/", spider.parse).meta["changewatch_spec"] != before_spider


U = "https://e.example/a"


@pytest.mark.parametrize(("given", "meaning"), [
    ({"keep_params": []}, {}),
    ({"keep_params": ""}, {}),
    ({"drop_params": []}, {}),
    ({"drop_params": ""}, {}),
    ({"jsonld": {"type": [], "fields": ["name"]}}, {"jsonld": {"fields": ["name"]}}),
    ({"jsonld": {"type": "", "fields": ["name"]}}, {"jsonld": {"fields": ["name"]}}),
    ({"entities": {"selector": "li", "key": "a::attr(href)", "fields": {}}},
     {"entities": {"selector": "li", "key": "a::attr(href)"}}),
    ({"fields": {1: "h1::text"}, "kinds": {1: "price"}}, {"fields": {"1": "h1::text"}, "kinds": {"1": "price"}}),
])
def test_what_meant_nothing_before_still_means_nothing(given: dict[str, Any], meaning: dict[str, Any]) -> None:
    """Watchlists the version before the model accepted (an empty list or string for 'none', a
    field named by a number) load as they did: the same watch, so no re-baselining either."""
    assert parse_watchlist({"watches": [{"url": U, **given}]}) == parse_watchlist({"watches": [{"url": U, **meaning}]})
    assert parse_watchlist({"defaults": given, "watches": [{"url": U}]}) == \
        parse_watchlist({"defaults": meaning, "watches": [{"url": U}]})


@pytest.mark.parametrize("defaults", [None, {}, [], ""])
def test_empty_defaults_are_no_defaults(defaults: Any) -> None:
    assert parse_watchlist({"defaults": defaults, "watches": [{"url": U}]}) == \
        parse_watchlist({"watches": [{"url": U}]})


@pytest.mark.parametrize(("name", "quoted"), [(True, "'true'"), (None, "'null'"), (1.5, "'1.5'")])
def test_a_name_that_is_not_text_is_refused_saying_what_to_write(name: Any, quoted: str) -> None:
    for where, doc in [("fields", {"fields": {name: "h1::text"}}), ("kinds", {"kinds": {name: "price"}}),
                       ("entities.fields", {"entities": {"selector": "li", "key": "a", "fields": {name: "b"}}})]:
        with pytest.raises(WatchlistError) as caught:
            parse_watchlist({"watches": [{"url": U, **doc}]})
        assert str(caught.value) == (f"watchlist: watch #1 ({U}): {where}: a name must be a string or a whole "
                                     f"number, not {name!r}; put the name in quotes as you mean it ({quoted}: …)")


def test_a_whole_number_written_as_a_decimal_is_the_whole_number() -> None:
    """JSON (and so the schema's "integer") counts 3.0 as 3: the crawl does too."""
    (watch,) = parse_watchlist({"watches": [{"url": U, "key": 5.0, "threshold": 3.0}]})
    assert (watch.key, watch.threshold) == ("5", 3) and type(watch.threshold) is int
    with pytest.raises(WatchlistError, match="threshold must be a whole number"):
        parse_watchlist({"watches": [{"url": U, "threshold": 3.5}]})


def test_a_file_of_watches_alone_says_where_they_go() -> None:
    """Inline JSON may be the watches list alone (Scrapyd's -d watchlist='[…]'); a file may not."""
    with pytest.raises(WatchlistError) as raised:
        parse_watchlist_text("- url: https://example.com/terms\n", "w.yaml", is_json=False)
    assert str(raised.value).endswith("a watchlist must be a mapping with a 'watches' list, not list (a list of "
                                      "watches goes under 'watches:')")
