"""Fixtures of the rendering tests: a real Chromium (skipped with how to install it when absent,
failed under CI=true: .ci/run installs Debian's chromium) and the JavaScript site."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from changewatch.render.browser import find_browser, how_to_install

from ..services import require
from .site import JsSite


@pytest.fixture(scope="session")
def chromium() -> str:
    path = find_browser(None)
    require(path is not None, "Chromium", how_to_install())
    assert path is not None
    return path


@pytest.fixture
def js_site(chromium: str) -> Iterator[JsSite]:
    site = JsSite(page_count=3)
    try:
        yield site
    finally:
        site.stop()
