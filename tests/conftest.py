"""Shared fixtures: the local sites the tests crawl, each started on a free port and stopped after."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, TypeVar

import pytest

from changewatch.demo.site import DemoSite
from changewatch.examples.site import FixtureSite

from .conditional.servers import OddServer


class _Site(Protocol):
    def start(self) -> str: ...

    def stop(self) -> None: ...


S = TypeVar("S", bound=_Site)


def _served(site: S) -> Iterator[tuple[S, str]]:
    base = site.start()
    try:
        yield site, base
    finally:
        site.stop()


@pytest.fixture
def demo_site() -> Iterator[tuple[DemoSite, str]]:
    yield from _served(DemoSite())


@pytest.fixture
def odd_server() -> Iterator[tuple[OddServer, str]]:
    yield from _served(OddServer())


@pytest.fixture
def catalogue() -> Iterator[tuple[FixtureSite, str]]:
    yield from _served(FixtureSite("catalogue"))


@pytest.fixture
def board() -> Iterator[tuple[FixtureSite, str]]:
    yield from _served(FixtureSite("board"))
