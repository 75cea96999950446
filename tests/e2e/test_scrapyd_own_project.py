"""End to end: README's Scrapyd recipe for a project of one's own, for real. Scrapyd's environment
is built with the recipe's install line (its changewatch requirement pointed at a wheel of this
checkout); a project made there by ``scrapy startproject``, with README's settings lines and a
spider written by ``changewatch genspider``, is deployed by ``scrapyd-deploy`` to a real Scrapyd;
two jobs of that spider record silent baselines, then the change, which ``changewatch changes``
run in the same environment lists.

The environment is kept in .venv/scrapyd-own-1.6, rebuilt when the install line or
pyproject.toml changes (a few minutes, with the package registry); the checkout's wheel is
installed into it afresh on every run, so the jobs run the code under test. Without it the test
skips, saying why; under CI=true it fails (tests/services.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from changewatch.examples.site import FixtureSite

from ..readme import code_blocks, section
from ..services import require
from .test_scrapyd import ROOT, clean_env, install_line, serve

OWN_ENV = ROOT / ".venv" / "scrapyd-own-1.6"
REQUIREMENT = re.compile(r'"scrapy-changewatch @ [^"]+"')
PROJECT = "myshop"


def build_own_env(wheel: Path) -> Path:
    """Scrapyd's environment as the recipe builds it, with *wheel* as its changewatch (one
    builder at a time across pytest-xdist workers)."""
    OWN_ENV.parent.mkdir(parents=True, exist_ok=True)
    with open(OWN_ENV.parent / f"{OWN_ENV.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        line = install_line("A project of your own")
        assert len(REQUIREMENT.findall(line)) == 1, line
        stamp = OWN_ENV / ".changewatch-stamp"
        wanted = hashlib.sha256((line + (ROOT / "pyproject.toml").read_text()).encode()).hexdigest()
        if stamp.exists() and stamp.read_text() == wanted and (OWN_ENV / "bin" / "scrapyd").exists():
            command = [str(OWN_ENV / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                       "--force-reinstall", str(wheel)]
            done = subprocess.run(command, env=clean_env(OWN_ENV), capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr[-3000:]
            return OWN_ENV
        shutil.rmtree(OWN_ENV, ignore_errors=True)
        base = getattr(sys, "_base_executable", sys.executable)
        made = subprocess.run([base, "-m", "venv", str(OWN_ENV)], capture_output=True, text=True)
        require(made.returncode == 0, "a virtualenv for Scrapyd", f"python -m venv failed: {made.stderr[-500:]}")
        line = REQUIREMENT.sub(f'"scrapy-changewatch @ {wheel.as_uri()}"', line)
        done = subprocess.run(["sh", "-c", line], cwd=OWN_ENV, env=clean_env(OWN_ENV), capture_output=True,
                              text=True, timeout=1800)
        require(done.returncode == 0, "Scrapyd 1.6, scrapyd-client 2 and changewatch",
                f"the README's install line failed in {OWN_ENV} (the package registry is needed): {line}\n"
                f"{done.stderr[-1500:]}")
        stamp.write_text(wanted)
    return OWN_ENV


def run(env: Path, cwd: Path, *command: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(env / "bin" / command[0]), *command[1:]], cwd=cwd, env=clean_env(env),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def changes(env: Path, store: str) -> list[dict[str, Any]]:
    listed = run(env, Path("/"), "changewatch", "changes", "--store", store, "--spider", "shop")
    return [json.loads(line) for line in listed.stdout.splitlines()]


@pytest.fixture
def catalogue_site() -> Any:
    site = FixtureSite("catalogue")
    base = site.start()
    try:
        yield site, base
    finally:
        site.stop()


def test_a_project_of_ones_own_through_scrapyd(checkout_wheel: Path, tmp_path: Path,
                                              catalogue_site: tuple[FixtureSite, str]) -> None:
    site, base = catalogue_site
    env = build_own_env(checkout_wheel)

    # the project: startproject, README's settings lines, one spider
    run(env, tmp_path, "scrapy", "startproject", PROJECT)
    project = tmp_path / PROJECT
    [settings] = code_blocks(section("In a Scrapy project of your own"), "python")
    settings_file = project / PROJECT / "settings.py"
    settings_file.write_text(settings_file.read_text(encoding="utf-8") + "\n" + settings, encoding="utf-8")
    run(env, project, "changewatch", "genspider", "shop", f"{base}/c/lamps/")

    workdir = tmp_path / "scrapyd"
    workdir.mkdir()
    with serve(env, workdir, items=False, project=PROJECT, spider="shop") as scrapyd:
        # README: uncomment the url of the [deploy] section startproject wrote (here: this Scrapyd's port)
        cfg = project / "scrapy.cfg"
        commented = "#url = http://localhost:6800/"
        assert commented in cfg.read_text(encoding="utf-8")
        cfg.write_text(cfg.read_text(encoding="utf-8").replace(commented, f"url = {scrapyd.url}"), encoding="utf-8")
        deployed = run(env, project, "scrapyd-deploy")
        assert json.loads(deployed.stdout)["status"] == "ok", deployed.stdout

        store = f"sqlite:///{tmp_path / 'state' / 'state.db'}"
        settings_args = ("CHANGEWATCH_ALLOW_PRIVATE=True", f"CHANGEWATCH_STORE={store}")
        first = scrapyd.schedule(*settings_args)
        scrapyd.wait(first)
        log = scrapyd.job_log(first)
        assert "ERROR" not in log and "Traceback" not in log, log[-3000:]
        assert "'changewatch/commit/baseline': 6" in log, log[-3000:]  # the category page and its 5 products
        assert changes(env, store) == []  # a baseline is silent

        site.edit("/p/lmp-001.html", '"price": "129.00"', '"price": "119.00"')
        second = scrapyd.schedule(*settings_args)
        scrapyd.wait(second)
        log = scrapyd.job_log(second)
        assert "ERROR" not in log and "Traceback" not in log, log[-3000:]
        logged = changes(env, store)
        assert [(c["spider"], c["key"], c["kind"], c["record"]["changes"]["price"]["new"]) for c in logged] == [
            ("shop", "LMP-001", "field", "119.00")], logged
        assert "Process died" not in scrapyd.log.read_text(), scrapyd.log.read_text()[-3000:]
