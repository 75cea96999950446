"""Shared fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from changewatch.demo.site import DemoSite

from .conditional.servers import OddServer


@pytest.fixture
def demo_site() -> Iterator[tuple[DemoSite, str]]:
    site = DemoSite()
    base = site.start()
    try:
        yield site, base
    finally:
        site.stop()


@pytest.fixture
def odd_server() -> Iterator[tuple[OddServer, str]]:
    server = OddServer()
    base = server.start()
    try:
        yield server, base
    finally:
        server.stop()
