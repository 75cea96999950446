"""The resolver a process installs from settings it cannot use: the strictest policy, until the
crawl, which says what is wrong in one line, stops or puts its own in its place."""

from __future__ import annotations

from types import SimpleNamespace

from scrapy.settings import Settings

from changewatch.guard import GuardedResolver


def test_bad_process_settings_give_a_provisional_guard_with_the_default_policy() -> None:
    process = SimpleNamespace(settings=Settings({"CHANGEWATCH_ALLOW_PRIVATE": "maybe"}))
    reactor = SimpleNamespace(getThreadPool=lambda: None)
    guard = GuardedResolver.from_crawler(process, reactor)
    assert guard.provisional
    assert guard.policy.enabled and not guard.policy.allow_private and guard.policy.checks_addresses
    assert guard.refuse("internal.example", ["127.0.0.1"])  # fails closed


def test_good_process_settings_give_the_guard_for_good() -> None:
    process = SimpleNamespace(settings=Settings({"CHANGEWATCH_ALLOW_PRIVATE": True}))
    guard = GuardedResolver.from_crawler(process, SimpleNamespace(getThreadPool=lambda: None))
    assert not guard.provisional and guard.policy.allow_private
