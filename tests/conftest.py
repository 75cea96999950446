"""Shared fixtures."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from changewatch.demo.site import DemoSite

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture
def demo_site() -> Iterator[tuple[DemoSite, str]]:
    site = DemoSite()
    base = site.start()
    try:
        yield site, base
    finally:
        site.stop()
