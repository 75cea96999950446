"""Scrapyd's environments built ahead: the builds of tests/e2e/test_scrapyd.py and
test_scrapyd_own_project.py (cached in .venv/, each minutes the first time, mostly waiting on the
package registry) start in a background thread when a run that includes those tests starts, so
that a worker runs other tests meanwhile instead of waiting on the network.

Once per run (the first pytest-xdist worker to start claims it), with the builders' own locks:
a test that comes while its environment is being built waits for it, then finds it built. A build
that fails here is left to the test, which builds again and says why it could not."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

__all__ = ["build_ahead"]

SCRAPYD = "test_scrapyd.py"
SCRAPYD_OWN = "test_scrapyd_own_project.py"


def build_ahead(test_files: set[str], basetemp: Path) -> threading.Thread | None:
    """Start building the environments that the tests in *test_files* (file names) need, unless
    another worker of this run already has; the thread, or None."""
    wanted = [name for name in (SCRAPYD, SCRAPYD_OWN) if name in test_files]
    if not wanted:
        return None
    shared = basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp
    try:
        os.close(os.open(shared / "environments-ahead", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return None  # another worker builds them
    thread = threading.Thread(target=_build, args=(wanted, basetemp), name="environments-ahead", daemon=True)
    thread.start()
    return thread


def _build(wanted: list[str], basetemp: Path) -> None:
    for name in wanted:
        try:
            if name == SCRAPYD:
                from .test_scrapyd import ROOT, build_env

                clone = basetemp / "environments-ahead-clone"  # the test's fixture builds from a clone too
                subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, capture_output=True)
                build_env(clone)
            else:
                from ..wheel import run_wheel
                from .test_scrapyd_own_project import build_own_env

                build_own_env(run_wheel(basetemp))
        except BaseException:  # pytest's skip and fail too: the test builds again, and reports
            continue
