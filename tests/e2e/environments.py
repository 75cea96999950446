"""Fresh environments built ahead: README's own-project environment (test_readme_own_project.py,
made from scratch in every run) and Scrapyd's two (test_scrapyd.py and
test_scrapyd_own_project.py, cached in .venv/) take minutes each, mostly waiting on the package
registry. When a run that includes those tests starts, they are built in a background thread,
so that the workers run other tests meanwhile instead of waiting on the network.

Once per run (the first pytest-xdist worker to start claims it), with the builders' own locks: a
test that comes while its environment is being built waits for it, then finds it built. A build
that fails here is left to the test, which builds again (or reads what failed) and says why."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

__all__ = ["build_ahead", "readme_folder"]

README = "test_readme_own_project.py"
SCRAPYD = "test_scrapyd.py"
#: other test files on test_scrapyd.py's environment
SCRAPYD_TOO = ("test_scrapyd_sites.py",)
SCRAPYD_OWN = "test_scrapyd_own_project.py"


def shared_folder(basetemp: Path) -> Path:
    """The folder all workers of this run share: beside their own temporary folders."""
    return basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp


def readme_folder(basetemp: Path) -> Path:
    """Where README's own-project section is followed in this run (a fresh folder per run)."""
    folder = shared_folder(basetemp) / "readme-own-project"
    folder.mkdir(exist_ok=True)
    return folder


def build_ahead(test_files: set[str], basetemp: Path) -> threading.Thread | None:
    """Start building the environments that the tests in *test_files* (file names) need, unless
    another worker of this run already has: one after the other, in the order their tests run
    (the downloads share one network link, so the first is ready soonest alone); the thread."""
    if test_files.intersection(SCRAPYD_TOO):
        test_files = test_files | {SCRAPYD}
    wanted = [name for name in (README, SCRAPYD_OWN, SCRAPYD) if name in test_files]
    if not wanted:
        return None
    try:
        os.close(os.open(shared_folder(basetemp) / "environments-ahead", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return None  # another worker builds them
    thread = threading.Thread(target=_build_all, args=(wanted, basetemp), name="environments-ahead", daemon=True)
    thread.start()
    return thread


def _build_all(wanted: list[str], basetemp: Path) -> None:
    for name in wanted:
        _build(name, basetemp)


def _build(name: str, basetemp: Path) -> None:
    from ..wheel import run_wheel

    try:
        if name == README:
            from .test_readme_own_project import set_up

            set_up(readme_folder(basetemp), run_wheel(basetemp))
        elif name == SCRAPYD:
            from .test_scrapyd import ROOT, build_env

            clone = basetemp / "environments-ahead-clone"  # the test's fixture builds from a clone too
            subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, capture_output=True)
            build_env(clone)
        else:
            from .test_scrapyd_own_project import build_own_env

            build_own_env(run_wheel(basetemp))
    except BaseException:  # pytest's skip and fail too: the test builds again, and reports
        return
