"""Fuzzing with hypothesis: hostile input never raises anything but each function's documented
error (see the docstrings of normalise, the extractors, the watchlist loader, canonical_url and
the SSRF policy)."""

from __future__ import annotations

import ipaddress
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from parsel import Selector

from changewatch.core.addresses import AddressPolicy, parse_ip_host
from changewatch.core.selectors import SelectorError, check_selector
from changewatch.core.text.lxml_walker import RegionError
from changewatch.core.text.normalise import normalise, normalise_text, visible_text
from changewatch.core.text.options import TextOptions, TextOptionsError
from changewatch.core.urls import canonical_url
from changewatch.extract.selectors import select_value
from changewatch.extract.structured import find_nodes, resolve_path, structured_data
from changewatch.watchlist import WatchlistError, load_watchlist, parse_watchlist

from ..e2e.crawl import ROOT
from .strategies import as_file_text, html_input, html_soup, json_values, selectors, watchlist_documents

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(html_input, st.one_of(st.none(), selectors), st.booleans())
def test_normalise_raises_only_region_errors(html: str | bytes, region: str | None, sort_lines: bool) -> None:
    try:
        text = normalise(html, region, sort_lines=sort_lines)
    except RegionError:
        assert region is not None
        return
    assert isinstance(text, str)
    assert visible_text(html, region).stable.count("\n") >= 0


@FUZZ
@given(html_input, st.one_of(st.none(), selectors), st.lists(st.sampled_from(["title", "meta", "links"])),
       st.lists(selectors, max_size=2), st.lists(st.text(max_size=12), max_size=2), st.booleans())
def test_include_and_ignore_raise_only_their_documented_errors(html: str | bytes, region: str | None,
                                                               include: list[str], ignore: list[str],
                                                               patterns: list[str], sort_lines: bool) -> None:
    try:
        options = TextOptions.of({"include": include, "ignore": {"selectors": ignore, "text": patterns}})
        got = visible_text(html, region, sort_lines=sort_lines, options=options, url="https://example.com/a/")
    except RegionError:
        assert region is not None
        return
    except TextOptionsError:
        return  # a selector or pattern that does not compile, or a pattern over its time budget
    assert "\x00" not in got.stable and isinstance(got.raw, str)


@FUZZ
@given(st.text(max_size=300), st.booleans())
def test_normalise_text_never_raises(text: str, sort_lines: bool) -> None:
    assert isinstance(normalise_text(text, sort_lines=sort_lines).stable, str)


def _page(html: str) -> Selector | None:
    # as observe_watch builds it: type="html", or parsel reads a body that parses as JSON as JSON
    return Selector(text=html, base_url="https://example.com/", type="html") if html.strip() else None


@FUZZ
@given(html_soup, selectors)
@example("{}", "p")  # found by atheris: a JSON-looking body (fixed in observe_watch)
@example("123", "//p")
def test_selectors_are_checked_and_a_checked_selector_never_raises(html: str, query: str) -> None:
    try:
        check_selector(query)
    except SelectorError:
        return
    sel = _page(html)
    if sel is not None:
        value = select_value(sel, query)
        assert value is None or isinstance(value, str)


@FUZZ
@given(st.one_of(st.integers(), st.none(), st.lists(st.text(max_size=3), max_size=2)))
def test_check_selector_refuses_what_is_not_a_string(query: Any) -> None:
    try:
        check_selector(query)
    except SelectorError:
        return
    raise AssertionError(f"{query!r} was accepted as a selector")


@FUZZ
@given(html_soup, json_values, st.text(max_size=40))
def test_jsonld_extraction_never_raises(html: str, node: Any, raw_block: str) -> None:
    import json

    page = f'<html><head><script type="application/ld+json">{json.dumps(node, default=str)}</script>' \
           f'<script type="application/ld+json">{raw_block}</script></head><body>{html}</body></html>'
    data = structured_data(Selector(text=page, type="html").root, "https://s.example/")
    assert data.invalid_blocks >= 0
    assert isinstance(data.microdata, list) and isinstance(data.opengraph, dict)
    found = find_nodes(data.jsonld, ["Product", "Offer"])
    for n in found:
        data.resolve(n, "offers.price|offers.lowPrice")
    assert all(isinstance(n, dict) for n in found)


@FUZZ
@given(json_values, st.text(max_size=30), st.lists(st.text(max_size=10), max_size=3))
def test_json_paths_never_raise(node: Any, path: str, types: list[str]) -> None:
    resolve_path(node, path)
    find_nodes([node], types)


@FUZZ
@given(watchlist_documents)
def test_parse_watchlist_raises_only_watchlist_errors(document: Any) -> None:
    try:
        watches = parse_watchlist(document)
    except WatchlistError:
        return
    assert watches and all(w.url.startswith(("http://", "https://")) for w in watches)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(watchlist_documents, st.text(max_size=200), st.binary(max_size=200)),
       st.sampled_from(["json", "yaml", "raw"]), st.sampled_from([".yaml", ".json", ".yml", ""]))
def test_load_watchlist_raises_only_watchlist_errors(tmp_path: Path, document: Any, style: str, suffix: str) -> None:
    path = tmp_path / f"watchlist{suffix}"
    if isinstance(document, bytes):
        path.write_bytes(document)
    else:
        path.write_text(as_file_text(document, style), encoding="utf-8", errors="surrogatepass")
    try:
        load_watchlist(path)
    except WatchlistError:
        pass


# a "billion laughs" YAML document: 9 ** 9 strings once its aliases are followed
LAUGHS = "watches:\n  - url: http://x\n    keep_params:\n      - &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
LAUGHS += "".join(f"      - &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10))


@pytest.mark.parametrize(("name", "text"), [("laughs.yaml", LAUGHS), ("deep.json", "[" * 100_000 + "]" * 100_000),
                                            ("deep.yaml", "[" * 100_000 + "]" * 100_000),
                                            ("alias.yaml", "watches: &w [*w]"),
                                            ("fields.yaml", "watches:\n  - url: http://x\n    fields: &f {a: *f}")])
def test_hostile_watchlist_files_fail_fast_and_clearly(tmp_path: Path, name: str, text: str) -> None:
    """Billion laughs, deep nesting and self-reference: a WatchlistError, in a subprocess so that a
    regression fails after 60 s instead of hanging the suite."""
    (tmp_path / name).write_text(text)
    code = ("import sys\nfrom changewatch.watchlist import WatchlistError, load_watchlist\n"
            "try:\n    load_watchlist(sys.argv[1])\nexcept WatchlistError as e:\n    print(str(e)[:2000])\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / name)], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert proc.returncode == 0 and name in proc.stdout, proc.stderr[-2000:]


@FUZZ
@given(st.one_of(st.text(max_size=80), st.sampled_from(["http://[", "http://[::1]:99999/", "http://a:b:c/", "ht tp://x",
                                                         "http://%zz/", "http://\u0130.example/", "http://x/\udcff"])),
       st.lists(st.text(max_size=5), max_size=2), st.lists(st.text(max_size=5), max_size=2))
def test_canonical_url_raises_only_value_errors(url: str, keep: list[str], drop: list[str]) -> None:
    try:
        assert isinstance(canonical_url(url, keep=keep, drop=drop), str)
    except ValueError:
        pass


@FUZZ
@given(st.one_of(st.text(max_size=60), st.from_regex(r"(https?|ftp|file)://[\w.:@\[\]%-]{0,30}(/\S{0,10})?")),
       st.booleans())
@example("0-5", False)  # found by atheris: int() takes a sign where inet_aton does not
@example("http://0x-1.0/", False)
def test_the_ssrf_policy_never_raises(url: str, allow_private: bool) -> None:
    policy = AddressPolicy.build(allow_private=allow_private, allowed_hosts=[".example.org"])
    refusal = policy.url_refusal(url)
    assert refusal is None or (refusal.rule and refusal.detail)
    ip = parse_ip_host(url)
    if ip is not None:
        assert isinstance(ip, ipaddress.IPv4Address | ipaddress.IPv6Address)
