"""Destinations and CHANGEWATCH_NOTIFY: checked by Apprise, never quoted with their secrets."""

from __future__ import annotations

from typing import Any

import pytest

from changewatch.config.parsers import BadValue
from changewatch.core.destinations import DestinationError, destination, split_urls
from changewatch.notify.setting import NotifySetting


def test_a_destination_is_known_by_a_digest_and_shown_without_its_secrets() -> None:
    d = destination("json://user:hunter2@hooks.example/changewatch?token=abc")
    assert d.shown == "json://user:****@hooks.example/changewatch" and "hunter2" not in repr(d)
    assert len(d.id) == 20 and d.id == destination(" json://user:hunter2@hooks.example/changewatch?token=abc ").id
    slack = destination("slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ/#general")
    assert "TIiajkdnlazkcOXrIdevi7FQ" not in slack.shown and slack.shown.startswith("slack://")


@pytest.mark.parametrize(("url", "says"), [
    ("slakc://T1JJ3T3L2/A1BRTD4JD/secretsecret", "Apprise knows no scheme 'slakc'"),
    ("slack://onlyonesecrettoken", "Apprise cannot send to it"),
    ("hooks.example/x", "is not an Apprise URL"),
    ("", "an empty destination"),
])
def test_a_bad_destination_is_named_by_its_scheme_only(url: str, says: str) -> None:
    with pytest.raises(DestinationError, match=says) as caught:
        destination(url)
    assert "secret" not in str(caught.value) and "T1JJ" not in str(caught.value)


def test_urls_split_at_spaces_and_at_commas_before_a_scheme() -> None:
    assert split_urls("json://a.example/x, mailto://u:p@m.example?to=a@x.example,b@x.example  json://b.example") == [
        "json://a.example/x", "mailto://u:p@m.example?to=a@x.example,b@x.example", "json://b.example"]
    assert split_urls(["json://a.example/x", " "]) == ["json://a.example/x"]


@pytest.mark.parametrize("raw", [None, "", [], {}, "  "])
def test_nothing_configured_is_no_destination(raw: Any) -> None:
    assert not NotifySetting()(raw)


def test_routes_for_every_kind_and_per_kind() -> None:
    every = NotifySetting()("json://a.example/x json://a.example/x json://b.example/y")
    assert [d.shown for d in every.every] == ["json://a.example/x", "json://b.example/y"]  # each once
    by_kind = NotifySetting()('{"field": "json://a.example/x", "error": ["json://b.example/y", "json://a.example/x"]}')
    assert [d.shown for d in by_kind.for_kind("error")] == ["json://b.example/y", "json://a.example/x"]
    assert by_kind.for_kind("content") == () and len(by_kind.all) == 2


@pytest.mark.parametrize(("raw", "says"), [
    ({"noise": "json://a.example/x"}, "unknown kind 'noise'"),
    ({"field": 5}, "field: expected an Apprise URL"),
    ('{"field": ', "not valid JSON"),
    (["json://a.example/x", "slakc://secret"], "destination 2: slakc://…"),
])
def test_a_bad_setting_says_which_entry(raw: Any, says: str) -> None:
    with pytest.raises(BadValue, match=None) as caught:
        NotifySetting()(raw)
    assert says in str(caught.value) and "secret" not in str(caught.value)
