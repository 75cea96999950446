"""A wheel of this checkout as it is (uncommitted changes included), for the tests that install
changewatch the way a user does: built from a copy of the tree, so that the build leaves nothing
(build/, *.egg-info) in the checkout."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

__all__ = ["build_wheel", "run_wheel"]


def build_wheel(folder: Path) -> Path:
    """``pip wheel --no-deps`` of the checkout's files (tracked, and untracked but not ignored)."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    source = folder / "source"
    for name in filter(None, files):
        if (ROOT / name).is_file():  # a file deleted but not yet committed is gone
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(folder),
                            str(source)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    [wheel] = folder.glob("*.whl")
    assert wheel.name.startswith("scrapy_changewatch-"), wheel.name  # the distribution's name
    return wheel


def run_wheel(basetemp: Path) -> Path:
    """The wheel of this test run, built once for all its pytest-xdist workers: the first to ask
    builds it in the run's shared temporary folder (beside *basetemp*, the worker's own), the
    others wait for it and find it there. In one process, built in *basetemp*."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        folder = basetemp / "checkout-wheel"
    else:
        folder = basetemp.parent / "checkout-wheel"
    folder.mkdir(exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = list(folder.glob("*.whl"))
        return built[0] if built else build_wheel(folder)
