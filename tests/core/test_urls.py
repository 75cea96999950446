"""canonical_url: one identity per thing, whatever tracking or session decorates its URL."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changewatch.core import TRACKING_PARAMS, canonical_url

BASE = "https://shop.example/p/1"


@pytest.mark.parametrize(
    "param",
    ["utm_source=news", "utm_medium=email", "utm_campaign=spring", "utm_term=x", "utm_content=y", "UTM_Source=x",
     "fbclid=IwAR0abc", "gclid=EAIaIQ", "mc_cid=123abc", "mc_eid=456def", "msclkid=789", "PHPSESSID=abc123",
     "phpsessid=abc", "jsessionid=0A1B", "sessionid=9", "_ga=2.1.3", "yclid=1", "igshid=2", "pk_campaign=x",
     "_hsenc=p2", "mkt_tok=xyz"],
)
def test_tracking_and_session_params_stripped(param: str) -> None:
    assert canonical_url(f"{BASE}?id=7&{param}") == f"{BASE}?id=7"
    assert canonical_url(f"{BASE}?{param}") == BASE


def test_tracking_names_are_documented() -> None:
    assert {"fbclid", "gclid", "mc_cid", "mc_eid", "msclkid", "jsessionid", "phpsessid"} <= TRACKING_PARAMS


@pytest.mark.parametrize(
    "url",
    [f"{BASE};jsessionid=0A1B2C3D", f"{BASE};JSESSIONID=0A1B2C3D", f"{BASE};phpsessid=abc", f"{BASE};sid=1"],
)
def test_session_id_in_path_stripped(url: str) -> None:
    assert canonical_url(url) == BASE
    assert canonical_url(url + "?b=2&a=1") == BASE + "?a=1&b=2"


def test_path_session_in_a_middle_segment() -> None:
    assert canonical_url("https://shop.example/cat;jsessionid=XYZ/item") == "https://shop.example/cat/item"


def test_other_path_parameters_kept() -> None:
    assert canonical_url("https://shop.example/p;color=red") == "https://shop.example/p;color=red"


def test_query_sorted_and_values_kept() -> None:
    assert canonical_url("https://shop.example/s?q=tea&page=2&color=red") == \
        "https://shop.example/s?color=red&page=2&q=tea"
    assert canonical_url("https://shop.example/s?b=2&a=2&a=1") == "https://shop.example/s?a=1&a=2&b=2"


def test_non_tracking_params_kept() -> None:
    for param in ("id=7", "ref=home", "page=3", "q=utm", "source=x", "session=live", "campaign=a"):
        assert canonical_url(f"{BASE}?{param}") == f"{BASE}?{param}"


def test_blank_values_kept() -> None:
    assert canonical_url(f"{BASE}?flag=&utm_source=x") == f"{BASE}?flag="


def test_fragment_dropped() -> None:
    assert canonical_url(f"{BASE}#reviews") == BASE
    assert canonical_url(f"{BASE}?a=1#top") == f"{BASE}?a=1"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTPS://Shop.EXAMPLE/p/1", "https://shop.example/p/1"),
        ("https://shop.example:443/p/1", "https://shop.example/p/1"),
        ("http://shop.example:80/p/1", "http://shop.example/p/1"),
        ("http://shop.example:443/p/1", "http://shop.example:443/p/1"),
        ("https://shop.example:8443/p/1", "https://shop.example:8443/p/1"),
        ("https://shop.example", "https://shop.example/"),
        ("  https://shop.example/p/1  ", "https://shop.example/p/1"),
        ("https://[::1]:8443/x", "https://[::1]:8443/x"),
        ("https://[2001:DB8::1]/x", "https://[2001:db8::1]/x"),
    ],
)
def test_scheme_host_and_default_ports_normalised(url: str, expected: str) -> None:
    assert canonical_url(url) == expected


def test_path_case_kept() -> None:
    assert canonical_url("https://shop.example/P/Item") == "https://shop.example/P/Item"
    assert canonical_url("https://shop.example/P/Item") != canonical_url("https://shop.example/p/item")


def test_percent_encoding_normalised() -> None:
    assert canonical_url("https://shop.example/a b?q=é") == canonical_url("https://shop.example/a%20b?q=%C3%A9")


def test_keep_keeps_a_tracking_looking_param() -> None:
    url = f"{BASE}?utm_source=feed&gclid=1&id=7"
    assert canonical_url(url, keep=["utm_source"]) == f"{BASE}?id=7&utm_source=feed"
    assert canonical_url(url, keep=["UTM_SOURCE"]) == f"{BASE}?id=7&utm_source=feed"


def test_drop_drops_a_named_param() -> None:
    url = f"{BASE}?ref=home&id=7&Sort=asc"
    assert canonical_url(url, drop=["ref"]) == f"{BASE}?Sort=asc&id=7"
    assert canonical_url(url, drop=["ref", "sort"]) == f"{BASE}?id=7"


def test_keep_wins_over_drop() -> None:
    assert canonical_url(f"{BASE}?ref=1", keep=["ref"], drop=["ref"]) == f"{BASE}?ref=1"


def test_variants_of_one_url_share_one_identity() -> None:
    variants = [
        "https://shop.example/p/1?id=7&color=red",
        "HTTPS://SHOP.example:443/p/1?color=red&id=7#details",
        "https://shop.example/p/1;jsessionid=ABC?utm_source=x&color=red&fbclid=1&id=7",
        "https://shop.example/p/1?id=7&gclid=x&color=red&mc_cid=1&mc_eid=2&msclkid=3",
    ]
    assert len({canonical_url(v) for v in variants}) == 1


# --- idempotence ---------------------------------------------------------------------------------------

_names = st.one_of(st.sampled_from(["id", "q", "page", "ref", "utm_source", "fbclid", "Sort", "a", "b", "sid",
                                    "jsessionid", "x y", "ä", "a+b", "%41"]),
                   st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=6))
_values = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=8)
_segments = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="/?#"),
                    max_size=8)


@st.composite
def urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "Https"]))
    host = draw(st.sampled_from(["example.com", "Shop.Example", "WWW.EXAMPLE.ORG", "127.0.0.1", "[::1]",
                                 "xn--bcher-kva.example"]))
    port = draw(st.sampled_from(["", ":80", ":443", ":8080"]))
    path = "/".join(draw(st.lists(_segments, max_size=4)))
    session = draw(st.sampled_from(["", ";jsessionid=ABC123", ";phpsessid=x"]))
    query = "&".join(f"{k}={v}" for k, v in draw(st.lists(st.tuples(_names, _values), max_size=5)))
    fragment = draw(st.sampled_from(["", "#top", "#a?b=c"]))
    return f"{scheme}://{host}{port}/{path}{session}{'?' + query if query else ''}{fragment}"


@settings(max_examples=150, deadline=None)
@given(urls())
def test_canonical_url_is_idempotent(url: str) -> None:
    once = canonical_url(url)
    assert canonical_url(once) == once


@settings(max_examples=100, deadline=None)
@given(urls())
def test_canonical_url_has_no_tracking_params_no_fragment_and_a_sorted_query(url: str) -> None:
    once = canonical_url(url)
    parts = urlsplit(once)
    assert parts.fragment == ""
    assert parts.scheme in ("http", "https")
    assert parts.netloc == parts.netloc.lower()
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    assert not any(k.lower() in TRACKING_PARAMS or k.lower().startswith("utm_") for k, _ in pairs)
    assert pairs == sorted(pairs)
    assert ";jsessionid=" not in once.lower() and ";phpsessid=" not in once.lower()
