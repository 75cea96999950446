"""A watch's ``notify:``: the forms it takes, what is refused when the watchlist is read (with a
message that never quotes a destination's secrets), and how a change is routed by it."""

from __future__ import annotations

from typing import Any

import pytest

from changewatch.core.observation import Observation
from changewatch.notify.routing import FieldValues, Router
from changewatch.notify.setting import NotifySetting
from changewatch.watchlist import WatchlistError, parse_watchlist

from ..e2e.crawl import schema_problems

PRODUCT = {"url": "https://shop.example/p/1", "jsonld": {"type": "Product", "fields": ["name", "offers.price",
                                                                                       "offers.availability"]}}


def watch(**options: Any) -> dict[str, Any]:
    return {**PRODUCT, **options}


@pytest.mark.parametrize("notify", [
    "json://hooks.example/x",
    ["json://hooks.example/x", "mailto://u:p@mail.example"],
    {"urls": "json://hooks.example/x", "when": "offers.price < 80", "kinds": "field"},
    {"urls": "json://hooks.example/x", "when": {"crossing": "offers.price < 80 and offers.availability == InStock"}},
    [{"urls": ["json://hooks.example/x"], "kinds": ["field", "error"]}, "json://hooks.example/y"],
])
def test_the_forms_notify_takes(notify: Any) -> None:
    document = {"watches": [watch(notify=notify)]}
    assert schema_problems(document) == []
    [w] = parse_watchlist(document)
    assert w.notify and all(rule.destinations for rule in w.notify)


@pytest.mark.parametrize(("notify", "says"), [
    ("slakc://T000/B000/secret", "notify.0.urls.0: slakc://…: Apprise knows no scheme 'slakc'"),
    ({"urls": "slack://onlysecret"}, "Apprise cannot send to it"),
    ({"urls": "json://h.example/x", "when": "offers.price = 80"}, "notify.0.when: unexpected '='"),
    ({"urls": "json://h.example/x", "when": "price < 80"}, "names 'price', which this watch does not track"),
    ({"urls": "json://h.example/x", "kinds": ["noise"]}, "notify.0.kinds.0"),
    ({"urls": "json://h.example/x", "when": {"crossing": "price < 80"}},
     "notify.when {crossing: 'price < 80'} names 'price', which this watch does not track (its fields: name, "
     "offers.availability, offers.price)"),
    ({"urls": "json://h.example/x", "when": {"crossing": "offers.price = 80"}},
     "notify.0.when.crossing: unexpected '=' at character 14 (use ==)"),
    ({"urls": "json://h.example/x", "when": {"crossing": "offers.price < 80", "once": True}},
     "notify.0.when: unknown option once of a crossing condition; write {crossing: 'offers.price < 80'} and nothing "
     "else"),
    ({"urls": "json://h.example/x", "when": {"crosing": "offers.price < 80"}}, "unknown option crosing"),
    ({"urls": "json://h.example/x", "when": {"crossing": 80}},
     "notify.0.when.crossing must be a condition such as 'offers.price < 80', not 80"),
    ({"urls": "json://h.example/x", "when": {"crossing": ["offers.price < 80"]}}, "when.crossing must be"),
    ({"urls": "json://h.example/x", "when": {}}, "notify.0.when: an empty mapping"),
    ({"urls": "json://h.example/x", "when": 80}, "notify.0.when must be a condition such as 'offers.price < 80' or "
     "{crossing: 'offers.price < 80'}, not 80"),
    ({"urls": []}, "notify.0.urls"),
    ({"url": "json://h.example/x"}, "unknown option url"),
    (5, "notify"),
])
def test_what_is_refused_and_how_it_is_said(notify: Any, says: str) -> None:
    with pytest.raises(WatchlistError) as caught:
        parse_watchlist({"watches": [watch(notify=notify)]}, "w.yaml")
    assert says in str(caught.value), str(caught.value)
    assert "secret" not in str(caught.value)
    if isinstance(notify, dict) and "when" in notify:
        assert "\n" not in str(caught.value)  # a bad condition is one problem, said in one line


@pytest.mark.parametrize("when", [{"crossing": "offers.price < 80", "once": True}, {"crossing": 80}, {},
                                  {"crossing": " "}, 80])
def test_the_schema_refuses_a_malformed_crossing_too(when: Any) -> None:
    assert schema_problems({"watches": [watch(notify={"urls": "json://h.example/x", "when": when})]})


def test_a_condition_on_a_text_watch_or_under_defaults_names_each_watch() -> None:
    document = {"defaults": {"notify": {"urls": "json://h.example/x", "when": "offers.price < 80"}},
                "watches": [PRODUCT, {"url": "https://shop.example/terms"}]}
    with pytest.raises(WatchlistError) as caught:
        parse_watchlist(document, "w.yaml")
    assert str(caught.value) == ("w.yaml: watch #2 (https://shop.example/terms): notify.when 'offers.price < 80' "
                                 "names 'offers.price', which this watch does not track (it has none: a condition "
                                 "compares fields of jsonld, fields or json)")


def test_routing_by_kind_watch_and_condition() -> None:
    [w] = parse_watchlist({"watches": [watch(key="p1", notify=[
        {"urls": "json://deals.example/x", "when": "offers.price < 80 and offers.availability == InStock"},
        {"urls": "json://errors.example/x", "kinds": "error"}])]})
    router = Router(NotifySetting()({"field": "json://prices.example/x"}), {"p1": w.notify})
    kinds = {"offers.price": "price", "offers.availability": "availability"}

    def route(record: dict[str, Any], fields: dict[str, Any] | None = None) -> list[str]:
        obs = Observation(key="p1", url="u", fields=fields)
        routed = router.route(record, FieldValues(record, obs.fields, kinds))
        return [d.shown.split("//")[1].split(".")[0] for d in routed.destinations]

    cheaper = {"key": "p1", "kind": "field", "changes": {"offers.price": {"old": "€ 89,00", "new": "€ 79,00"}}}
    assert route(cheaper, {"offers.price": "€ 79,00", "offers.availability": "http://schema.org/InStock"}) == [
        "prices", "deals"]
    assert route(cheaper, {"offers.price": "€ 79,00", "offers.availability": "OutOfStock"}) == ["prices"]
    assert route(cheaper) == ["prices"]  # the availability is not known: the condition does not hold
    assert route({"key": "p1", "kind": "error", "error": "blocked: HTTP 403"}) == ["errors"]
    assert route({"key": "other", "kind": "field", "changes": {}}) == ["prices"]
    assert len(router.destinations) == 3


def test_a_crossing_fires_once_a_plain_condition_whenever_it_holds() -> None:
    """The price hook: with the price already at 62, a change of the name is sent to a plain
    ``when:`` (it holds now, and the message can say so: 62 → 62), never to a crossing."""
    [w] = parse_watchlist({"watches": [watch(key="p1", notify=[
        {"urls": "json://deals.example/x", "when": {"crossing": "offers.price < 80"}},
        {"urls": "json://state.example/x", "when": "offers.price < 80"}])]})
    router = Router(NotifySetting()(None), {"p1": w.notify})
    kinds = {"offers.price": "price"}

    def route(changes: dict[str, Any], fields: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
        record: dict[str, Any] = {"key": "p1", "kind": "field", "changes": changes}
        routed = router.route(record, FieldValues(record, fields, kinds))
        return ([d.shown.split("//")[1].split(".")[0] for d in routed.destinations],
                {c["destinations"][0].split("//")[1].split(".")[0]: c for c in routed.conditions})

    fell, conditions = route({"offers.price": {"old": "€ 89,00", "new": "€ 62,00"}},
                             {"name": "Kettle", "offers.price": "€ 62,00"})
    assert fell == ["deals", "state"]
    assert conditions["deals"] == {"when": {"crossing": "offers.price < 80"}, "destinations": ["json://deals.example/x"],
                                   "values": {"offers.price": {"old": "89 EUR", "new": "62 EUR"}}}
    renamed, conditions = route({"name": {"old": "Kettle", "new": "Kettle 2000"}},
                                {"name": "Kettle 2000", "offers.price": "€ 62,00"})
    assert renamed == ["state"]
    assert conditions["state"]["values"] == {"offers.price": {"old": "62 EUR", "new": "62 EUR"}}
    lower, _ = route({"offers.price": {"old": "€ 62,00", "new": "€ 59,00"}}, {"offers.price": "€ 59,00"})
    assert lower == ["state"]  # below 80 before and after: no crossing
    back_up, _ = route({"offers.price": {"old": "€ 59,00", "new": "€ 99,00"}}, {"offers.price": "€ 99,00"})
    assert back_up == []
    again, _ = route({"offers.price": {"old": "€ 99,00", "new": "€ 75,00"}}, {"offers.price": "€ 75,00"})
    assert again == ["deals", "state"]  # a second crossing fires again


def test_a_site_watchs_pages_are_routed_by_their_page_options() -> None:
    from changewatch.notify.crawl import site_watches, watch_rules

    [site] = parse_watchlist({"watches": [{"key": "docs", "site": {"sitemap": "https://docs.example/sitemap.xml"},
                                           "notify": "json://all.example/x",
                                           "rules": [{"match": "/blog/", "notify": "json://blog.example/x"},
                                                     {"match": "/quiet/", "notify": None}]}]})

    class Spider:
        watches = (site,)
        watchlist_fetched = True

    sites = site_watches(Spider())
    router = Router(NotifySetting()(None), watch_rules(Spider()), sites)

    def route(record: dict[str, Any]) -> list[str]:
        return [d.shown.split("//")[1].split(".")[0] for d in router.route(record, FieldValues(record, None, {}))
                .destinations]

    page = {"kind": "content", "site_watch": "docs"}
    assert route({**page, "key": "docs", "kind": "entities"}) == ["all"]  # the page set's record
    assert route({**page, "key": "docs|https://docs.example/guide", "url": "https://docs.example/guide"}) == ["all"]
    assert route({**page, "key": "docs|https://docs.example/blog/1", "url": "https://docs.example/blog/1"}) == [
        "blog"]
    assert route({**page, "key": "docs|https://docs.example/quiet/1", "url": "https://docs.example/quiet/1"}) == []
    assert sorted(d.shown for d in router.destinations.values()) == ["json://all.example/x", "json://blog.example/x"]
    assert all(d.guarded for d in router.destinations.values())  # a fetched watchlist's: under the SSRF policy
