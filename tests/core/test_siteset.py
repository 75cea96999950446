"""A site's page set: what a run puts in it and which pages lastmod leaves alone (core/siteset.py)."""

from __future__ import annotations

from changewatch.core.siteset import (
    LASTMOD_SAMPLE,
    bounded,
    kept_pages,
    loss_confirmed,
    parse_lastmod,
    plan_pages,
    shrunk,
)


def test_bounded_keeps_the_first_pages_in_a_stable_order_whatever_the_listing_order():
    urls = [f"https://a.example/{i:03d}" for i in range(50)]
    first, left = bounded(urls, 10)
    again, _ = bounded(list(reversed(urls)), 10)
    assert first == again == urls[:10] and left == 40
    assert bounded(urls, 100) == (urls, 0)
    # a new page that sorts first never pushes out (removes) a page already watched
    assert bounded(["https://a.example/000-new", *urls[:10]], 10, previous=urls[:10]) == (urls[:10], 1)


def test_shrink_needs_confirmation_only_for_a_big_sudden_loss():
    assert shrunk(5000, 0) and shrunk(5000, 2499)
    assert not shrunk(5000, 2500) and not shrunk(5000, 6000)
    assert not shrunk(4, 1)  # a tiny site loses pages without ceremony


def test_loss_confirmed_by_the_same_list_again_and_missing_pages_gone():
    assert loss_confirmed(True, [404, 404, 410, 200, None])
    assert not loss_confirmed(True, [200, 200, 200, 404, 404])  # the sitemap was cut short: pages still answer
    assert not loss_confirmed(True, [None, None, 404])  # failures prove nothing
    assert not loss_confirmed(False, [404] * 5)  # the second fetch lists something else


def test_link_mode_keeps_pages_when_a_linking_page_failed():
    assert kept_pages(["a", "b", "c"], {"a", "d"}, some_failed=False) == ["a", "d"]
    assert kept_pages(["a", "b", "c"], {"a", "d"}, some_failed=True) == ["a", "b", "c", "d"]
    assert kept_pages(["a", "b"], {"a"}, some_failed=False, unfinished=True) == ["a", "b"]


def test_parse_lastmod_forms():
    assert parse_lastmod("2026-11-29T12:00:00Z") == parse_lastmod("2026-11-29T13:00:00+01:00")
    assert parse_lastmod("2026-11-29") is not None
    assert parse_lastmod("") is None and parse_lastmod(None) is None and parse_lastmod("yesterday") is None


def test_plan_moved_checked_skipped_unlisted():
    pages = [f"https://a.example/{i}" for i in range(1000)]
    lastmods = {url: 100.0 for url in pages}
    lastmods[pages[0]] = 500.0  # moved since its last observation
    lastmods[pages[1]] = None  # no lastmod
    seen = {url: 200.0 for url in pages}
    del seen[pages[2]]  # never observed
    plan = plan_pages(pages, lastmods, seen, trusted=True, turn=3)
    assert plan.moved == [pages[0], pages[2]] and plan.unlisted == [pages[1]]
    unmoved = len(pages) - 3
    assert len(plan.checked) + len(plan.skipped) == unmoved
    # about one in ten unmoved pages is checked per run: the sample
    assert 0.06 * unmoved <= len(plan.checked) <= 0.14 * unmoved
    # and every page's turn comes within LASTMOD_SAMPLE runs
    checked = set()
    for turn in range(LASTMOD_SAMPLE):
        checked |= set(plan_pages(pages, lastmods, seen, trusted=True, turn=turn).checked)
    assert len(checked) == unmoved


def test_untrusted_lastmod_checks_every_page_and_always_now_changes_nothing():
    pages = [f"https://a.example/{i}" for i in range(100)]
    seen = {url: 200.0 for url in pages}
    plan = plan_pages(pages, {url: 100.0 for url in pages}, seen, trusted=False, turn=0)
    assert len(plan.checked) == 100 and not plan.skipped
    # a site whose lastmod is always "now": every page moved, every page fetched (as without lastmod)
    plan = plan_pages(pages, {url: 300.0 for url in pages}, seen, trusted=True, turn=0)
    assert len(plan.moved) == 100


def test_a_page_added_to_its_set_is_a_fresh_baseline_whatever_was_stored():
    from changewatch.core import verdict as engine
    from changewatch.core.comparisons import Kind, load_comparisons
    from changewatch.core.observation import Observation
    from changewatch.core.siteset import REBASELINE

    comparisons = load_comparisons()
    old = engine.digest(Observation(key="s|u", url="https://a.example/u", fields={"price": "1.00"}), comparisons)
    new = Observation(key="s|u", url="https://a.example/u", fields={"price": "2.00"})
    assert engine.observe(new, old, comparisons).kind is Kind.FIELD
    new.options[REBASELINE] = True
    verdict = engine.observe(new, old, comparisons)
    assert verdict.kind is Kind.BASELINE and verdict.keep is not None
