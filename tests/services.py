"""Real services the tests start or connect to: skip with a reason when one is missing, but
fail under CI=true, where .ci/run is responsible for installing and starting them."""

from __future__ import annotations

import os
import shutil

import pytest

__all__ = ["find_chromium", "find_nginx", "require"]


def require(available: bool, what: str, how: str) -> None:
    if available:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{what} is required under CI=true ({how})")
    pytest.skip(f"{what} is not available here: {how}")


def find_nginx() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx")
                                          if os.access(p, os.X_OK)), None)


def find_chromium() -> str | None:
    """Debian's chromium (``apt-get install -y -q chromium``; .ci/run installs it)."""
    return shutil.which("chromium") or shutil.which("chromium-browser") or next(
        (p for p in ("/usr/bin/chromium", "/usr/lib/chromium/chromium") if os.access(p, os.X_OK)), None)
