"""The dependency set and the decision to re-check instead of rendering (pure: no browser)."""

from __future__ import annotations

import pytest

from changewatch.core.render_options import RenderOptions, parse_render
from changewatch.core.validators import HttpValidators
from changewatch.render.deps import Dependency, DependencySet, is_dependency, unchanged
from changewatch.render.preflight import plan

DOC = Dependency("https://a.example/p", "document", 200, "d" * 64, etag='"d1"')
API = Dependency("https://api.example/data?id=1", "fetch", 200, "a" * 64, final_url="https://api.example/v2/data",
                 last_modified="Wed, 01 May 2024 00:00:00 GMT", headers=(("accept", "application/json"),))


def test_a_set_survives_the_store_as_it_was() -> None:
    deps = DependencySet("f1", (DOC, API), None)
    again = DependencySet.decode(deps.encode())
    assert again == deps and again is not None and again.urls == {DOC.url, API.url}
    unknown = DependencySet("f1", (DOC,), "a POST request for https://a.example/api (not re-checkable by GET)", False)
    assert DependencySet.decode(unknown.encode()) == unknown


@pytest.mark.parametrize("text", [None, "", "not json", "[]", '{"v": 2, "options": "f", "deps": []}',
                                  '{"v": 1, "options": "f", "deps": [{"url": "u"}]}', '{"v": 1}'])
def test_a_set_that_cannot_be_read_is_none(text: str | None) -> None:
    assert DependencySet.decode(text) is None


def test_a_set_is_confirmed_by_the_same_urls_on_the_next_render() -> None:
    first = DependencySet("f", (DOC, API)).after(None)
    assert first.confirmed  # the first render is trusted: every later one checks
    same = DependencySet("f", (DOC, Dependency(API.url, "fetch", 200, "b" * 64))).after(first)
    assert same.confirmed  # the data changed, the URLs did not
    other = DependencySet("f", (DOC, Dependency("https://api.example/data?id=1&_=99", "fetch", 200, "a" * 64)))
    assert not other.after(same).confirmed  # a page that asks for other URLs on other loads
    assert DependencySet("f", other.deps).after(other.after(same)).confirmed  # twice the same: trusted again


def test_what_counts_as_unchanged() -> None:
    assert unchanged(DOC, status=304, url=DOC.url, sha256=None, validated=True)
    assert not unchanged(DOC, status=304, url=DOC.url, sha256=None, validated=False)  # a 304 we did not ask for
    assert unchanged(DOC, status=200, url=DOC.url, sha256="d" * 64, validated=True)  # validators ignored, same body
    assert not unchanged(DOC, status=200, url=DOC.url, sha256="e" * 64, validated=True)
    assert not unchanged(DOC, status=404, url=DOC.url, sha256="d" * 64, validated=True)
    assert unchanged(API, status=200, url="https://api.example/v2/data", sha256="a" * 64, validated=False)
    assert not unchanged(API, status=200, url="https://api.example/v3/data", sha256="a" * 64, validated=False)
    assert not API.revalidates and DOC.revalidates  # a redirected dependency is re-checked by its body


def test_images_fonts_and_styles_are_not_dependencies_anything_else_is() -> None:
    assert not any(map(is_dependency, ("image", "font", "media", "stylesheet")))
    assert all(map(is_dependency, ("document", "script", "xhr", "fetch", "other", "something-new")))


def _row(deps: DependencySet | None, **kw: object) -> HttpValidators:
    values: dict[str, object] = {"url": "https://a.example/p", "key": "k", "full_at": "2024-05-01T00:00:00Z",
                                 "spec": "s", "render": deps.encode() if deps else None, **kw}
    return HttpValidators(**values)  # type: ignore[arg-type]


FP = RenderOptions().fingerprint()
GOOD = DependencySet(FP, (DOC, API))


@pytest.mark.parametrize(("rows", "why"), [
    ([], "unknown"),
    ([_row(None)], "unknown"),
    ([_row(GOOD, spec="other")], "spec_changed"),
    ([_row(DependencySet("another", (DOC,)))], "options_changed"),
    ([_row(DependencySet(FP, (DOC,), "a POST"))], "deps_unknown"),
    ([_row(DependencySet(FP, (DOC,), None, confirmed=False))], "unconfirmed"),
    ([_row(GOOD, runs=24)], "full_runs"),
    ([_row(GOOD), _row(GOOD, key="j", full_at="2024-05-02T00:00:00Z")], "keys_disagree"),
    ([_row(GOOD, runs=23)], None),
    ([_row(GOOD), _row(GOOD, key="j")], None),
])
def test_when_a_page_is_re_checked_instead_of_rendered(rows: list[HttpValidators], why: str | None) -> None:
    decided = plan(rows, fingerprint=FP, spec="s", full_runs=24)
    assert decided.why == why
    if why is None:
        assert decided.deps == GOOD and decided.keys == tuple(r.key for r in rows)


def test_no_re_check_without_conditional_requests_or_with_the_safety_net_at_zero() -> None:
    assert plan([_row(GOOD)], fingerprint=FP, spec="s", full_runs=24, conditional=False).why == "opt_out"
    assert plan([_row(GOOD)], fingerprint=FP, spec="s", full_runs=0).why == "full_runs"


@pytest.mark.parametrize(("value", "message"), [
    ({"timeout": 0}, "more than 0"), ({"timeout": -1}, "more than 0"), ({"timeout": "20"}, "number of seconds"),
    ({"timeout": True}, "number of seconds"), ({"timeout": float("inf")}, "number of seconds"),
    ({"block": ["script"]}, "'script' is not a resource type"), ({"wait_for": " "}, "CSS selector"),
    ({"colour": 1}, "unknown option 'colour'"), ("yes", "true, false or a mapping")])
def test_bad_render_options_say_what_is_wrong(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_render(value)


def test_render_options_fingerprint_how_a_page_is_rendered() -> None:
    assert parse_render(True) == parse_render({}) == RenderOptions()
    assert parse_render({"block": ["font", "image", "media"]}).fingerprint() == FP  # type: ignore[union-attr]
    assert parse_render({"wait_for": "#p"}).fingerprint() != FP  # type: ignore[union-attr]
    assert parse_render({"block": "image"}) == RenderOptions(block=("image",))
