"""The watchlist's ``include`` and ``ignore``: validated when the watchlist loads,
carried to the comparison in the observation's options, and part of the watch's spec."""

from __future__ import annotations

from typing import Any

import pytest

from changewatch.core.text.options import TextOptions
from changewatch.watchlist import WatchlistError, parse_watchlist

URL = "https://a.example/"


def one(**options: Any) -> dict[str, Any]:
    return {"watches": [{"url": URL, "key": "news", **options}]}


@pytest.mark.parametrize(("document", "message"), [
    (one(include="titel"), r"watch #1 \(news\): include: unknown part 'titel'; known: title, meta, links"),
    (one(include=[]), r"watch #1 \(news\): include must be title, meta or links, or a non-empty list of them"),
    (one(ignore={}), r"watch #1 \(news\): ignore needs selectors, text or both"),
    (one(ignore={"txt": "x"}), r"ignore: unknown option txt \(did you mean text\?\); known: selectors, text"),
    (one(ignore={"selectors": ["main", "p[[["]}), r"watch #1 \(news\): ignore\.selectors\.1: invalid CSS selector"),
    (one(ignore={"text": "x("}), r"watch #1 \(news\): ignore\.text\.0: invalid regular expression 'x\('"),
    (one(ignore={"text": ["^ok", "|x"]}), r"ignore\.text\.1: '\|x' matches an empty line"),
    (one(ignore={"text": "(" * 5000 + ")" * 5000}), r"ignore\.text\.0: regular expression nested too deeply"),
    (one(ignore={"selectors": "a::attr(href)"}), r"ignore\.selectors\.0: 'a::attr\(href\)' selects text or attrib"),
    (one(include="title", fields={"p": "h1::text"}),
     r"watch #1 \(news\): include applies to text watches; this one is compared by jsonld, fields, entities or json"),
    (one(include="title", ignore={"text": "x"}, entities={"selector": "li", "key": "a::attr(href)"}),
     r"include and ignore apply to text watches"),
    ({"defaults": {"fields": {"p": "h1::text"}}, "watches": [{"url": URL, "ignore": {"text": "x"}}]},
     r"ignore applies to text watches"),
])
def test_bad_include_and_ignore_stop_the_watchlist_naming_watch_and_option(document: dict[str, Any],
                                                                           message: str) -> None:
    with pytest.raises(WatchlistError, match=message):
        parse_watchlist(document)


def test_the_options_reach_the_observation_as_the_comparison_reads_them() -> None:
    (watch,) = parse_watchlist(one(include=["links", "title", "links"],
                                   ignore={"selectors": ".banner", "text": r"^Visitors: \d+"}))
    options = watch.options()
    assert options["include"] == ["title", "links"]  # in one order, each once: an edit that only reorders is none
    assert options["ignore"] == {"selectors": [".banner"], "text": [r"^Visitors: \d+"]}
    assert TextOptions.of(options) == TextOptions(frozenset({"title", "links"}), (".banner",), (r"^Visitors: \d+",))
    # a watch without them carries nothing new
    (plain,) = parse_watchlist(one())
    assert "include" not in plain.options() and "ignore" not in plain.options()
    assert TextOptions.of(plain.options()) is None


def test_defaults_apply_to_text_watches_only_and_a_watch_s_own_value_wins() -> None:
    text, fields, own = parse_watchlist({
        "defaults": {"include": "meta", "ignore": {"selectors": "#cookie-notice"}},
        "watches": [{"url": URL}, {"url": "https://b.example/", "fields": {"p": "h1::text"}},
                    {"url": "https://c.example/", "ignore": {"text": "^Ad$"}}]})
    assert text.include == ("meta",) and text.ignore_selectors == ("#cookie-notice",)
    assert fields.include == () and fields.ignore_selectors == () and "ignore" not in fields.options()
    assert own.include == ("meta",) and own.ignore_selectors == () and own.ignore_text == ("^Ad$",)


def test_editing_them_changes_the_spec_and_leaving_them_out_keeps_it() -> None:
    (plain,) = parse_watchlist(one())
    specs = {parse_watchlist(one(**options))[0].spec() for options in (
        {"include": "title"}, {"include": "links"}, {"ignore": {"selectors": ".a"}}, {"ignore": {"text": "a"}},
        {"ignore": {"selectors": ".b"}})}
    assert len(specs) == 5 and plain.spec() not in specs
    # the spec of a watch without them is the one of before they existed: no forced full fetch
    import hashlib

    from changewatch.core.text.normalise import NORMALISER_VERSION
    before = (NORMALISER_VERSION, None, False, None, [], None, (), (), [], plain.vantage)
    assert plain.spec() == hashlib.sha256(repr(before).encode("utf-8")).hexdigest()[:16]
