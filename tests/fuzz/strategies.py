"""Hypothesis strategies for hostile input: HTML-ish soup, selectors, JSON values, watchlists, URLs."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

_TOKENS = ["<p>", "</p>", "<div>", "</div>", "<main>", "</main>", "<script>", "</script>", "<style>", "<!--", "-->",
           "<![CDATA[", "]]>", "<![if", "&amp;", "&#0;", "&#x110000;", "&nbsp;", "\x00", "\r", "\n", "\u2028",
           "<table><tr><td>", "<br/>", "</", "<", ">", "=", '"', "'", "\ufffd", "é", "\U0001f600",
           '<meta charset="utf-16">', '<meta charset="x-unknown">', "<?xml version='1.0' encoding='latin-1'?>",
           "<svg><foreignObject>", "<math>", "<template>", "<noscript>", "<ld>", "Updated 10:32 PM",
           '<script type="application/ld+json">', '{"@type": "Product", "offers": {"price": "9"}}', "[", "{",
           "3 minutes ago", "token=ab12cd34ef56ab12cd34", "2026-11-30T12:00:00Z"]

html_soup = st.lists(st.one_of(st.sampled_from(_TOKENS), st.text(max_size=12)), max_size=60).map("".join)
html_input = st.one_of(html_soup, st.text(max_size=200), st.binary(max_size=300),
                       html_soup.map(lambda s: s.encode("utf-8", "surrogatepass")))

_SELECTORS = ["p", "main", "div > p", "p:nth-child(2)", "a::attr(href)", "p::text", "//p", "//p/text()", "(//a)[1]",
              "//@href", "*", "script", "p[[[", "::text", "//p[", "(", "/", "a:has(b)", "p:contains('x')", "#", ".",
              "//p[position() = $x]", "//x:y", "//p | 1", "//p[re:test(., 'a')]", "(1)", "//p/text() | //a/@href"]
selectors = st.one_of(st.sampled_from(_SELECTORS), st.text(max_size=20))

json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20)

_URLS = st.one_of(st.sampled_from(["https://example.com/a", "http://x", "ftp://x/", "http://[::1", "http://[oops]/",
                                   "https://ex.com:99999/", "//no-scheme", "http://u:p@h/", "https://ex.com/?utm_source=x"]),
                  st.text(max_size=30))
_VALUES = st.one_of(json_values, st.sampled_from(["", " ", "p", "p[[[", "//p", 3, -1, 65, True, [], {}, ["a", 1]]))
_WATCH_KEYS = ["url", "key", "region", "threshold", "sort_lines", "jsonld", "fields", "entities", "keep_params",
               "drop_params", "unknown"]


@st.composite
def watch_dicts(draw: st.DrawFn) -> dict[str, Any]:
    watch: dict[str, Any] = {"url": draw(_URLS)} if draw(st.booleans()) else {}
    for key in draw(st.lists(st.sampled_from(_WATCH_KEYS), max_size=5, unique=True)):
        if key == "jsonld":
            watch[key] = draw(st.one_of(_VALUES, st.fixed_dictionaries(
                {"fields": _VALUES}, optional={"type": _VALUES, "x": _VALUES})))
        elif key == "entities":
            watch[key] = draw(st.one_of(_VALUES, st.fixed_dictionaries(
                {"selector": selectors, "key": selectors}, optional={"fields": _VALUES})))
        elif key == "fields":
            watch[key] = draw(st.one_of(_VALUES, st.dictionaries(st.text(max_size=5), selectors, max_size=3)))
        else:
            watch[key] = draw(st.one_of(_URLS, _VALUES) if key == "url" else _VALUES)
    return watch


watchlist_documents: st.SearchStrategy[Any] = st.one_of(
    json_values,
    st.fixed_dictionaries({"watches": st.one_of(st.lists(st.one_of(watch_dicts(), json_values), max_size=4),
                                                json_values)},
                          optional={"defaults": st.one_of(watch_dicts(), json_values), "extra": json_values}))


def as_file_text(document: Any, style: str) -> str:
    """A watchlist document written out as JSON or YAML text (or left as raw text)."""
    if style == "json":
        return json.dumps(document, default=str)
    import yaml

    return yaml.safe_dump(document, allow_unicode=True) if style == "yaml" else str(document)
