"""Feeds as entity sets (changewatch/extract/feeds.py): each format, the bad input they must survive,
and the watch spider's reading of a feed response."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy.http import Response, TextResponse, XmlResponse

from changewatch.core.comparisons.entities import EntitiesComparison
from changewatch.core.entities import build_entities, compare_entities
from changewatch.core.observation import Observation
from changewatch.extract.feeds import FEED_KINDS, FeedError, is_feed, parse_feed
from changewatch.extract.watch import observe_watch
from changewatch.watchlist import Watch
from tests.changes import field

URL = "https://news.example/feed"
RSS2 = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>News</title>
<item><title>First &amp; foremost</title><link>https://news.example/a</link>
  <guid isPermaLink="false">post-1</guid><pubDate>Tue, 01 Dec 2026 10:00:00 GMT</pubDate></item>
<item><title>Second</title><link>/b</link><guid>https://news.example/b</guid>
  <atom:updated>2026-12-01T12:00:00Z</atom:updated></item>
</channel></rss>"""
RSS2_NO_GUID = b"""<rss version="2.0"><channel>
<item><title>Only a link</title><link>https://news.example/c?utm_source=rss</link></item>
<item><title>Nothing but a title</title></item>
</channel></rss>"""
RSS1 = b"""<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
         xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="https://news.example/"><title>News</title></channel>
<item rdf:about="https://news.example/r1"><title>RDF one</title><link>https://news.example/r1</link>
  <dc:date>2026-12-01T10:00:00+01:00</dc:date></item>
</rdf:RDF>"""
ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://news.example/blog/"><title>Blog</title>
<entry><id>tag:news.example,2026:1</id><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">An
  <b>Atom</b> entry</div></title><link rel="alternate" href="posts/1"/><link rel="edit" href="/edit/1"/>
  <updated>2026-12-01T10:00:00Z</updated><published>2026-11-30T09:00:00Z</published></entry>
</feed>"""
JSON_FEED = b"""{"version": "https://jsonfeed.org/version/1.1", "title": "J",
 "items": [{"id": 42, "url": "https://news.example/j/42", "title": "Forty-two",
            "date_published": "2026-12-01T10:00:00Z", "date_modified": "2026-12-01T11:00:00Z"},
           {"id": "43", "content_text": "no title, no url"}, "not an item"]}"""


def feed(body: bytes, content_type: str | None = "application/rss+xml") -> list[dict[str, object]]:
    return parse_feed(body, url=URL, content_type=content_type)


def rss(entries: list[tuple[str, str]], *, pretty: bool = False) -> bytes:
    sep = "\n    " if pretty else ""
    items = "".join(f"<item>{sep}<title>{title}</title>{sep}<guid>{guid}</guid>{sep}"
                    f"<link>https://news.example/{guid}</link></item>" for guid, title in entries)
    return f'<rss version="2.0"><channel><title>N</title>{items}</channel></rss>'.encode()


def test_rss2_entries_keyed_by_guid_with_their_fields() -> None:
    assert feed(RSS2) == [
        {"key": "post-1", "fields": {"title": "First & foremost", "link": "https://news.example/a",
                                     "published": "Tue, 01 Dec 2026 10:00:00 GMT"}},
        {"key": "https://news.example/b", "fields": {"title": "Second", "link": "https://news.example/b",
                                                     "updated": "2026-12-01T12:00:00Z"}}]


def test_rss2_without_guid_is_keyed_by_link_else_by_content() -> None:
    entries = feed(RSS2_NO_GUID)
    assert entries[0]["key"] == "https://news.example/c?utm_source=rss"
    assert entries[1] == {"key": None, "fields": {"title": "Nothing but a title"}}
    keys = list(build_entities(entries, base_url=URL, kinds=FEED_KINDS))
    assert keys[0] == "https://news.example/c"  # canonicalised as every entity key is
    assert keys[1].startswith("content:")


def test_rss1_rdf_items_keyed_by_rdf_about() -> None:
    assert feed(RSS1, "application/rdf+xml") == [
        {"key": "https://news.example/r1", "fields": {"title": "RDF one", "link": "https://news.example/r1",
                                                      "updated": "2026-12-01T10:00:00+01:00"}}]


def test_atom_entries_with_xhtml_titles_and_links_against_xml_base() -> None:
    assert feed(ATOM, "application/atom+xml") == [
        {"key": "tag:news.example,2026:1", "fields": {
            "title": "An Atom entry", "link": "https://news.example/blog/posts/1",
            "updated": "2026-12-01T10:00:00Z", "published": "2026-11-30T09:00:00Z"}}]


def test_json_feed_items() -> None:
    assert feed(JSON_FEED, "application/feed+json") == [
        {"key": "42", "fields": {"title": "Forty-two", "link": "https://news.example/j/42",
                                 "updated": "2026-12-01T11:00:00Z", "published": "2026-12-01T10:00:00Z"}},
        {"key": "43", "fields": {}}]


@pytest.mark.parametrize("body", [RSS2, ATOM, RSS1])
def test_a_bom_and_leading_whitespace_are_read_past(body: bytes) -> None:
    wrapped = b"\xef\xbb\xbf\r\n  " + body
    assert is_feed("text/xml", wrapped) and is_feed(None, wrapped)
    assert feed(wrapped, "text/xml") == feed(body, "text/xml")


def test_a_json_feed_with_a_bom() -> None:
    wrapped = b"\xef\xbb\xbf\n" + JSON_FEED
    assert is_feed("application/json", wrapped)
    assert feed(wrapped, "application/json") == feed(JSON_FEED, "application/feed+json")


@pytest.mark.parametrize(("content_type", "body", "expected"), [
    ("application/rss+xml", b"<html><body>Not a feed</body></html>", True),  # then parse_feed refuses it
    ("application/atom+xml; charset=utf-8", b"", True),
    ("Application/Feed+JSON", b"{}", True),
    ("application/xml", b'<?xml version="1.0"?>\n<!-- c --><?xml-stylesheet href="s.xsl"?>\n<rss/>', True),
    ("text/xml", b'<!DOCTYPE rss PUBLIC "-//Netscape//DTD RSS 0.91//EN" "http://x/rss.dtd"><rss>', True),
    ("text/xml", b'<a:feed xmlns:a="http://www.w3.org/2005/Atom">', True),
    ("text/xml", b"<feed>not atom</feed>", False),
    ("application/xml", b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>', False),
    ("text/xml", b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/>', False),
    ("application/json", b'{"version": "2", "items": []}', False),
    ("application/json", b"[1, 2]", False),
    ("text/html", b"<rss/>", False),
    ("text/plain", b'{"version": "https://jsonfeed.org/version/1"}', False),
    (None, b'  {"version": "https://jsonfeed.org/version/1", "items": []}', True),
    (None, b"<html><head></head></html>", False),
])
def test_is_feed_by_content_type_or_sniffed_root(content_type: str | None, body: bytes, expected: bool) -> None:
    assert is_feed(content_type, body) is expected


@pytest.mark.parametrize(("body", "content_type", "message"), [
    (b"<!DOCTYPE html><html><head><title>Shop</title><body><p>Hello<br></body></html>", "application/rss+xml",
     "unsupported: the feed is not well-formed XML"),
    (b"<html><body><p>well-formed HTML</p></body></html>", "application/rss+xml",
     "unsupported: the XML is not RSS, RDF or Atom (its root element is 'html')"),
    (RSS2[:-40], "application/rss+xml", "unsupported: the feed is not well-formed XML"),
    (b"", "application/rss+xml", "empty: the response body is empty"),
    (b"{not json", "application/feed+json", "unsupported: the JSON Feed is not JSON"),
    (b'{"version": "https://jsonfeed.org/version/1"}', "application/feed+json",
     "unsupported: the JSON Feed has no items array"),
    (b'{"items": []}', "application/feed+json", "unsupported: the JSON is not a JSON Feed"),
    (b'{"a": ' * 100_000, "application/feed+json", "unsupported: the JSON Feed is nested too deeply"),
    (b"<rss>" + b"<a>" * 100_000, "application/rss+xml", "unsupported: the feed is not well-formed XML"),
])
def test_what_is_not_a_feed_is_a_feed_error_with_its_class(body: bytes, content_type: str, message: str) -> None:
    with pytest.raises(FeedError) as caught:
        feed(body, content_type)
    assert str(caught.value).startswith(message), caught.value
    assert isinstance(caught.value, ValueError)


def _entity_bomb(depth: int) -> bytes:
    levels = ['<!ENTITY lol0 "lol">'] + [f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, depth + 1)]
    return (f'<?xml version="1.0"?><!DOCTYPE rss [{"".join(levels)}]><rss version="2.0"><channel>'
            f"<item><guid>bomb</guid><title>&lol{depth};</title></item></channel></rss>").encode()


@pytest.mark.parametrize("depth", [3, 9])
def test_an_entity_bomb_does_not_expand(depth: int) -> None:
    """A billion laughs (depth 9: 10^9 "lol"s) is refused by libxml2's amplification limit or left
    unexpanded: either way read in milliseconds, never as gigabytes of text."""
    started = time.perf_counter()
    try:
        entries = feed(_entity_bomb(depth))
    except FeedError as exc:
        assert str(exc).startswith("unsupported: ")
    else:
        title = str(entries[0]["fields"].get("title", ""))
        assert "lollol" not in title and len(title) < 20, title
    assert time.perf_counter() - started < 1.0  # expanded, depth 9 would be 3 GB of text


def test_an_external_entity_is_never_read(tmp_path: object) -> None:
    body = (b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY x SYSTEM "file:///etc/hostname">]>'
            b'<rss version="2.0"><channel><item><guid>x</guid><title>&x;</title></item></channel></rss>')
    with open("/etc/hostname", encoding="utf-8") as f:
        hostname = f.read().strip()
    title = str(feed(body)[0]["fields"].get("title", ""))
    assert not hostname or hostname not in title


def _entities(body: bytes) -> dict[str, object]:
    return dict(build_entities(feed(body), base_url=URL, kinds=FEED_KINDS))


def test_entries_reordered_and_reserialised_are_no_change() -> None:
    entries = [("a", "Alpha"), ("b", "Beta"), ("c", "Gamma")]
    old = build_entities(feed(rss(entries)), base_url=URL, kinds=FEED_KINDS)
    new = build_entities(feed(rss(entries[::-1], pretty=True)), base_url=URL, kinds=FEED_KINDS)
    assert compare_entities(old, new) == ([], [], [])


def test_a_date_written_another_way_is_no_change_but_a_new_date_is() -> None:
    def at(date: str) -> bytes:
        return f"<rss><channel><item><guid>a</guid><pubDate>{date}</pubDate></item></channel></rss>".encode()

    old = build_entities(feed(at("Tue, 01 Dec 2026 10:00:00 GMT")), base_url=URL, kinds=FEED_KINDS)
    same = build_entities(feed(at("2026-12-01T11:00:00+01:00")), base_url=URL, kinds=FEED_KINDS)
    later = build_entities(feed(at("Tue, 01 Dec 2026 10:05:00 GMT")), base_url=URL, kinds=FEED_KINDS)
    assert compare_entities(old, same) == ([], [], [])
    assert compare_entities(old, later)[2] == [{"key": "a", "changes": {"published": field(
        "Tue, 01 Dec 2026 10:00:00 GMT", "Tue, 01 Dec 2026 10:05:00 GMT",
        "2026-12-01T10:00:00Z", "2026-12-01T10:05:00Z")}}]


def test_a_new_entry_that_reuses_a_guid_is_still_added() -> None:
    """A feed that gives every entry one guid (its own URL, a constant): the entries sharing it are
    keyed by guid, link and title, so a new one is added rather than hidden behind the first."""
    old = build_entities(feed(rss([("same", "One"), ("same", "Two")])), base_url=URL, kinds=FEED_KINDS)
    new = build_entities(feed(rss([("same", "Three"), ("same", "One"), ("same", "Two")])), base_url=URL,
                         kinds=FEED_KINDS)
    added, removed, changed = compare_entities(old, new)
    assert [a["fields"]["title"] for a in added] == ["Three"] and not removed and not changed


def test_a_guid_that_becomes_shared_reports_the_new_entry() -> None:
    """The price of that choice: the entry that had the guid alone is re-keyed, a duplicate alert
    (one removed, two added) that we prefer to a missed entry."""
    old = build_entities(feed(rss([("g", "One")])), base_url=URL, kinds=FEED_KINDS)
    new = build_entities(feed(rss([("g", "Two"), ("g", "One")])), base_url=URL, kinds=FEED_KINDS)
    added, removed, _ = compare_entities(old, new)
    assert sorted(a["fields"]["title"] for a in added) == ["One", "Two"]
    assert [r["fields"]["title"] for r in removed] == ["One"]


def test_comment_guids_that_differ_only_by_fragment_are_distinct_entries() -> None:
    """WordPress comment feeds: ``…/post/#comment-N`` guids are one canonical URL (fragments are
    dropped from entity keys); each comment must still be its own entry."""
    def comments(numbers: list[int]) -> bytes:
        items = "".join(f'<item><title>Comment {n}</title><guid isPermaLink="false">'
                        f"https://blog.example/post/#comment-{n}</guid></item>" for n in numbers)
        return f"<rss><channel>{items}</channel></rss>".encode()

    old = build_entities(feed(comments([1, 2])), base_url=URL, kinds=FEED_KINDS)
    new = build_entities(feed(comments([3, 2, 1])), base_url=URL, kinds=FEED_KINDS)
    assert len(old) == 2
    added, removed, changed = compare_entities(old, new)
    assert [a["fields"]["title"] for a in added] == ["Comment 3"] and not removed and not changed


def test_exact_repeats_are_one_entity_counted_as_duplicates() -> None:
    obs = Observation(key="k", url=URL, entities=feed(rss([("a", "Alpha"), ("a", "Alpha"), ("b", "Beta")])),
                      options={"kinds": FEED_KINDS})
    comparison = EntitiesComparison()
    part = comparison.digest(obs)
    assert part is not None and len(part.entities) == 2
    assert comparison.counters(part) == {"duplicates": 1}


def _read_and_compare_seconds(n: int) -> float:
    """Best of three: parse a feed of *n* entries (a tenth of them sharing guids), build its entity
    set and compare it with the previous one that lacks one entry."""
    entries = [(f"g{i if i % 10 else 0}", f"Entry {i}") for i in range(n)]
    old_body, new_body = rss(entries[1:]), rss(entries)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        old = build_entities(feed(old_body), base_url=URL, kinds=FEED_KINDS)
        new = build_entities(feed(new_body), base_url=URL, kinds=FEED_KINDS)
        added, removed, changed = compare_entities(old, new)
        best = min(best, time.perf_counter() - started)
        assert len(added) == 1 and not removed and not changed
        assert len(new) == n
    return best


def test_ten_thousand_entries_with_duplicate_guids_take_linear_time() -> None:
    small, large = _read_and_compare_seconds(1_000), _read_and_compare_seconds(10_000)
    # linear: ~10x (measured ~16x: the larger sets outgrow the caches); quadratic would be ~100x.
    assert large / small < 40, (small, large)


def _response(body: bytes, content_type: str, cls: Callable[..., Response] = XmlResponse) -> Response:
    return cls(url=URL, body=body, headers={"Content-Type": content_type})


def test_a_text_watch_of_a_feed_observes_its_entries() -> None:
    watch = Watch(url=URL, key="news", kinds={"title": "auto"})
    obs, invalid = observe_watch(watch, _response(ATOM, "application/atom+xml"))
    assert invalid == 0 and obs.error is None and obs.html is None
    assert obs.entities == feed(ATOM, "application/atom+xml")
    assert obs.options["entities_spec"] == "feed"
    assert obs.options["kinds"] == {**FEED_KINDS, "title": "auto"}  # the watch's own kinds win


def test_a_feed_that_is_html_is_an_error_observation() -> None:
    watch = Watch(url=URL, key="news")
    obs, _ = observe_watch(watch, _response(b"<html><body><p>Hi<br></body></html>", "application/rss+xml"))
    assert obs.error is not None and obs.error.startswith("unsupported: ")
    assert obs.entities is None


def test_a_watch_with_fields_or_a_page_that_is_no_feed_reads_as_before() -> None:
    html = _response(b"<html><body><p class=x>1</p></body></html>", "text/html", TextResponse)
    obs, _ = observe_watch(Watch(url=URL, key="page"), html)
    assert obs.entities is None and obs.html is not None and "entities_spec" not in obs.options
    obs, _ = observe_watch(Watch(url=URL, key="f", fields={"t": "title::text"}), _response(RSS2, "text/xml"))
    assert obs.entities is None and "entities_spec" not in obs.options


_FEED_BODIES = st.one_of(
    st.binary(max_size=300),
    st.sampled_from([RSS2, RSS1, ATOM, JSON_FEED, RSS2_NO_GUID]).flatmap(
        lambda body: st.tuples(st.integers(0, len(body)), st.binary(max_size=20)).map(
            lambda cut: body[:cut[0]] + cut[1] + body[cut[0]:])))


@settings(max_examples=300, deadline=None)
@given(_FEED_BODIES, st.sampled_from([None, "application/rss+xml", "text/xml", "application/json",
                                      "application/feed+json", "application/atom+xml"]))
def test_any_body_is_entries_or_a_feed_error(body: bytes, content_type: str | None) -> None:
    """Never a crash: whatever the bytes, a feed is read or refused with a classed message."""
    is_feed(content_type, body)
    try:
        entries = parse_feed(body, url=URL, content_type=content_type)
    except FeedError as exc:
        assert str(exc).split(":", 1)[0] in ("unsupported", "empty"), exc
    else:
        assert all(isinstance(e["fields"], dict) for e in entries)
