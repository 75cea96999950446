"""README's "In a Scrapy project of your own", followed as written in a fresh virtual environment:
its commands are read from README itself, so that this test breaks when README changes.

Two substitutions, each what README tells a user in that situation: the install line's
requirement names a wheel of this checkout (``scrapy-changewatch @ file:///…whl``, so that pip
checks the distribution's name) instead of the repository, and the site is a fixture site on
127.0.0.1 (so ``-s CHANGEWATCH_ALLOW_PRIVATE=True`` is added to the ``scrapy`` commands, as
README says for a site on one's own machine). Everything else runs as printed, in a shell with
nothing of this test run (no PYTHONPATH to the checkout, no settings module).

The environment is built from scratch with the package registry: a few minutes, which a run that
includes this test spends from its start in a background thread (tests/e2e/environments.py) while
the workers run other tests; the test then takes the environment that build made, or makes it.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from changewatch.examples.site import FixtureSite

from ..readme import code_blocks, section
from ..services import require
from .environments import readme_folder

pytestmark = pytest.mark.slow

SECTION = "In a Scrapy project of your own"
REQUIREMENT = re.compile(r'"scrapy-changewatch @ [^"]+"')


def user_shell() -> dict[str, str]:
    """A user's shell: ``python3`` is the interpreter this test runs on (3.11+), and nothing
    points at the checkout."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME") and not k.startswith("SCRAPY")}
    base = Path(getattr(sys, "_base_executable", sys.executable))
    return {**env, "PATH": f"{base.parent}{os.pathsep}{env.get('PATH', '')}"}


def sh(script: str, cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def readme_setup(wheel: Path) -> str:
    """README's first block of commands (the virtual environment, the install, the project), the
    requirement pointed at *wheel*."""
    setup = code_blocks(section(SECTION), "sh")[0]
    assert len(REQUIREMENT.findall(setup)) == 1, setup
    return REQUIREMENT.sub(f'"scrapy-changewatch @ {wheel.as_uri()}"', setup)


def set_up(folder: Path, wheel: Path) -> dict[str, Any]:
    """README's first block run in *folder* as a user's shell runs it (once: a second call reads
    what the first did), its exit status and output."""
    result = folder / "setup.json"
    with open(folder / "setup.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not result.exists():
            done = sh(readme_setup(wheel), folder, user_shell(), timeout=1800)
            result.write_text(json.dumps({"returncode": done.returncode, "stdout": done.stdout[-2000:],
                                          "stderr": done.stderr[-3000:]}))
    answer: dict[str, Any] = json.loads(result.read_text())
    return answer


def test_the_own_project_section_as_written(checkout_wheel: Path, tmp_path_factory: pytest.TempPathFactory
                                            ) -> None:
    text = section(SECTION)
    _, commands = code_blocks(text, "sh")
    [settings] = code_blocks(text, "python")
    env = user_shell()
    workdir = readme_folder(tmp_path_factory.getbasetemp())
    python3 = sh("python3 -c 'import sys; print(sys.version_info >= (3, 11))'", workdir, env)
    require(python3.stdout.strip() == "True", "python3 3.11 or newer on the PATH", python3.stdout + python3.stderr)

    # 1. the virtual environment, the install, the project (begun at the run's start, if the run began with it)
    setup = readme_setup(checkout_wheel)
    done = set_up(workdir, checkout_wheel)
    assert done["returncode"] == 0, done["stdout"] + done["stderr"]
    venv = re.search(r"python3 -m venv (\S+)", setup)
    project = re.search(r"scrapy startproject (\w+) && cd \1", setup)
    assert venv and project, setup
    activate = f". {shlex.quote(str(workdir / venv[1] / 'bin' / 'activate'))} && "
    folder = workdir / project[1]
    where = sh(activate + "python -c 'import changewatch; print(changewatch.__file__)'", folder, env)
    assert where.stdout.startswith(str(workdir / venv[1])), where.stdout + where.stderr  # the installed copy

    # 2. the settings lines, at the end of the project's settings.py
    assert f"{project[1]}/settings.py" in text
    settings_file = folder / project[1] / "settings.py"
    settings_file.write_text(settings_file.read_text(encoding="utf-8") + "\n" + settings, encoding="utf-8")

    # 3. genspider, check and two crawls against a site with the template's shape
    site = FixtureSite("catalogue")
    base = site.start()
    try:
        crawls = 0
        lines = [line for line in commands.splitlines() if line.strip()]
        assert sum(line.startswith("scrapy crawl ") for line in lines) == 2, lines
        for line in lines:
            command = line.replace("https://shop.example", f"{base}/c/lamps/")
            if command.startswith("scrapy "):
                command += " -s CHANGEWATCH_ALLOW_PRIVATE=True"
            ran = sh(activate + command, folder, env)
            assert ran.returncode == 0, f"{command}\n{ran.stdout[-2000:]}\n{ran.stderr[-3000:]}"
            assert "Traceback" not in ran.stderr, ran.stderr[-3000:]
            if command.startswith("scrapy check "):
                assert "OK" in ran.stderr, ran.stderr[-3000:]
            if command.startswith("scrapy crawl "):
                crawls += 1
                feed = [json.loads(r) for r in (folder / "changes.jsonl").read_text(encoding="utf-8").splitlines()]
                if crawls == 1:
                    assert feed == [], feed  # silent baselines
                    site.edit("/p/lmp-001.html", '"price": "129.00"', '"price": "119.00"')
                else:
                    assert [(r["kind"], r["key"], r["changes"]["price"]["old"], r["changes"]["price"]["new"])
                            for r in feed] == [("field", "LMP-001", "129.00", "119.00")], feed
        assert crawls == 2
    finally:
        site.stop()
    listed = sh(activate + "changewatch changes", folder, env)
    assert listed.returncode == 0, listed.stderr
    assert [json.loads(line)["key"] for line in listed.stdout.splitlines()] == ["LMP-001"]
