"""Open a report in a real headless Chromium: the DOM it rendered, and a screenshot.

Screenshots are kept for people to look at: under ``$CHANGEWATCH_TEST_ARTIFACTS`` when it is
set (CI can keep that folder), else in the test's tmp dir; each test prints the path."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ..services import find_chromium, require

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars")


def chromium() -> str:
    found = find_chromium()
    require(found is not None, "Chromium", "apt-get install -y -q chromium")
    assert found is not None
    return found


def _run(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    # its own profile and home: nothing of the machine's, nothing left behind
    env = {**os.environ, "HOME": str(home)}
    return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={home / 'profile'}", *args], capture_output=True,
                          text=True, timeout=180, env=env)


def dump_dom(page: Path, tmp: Path) -> str:
    """The DOM Chromium built from *page* (after parsing, styles and its policy applied)."""
    proc = _run(["--dump-dom", page.as_uri()], tmp)
    assert proc.returncode == 0 and "<html" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def artifacts(tmp: Path) -> Path:
    where = Path(os.environ.get("CHANGEWATCH_TEST_ARTIFACTS") or tmp / "artifacts")
    where.mkdir(parents=True, exist_ok=True)
    return where


def screenshot(page: Path, tmp: Path, name: str, height: int = 3000) -> Path:
    """A PNG of *page* as Chromium draws it (1280 pixels wide), kept as a test artifact."""
    shot = artifacts(tmp) / name
    proc = _run([f"--screenshot={shot}", f"--window-size=1280,{height}", page.as_uri()], tmp)
    assert proc.returncode == 0 and shot.exists() and shot.stat().st_size > 10_000, proc.stderr[-2000:]
    print(f"screenshot of the report: {shot}")
    return shot


@pytest.fixture
def browser_home(tmp_path: Path) -> Path:
    home = tmp_path / "chromium-home"
    home.mkdir()
    return home
