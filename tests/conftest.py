"""Shared fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from changewatch.demo.site import DemoSite


@pytest.fixture
def demo_site() -> Iterator[tuple[DemoSite, str]]:
    site = DemoSite()
    base = site.start()
    try:
        yield site, base
    finally:
        site.stop()
