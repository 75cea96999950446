"""Site watches in the watchlist: ``site`` and ``rules`` validated (the schema and the crawl agree),
each page's own watch (page options, the first matching rule, its key), which URLs are watched and
followed, and the spool carrying site watches to the crawl."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
import yaml

from changewatch.watchlist import WatchlistError, parse_watchlist, parse_watchlist_text, spool_watchlist
from changewatch.watchlist.site import SiteSpec, allowed, followed, page_key, page_watch, site_of_key
from tests.watchlist.test_watchlist_schema import validator

SITE_WATCHLIST = """
defaults:
  threshold: 3
watches:
  - key: docs
    site:
      sitemap: https://docs.example/sitemap.xml
      allow: ['/guide/']
      deny: ['/archive/']
      max_pages: 10000
      every: 1d
    region: main
    every: 6h
  - key: blog
    site:
      start: https://blog.example/
      allow: ['/posts/[^/]+$']
      follow: ['/page/\\d+$']
      deny: ['/tag/']
      depth: 3
  - key: shop
    site: {sitemap: https://shop.example/sitemap.xml}
    jsonld: {type: Product, fields: [offers.price, offers.availability]}
    rules:
      - {match: '/blog/', region: article, jsonld: null}
  - url: https://plain.example/
"""


def _watches(text: str = SITE_WATCHLIST) -> list[Any]:
    return parse_watchlist(yaml.safe_load(text))


def test_the_issues_watchlist_loads_into_site_watches() -> None:
    docs, blog, shop, plain = _watches()
    assert docs.site == SiteSpec(sitemap="https://docs.example/sitemap.xml", allow=("/guide/",), deny=("/archive/",),
                                 max_pages=10000, every=86400.0)
    assert (docs.url, docs.key, docs.region, docs.every, docs.threshold) == (
        "https://docs.example/sitemap.xml", "docs", "main", 21600.0, 3)
    assert blog.site == SiteSpec(start=("https://blog.example/",), allow=("/posts/[^/]+$",), follow=(r"/page/\d+$",),
                                 deny=("/tag/",), depth=3)
    assert blog.url == "https://blog.example/" and blog.site.max_pages == 10000 and blog.site.every is None
    assert shop.site is not None and shop.site.depth == 3 and [r.match for r in shop.rules] == ["/blog/"]
    assert shop.rules[0].options == ("jsonld", "region")
    assert plain.site is None and plain.rules == () and plain.site_watch is None


def test_a_page_watch_has_the_site_watchs_page_options_and_the_first_matching_rule() -> None:
    shop = _watches()[2]
    product = page_watch(shop, "https://shop.example/p/1?utm_source=mail#reviews")
    assert product.key == "shop|https://shop.example/p/1" and product.url.startswith("https://shop.example/p/1?utm")
    assert product.site_watch == "shop" and product.site is None and product.rules == ()
    assert product.jsonld is not None and product.jsonld.fields == ("offers.price", "offers.availability")
    assert product.threshold == 3 and product.region is None
    post = page_watch(shop, "https://shop.example/blog/new-range")
    assert post.jsonld is None and post.region == "article" and post.compares_text and post.threshold == 3
    assert post.spec() != product.spec()  # read another way: a page moving between rules starts afresh
    assert page_watch(shop, "https://shop.example/p/2").spec() == product.spec()


def test_rules_are_tried_in_order_and_null_unsets_an_option() -> None:
    site = parse_watchlist({"watches": [{
        "key": "s", "site": {"sitemap": "https://s.example/sitemap.xml"}, "region": "main", "every": "1h",
        "rules": [{"match": "/a/", "region": None}, {"match": "/a/|/b/", "region": "article", "every": "1d"}]}]})[0]
    assert page_watch(site, "https://s.example/a/1").region is None
    assert page_watch(site, "https://s.example/a/1").every == 3600.0
    assert (page_watch(site, "https://s.example/b/1").region, page_watch(site, "https://s.example/b/1").every) == (
        "article", 86400.0)
    assert page_watch(site, "https://s.example/c/1").region == "main"


def test_page_keys() -> None:
    assert page_key("docs", "HTTPS://Docs.example:443/guide/?b=2&a=1&utm_campaign=x#top") == (
        "docs|https://docs.example/guide/?a=1&b=2")
    assert site_of_key("docs|https://docs.example/") == "docs" and site_of_key("https://docs.example/") is None
    site = parse_watchlist({"watches": [{"key": "s", "site": {"start": "https://s.example/"},
                                         "drop_params": "ref"}]})[0]
    assert page_watch(site, "https://s.example/x?ref=feed&id=1").key == "s|https://s.example/x?id=1"


def test_allowed_and_followed() -> None:
    docs, blog = _watches()[:2]
    assert allowed(docs.site, "https://docs.example/guide/intro")
    assert not allowed(docs.site, "https://docs.example/guide/archive/old")
    assert not allowed(docs.site, "https://docs.example/blog/post")
    assert allowed(blog.site, "https://blog.example/posts/hello") and not allowed(blog.site, "https://blog.example/")
    assert followed(blog.site, "https://blog.example/page/2") and not allowed(blog.site, "https://blog.example/page/2")
    assert followed(blog.site, "https://blog.example/posts/hello")
    assert not followed(blog.site, "https://blog.example/tag/news") and not followed(blog.site, "https://blog.example/a")
    everything = SiteSpec(start=("https://e.example/",), deny=("/private",))
    assert allowed(everything, "https://e.example/any") and followed(everything, "https://e.example/any")
    assert not followed(everything, "https://e.example/private/x")


@pytest.mark.parametrize(("watch", "message"), [
    ({"site": {"sitemap": "https://s.example/sitemap.xml"}}, r"watch #1: a site watch needs a key"),
    ({"key": "s", "url": "https://s.example/", "site": {"sitemap": "https://s.example/sitemap.xml"}},
     r"watch #1 \(s\): a site watch has no url"),
    ({"key": "s", "site": {"sitemap": "https://s.example/s.xml", "start": "https://s.example/"}},
     r"watch #1 \(s\): site needs a sitemap or start URLs, not both"),
    ({"key": "s", "site": {}}, r"site needs a sitemap or start URLs$"),
    ({"key": "s", "site": {"sitemap": "https://s.example/s.xml", "depth": 2}},
     r"site: depth applies to link mode \(start\), not to a sitemap"),
    ({"key": "s", "site": {"sitemap": "https://s.example/s.xml", "follow": "/p/", "depth": 2}},
     r"site: follow and depth apply to link mode"),
    ({"key": "s", "site": {"start": "https://s.example/", "allow": "/a/(["}},
     r"site\.allow\.0: '/a/\(\[' is not a regular expression"),
    ({"key": "s", "site": {"start": "https://s.example/", "depth": -1}}, r"site\.depth must be a whole number"),
    ({"key": "s", "site": {"start": "https://s.example/", "depth": 101}}, r"site\.depth must be a whole number"),
    ({"key": "s", "site": {"start": "https://s.example/", "max_pages": 0}}, r"site\.max_pages must be a whole"),
    ({"key": "s", "site": {"start": "https://s.example/", "max_pages": 1.5}}, r"site\.max_pages must be a whole"),
    ({"key": "s", "site": {"start": "https://s.example/", "every": "soon"}}, r"site\.every: 'soon' is not a number"),
    ({"key": "s", "site": {"start": "ftp://s.example/"}}, r"site\.start\.0: url must be an absolute http"),
    ({"key": "s", "site": {"sitemap": None, "start": "https://s.example/"}}, r"site\.sitemap: must not be null"),
    ({"key": "s", "site": {"start": "https://s.example/", "stat": 1}}, r"site: unknown option stat \(did you mean"),
    ({"key": "s", "site": "https://s.example/"}, r"site must be a mapping with sitemap or start"),
    ({"key": "s", "site": None}, r"site: must not be null"),
    ({"url": "https://s.example/", "rules": [{"match": "/a/", "region": "main"}]},
     r"rules apply to the pages of a site watch"),
    ({"key": "s", "site": {"start": "https://s.example/"}, "rules": []}, r"rules must be a non-empty list"),
    ({"key": "s", "site": {"start": "https://s.example/"}, "rules": [{"region": "main"}]}, r"rules\.0\.match is req"),
    ({"key": "s", "site": {"start": "https://s.example/"}, "rules": [{"match": "("}]},
     r"rules\.0\.match: '\(' is not a regular expression"),
    ({"key": "s", "site": {"start": "https://s.example/"}, "rules": [{"match": "/a/", "regoin": "main"}]},
     r"rules\.0: unknown option regoin \(did you mean region\?\)"),
    ({"key": "s", "site": {"start": "https://s.example/"}, "rules": [{"match": "/a/", "threshold": 99}]},
     r"rules\.0\.threshold must be a whole number of bits"),
    ({"key": "s", "site": {"start": "https://s.example/"}, "rules": [{"match": "/a/", "type": "json",
                                                                       "region": "main"}]},
     r"rules\.0: region read HTML pages"),
    ({"key": "s", "site": {"start": "https://s.example/"}, "canary": {"expect": "change", "within": "1d"}},
     r"canary applies to a watch of one page"),
    ({"key": "a|b", "url": "https://s.example/"}, r"key must not contain '\|'"),
    ({"key": "a|b", "site": {"start": "https://s.example/"}}, r"key must not contain '\|'"),
])
def test_bad_site_watches_are_refused_in_one_line_by_the_crawl_and_the_schema(watch: dict[str, Any],
                                                                               message: str) -> None:
    document = {"watches": [watch]}
    with pytest.raises(WatchlistError, match=message) as refused:
        parse_watchlist(document)
    assert "\n" not in str(refused.value)
    if "is not a regular expression" not in message and "read HTML pages" not in message:  # the crawl's alone
        assert list(validator().iter_errors(document)), "the schema lets it through"


def test_rules_are_checked_with_the_options_they_merge_with() -> None:
    # a jsonld site whose rule adds an ignore: the rule's page is still compared by jsonld
    with pytest.raises(WatchlistError, match=r"watch #1 \(s\): rules\.0: ignore applies to text watches"):
        parse_watchlist({"watches": [{"key": "s", "site": {"start": "https://s.example/"},
                                      "jsonld": {"type": "Product", "fields": "name"},
                                      "rules": [{"match": "/a/", "ignore": {"text": "^x"}}]}]})
    with pytest.raises(WatchlistError, match=r"rules\.0: notify\.when 'price < 3' names 'price'"):
        parse_watchlist({"watches": [{"key": "s", "site": {"start": "https://s.example/"},
                                      "rules": [{"match": "/a/", "notify": {"urls": "json://h.example/",
                                                                            "when": "price < 3"}}]}]})


@pytest.mark.parametrize("is_json", [False, True])
def test_a_rule_that_unsets_a_text_option_on_jsonld_pages_is_accepted(is_json: bool) -> None:
    # null unsets: include and ignore set to null on pages compared by jsonld give them nothing
    document = {"watches": [{"key": "shop", "site": {"sitemap": "https://shop.example/sitemap.xml"},
                             "jsonld": {"type": "Product", "fields": ["offers.price"]},
                             "confirm": False, "conditional": False, "sort_lines": True,
                             "rules": [{"match": "/p/", "include": None, "ignore": None, "confirm": None,
                                        "conditional": None, "sort_lines": None},
                                       {"match": "/blog/", "jsonld": None, "include": ["title"]},
                                       {"match": ".", "region": None, "fields": None, "every": None,
                                        "notify": None, "render": None, "type": None, "kinds": None}]}]}
    assert not [e.message for e in validator().iter_errors(document)]
    text = json.dumps(document) if is_json else yaml.safe_dump(document)
    for shop in (parse_watchlist_text(text, "w", is_json=is_json)[0],
                 next(iter(spool_watchlist(text, "w", is_json=is_json)))):
        product = page_watch(shop, "https://shop.example/p/1")
        assert product.jsonld is not None and product.include == () and not product.compares_text
        # true-or-false options unset: their defaults, not the site watch's values
        assert (product.confirm, product.conditional, product.sort_lines) == (True, True, False)
        assert (shop.confirm, shop.conditional, shop.sort_lines) == (False, False, True)
        post = page_watch(shop, "https://shop.example/blog/a")
        assert post.jsonld is None and post.include == ("title",)
        other = page_watch(shop, "https://shop.example/x")
        assert other.jsonld is not None and other.render is None and other.every is None
    # a value is still refused where the page is not a text page
    document["watches"][0]["rules"][0]["include"] = ["title"]
    with pytest.raises(WatchlistError, match=r"rules\.0: include applies to text watches"):
        parse_watchlist(document)


def test_good_site_watches_are_accepted_by_the_crawl_and_the_schema() -> None:
    document = yaml.safe_load(SITE_WATCHLIST)
    document["watches"] += [
        {"key": 7, "site": {"start": ["https://a.example/", "https://a.example/b"], "depth": 0, "max_pages": 1.0}},
        {"key": "x", "site": {"sitemap": "https://x.example/robots.txt", "every": 3600},
         "rules": [{"match": "/json/", "type": "json"}, {"match": ".", "render": True}]},
    ]
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator().iter_errors(document)]
    assert not errors, errors
    watches = parse_watchlist(document)
    assert watches[4].key == "7" and watches[4].site is not None and watches[4].site.max_pages == 1
    assert page_watch(watches[5], "https://x.example/json/a").type == "json"


@pytest.mark.parametrize("is_json", [False, True])
def test_the_spool_carries_site_watches(is_json: bool) -> None:
    document = yaml.safe_load(SITE_WATCHLIST)
    text = json.dumps(document) if is_json else SITE_WATCHLIST
    whole = parse_watchlist_text(text, "w", is_json=is_json)
    spooled = list(spool_watchlist(text, "w", is_json=is_json))
    assert spooled == whole
    shop = spooled[2]
    assert page_watch(shop, "https://shop.example/blog/x") == page_watch(whole[2], "https://shop.example/blog/x")
    assert page_watch(shop, "https://shop.example/p/1").spec() == page_watch(whole[2], "https://shop.example/p/1").spec()


def test_a_rule_that_renders_makes_the_watchlist_render() -> None:
    text = "watches:\n  - key: s\n    site: {start: 'https://s.example/'}\n    rules: [{match: /app/, render: true}]\n"
    assert spool_watchlist(text, "w", is_json=False).renders
    assert not spool_watchlist(text.replace("true", "false"), "w", is_json=False).renders


def test_duplicate_keys_count_site_watches_too() -> None:
    with pytest.raises(WatchlistError, match="duplicate key 'docs'"):
        parse_watchlist({"watches": [{"key": "docs", "site": {"start": "https://d.example/"}},
                                     {"key": "docs", "url": "https://d.example/"}]})


def test_schema_knows_site_and_rules() -> None:
    from tests.watchlist.test_watchlist_schema import SHIPPED

    schema = json.loads(SHIPPED.read_text(encoding="utf-8"))
    watch = schema["$defs"]["WatchModel"]["properties"]
    assert {"site", "rules"} <= set(watch) and watch["site"].get("description")
    jsonschema.Draft202012Validator.check_schema(schema)
