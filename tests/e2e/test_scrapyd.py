"""End to end: the README's Scrapyd section, for real. A fresh clone, Scrapyd's environment built
with the README's install line, a real Scrapyd on a free port, ``scrapyd-deploy``, ``watch`` jobs
scheduled through schedule.json with their watchlist at a URL, and the change read back. The clone
is of the committed HEAD: uncommitted changes to the project are not what Scrapyd runs.

Scrapyd's environment is built once and kept in .venv/scrapyd-1.6 (rebuilt when the install line
or pyproject.toml changes): about half a minute the first time, with PyPI reachable. Without it
the test skips, saying how to install; under CI=true it fails (tests/services.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.changes import field

from ..readme import section
from ..services import require
from .hostile import HostileSite, page

ROOT = Path(__file__).resolve().parents[2]
ENV_DIR = ROOT / ".venv" / "scrapyd-1.6"
PROJECT = "changewatch"


def install_line(heading: str = "This repository's project") -> str:
    """The README's install line for Scrapyd's environment (run in an activated venv), in the
    recipe under *heading*."""
    lines = [line for line in section(heading).splitlines() if line.startswith("pip install 'scrapyd")]
    assert len(lines) == 1, lines
    return lines[0]


def clean_env(env_dir: Path = ENV_DIR, **extra: str) -> dict[str, str]:
    """The environment of a user's shell with Scrapyd's venv activated: nothing of this test run's
    (no PYTHONPATH to the checkout, no settings module)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME") and not k.startswith("SCRAPY")}
    env.update(PATH=f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(env_dir), **extra)
    return env


def build_env(checkout: Path) -> None:
    """Scrapyd's environment, built once for all pytest-xdist workers: the first to take the lock
    builds it, the others wait and find it built."""
    ENV_DIR.parent.mkdir(parents=True, exist_ok=True)
    with open(ENV_DIR.parent / f"{ENV_DIR.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _build_env(checkout)


def _build_env(checkout: Path) -> None:
    line = install_line()
    stamp = ENV_DIR / ".changewatch-stamp"
    wanted = hashlib.sha256((line + (checkout / "pyproject.toml").read_text()).encode()).hexdigest()
    if stamp.exists() and stamp.read_text() == wanted and (ENV_DIR / "bin" / "scrapyd").exists():
        return
    shutil.rmtree(ENV_DIR, ignore_errors=True)
    base = getattr(sys, "_base_executable", sys.executable)
    made = subprocess.run([base, "-m", "venv", str(ENV_DIR)], capture_output=True, text=True)
    require(made.returncode == 0, "a virtualenv for Scrapyd", f"python -m venv failed: {made.stderr[-500:]}")
    done = subprocess.run(["sh", "-c", line], cwd=checkout, env=clean_env(), capture_output=True, text=True,
                          timeout=900)
    require(done.returncode == 0, "Scrapyd 1.6 and scrapyd-client 2",
            f"the README's install line failed in {ENV_DIR} (PyPI needed): {line}\n{done.stderr[-1500:]}")
    stamp.write_text(wanted)


def git(checkout: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=checkout, capture_output=True, text=True, check=True).stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Scrapyd:
    url: str
    workdir: Path
    log: Path
    items: bool  # items_dir is set
    project: str = PROJECT
    spider: str = "watch"

    def records(self, job: str) -> list[dict[str, Any]]:
        path = self.workdir / "items" / self.project / self.spider / f"{job}.jl"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []

    def call(self, endpoint: str, *, post: bool = False, **data: Any) -> dict[str, Any]:
        query = urllib.parse.urlencode(list(_pairs(data)))
        url, body = (self.url + endpoint, query.encode()) if post else (f"{self.url}{endpoint}?{query}", None)
        with urllib.request.urlopen(url, data=body, timeout=30) as response:
            answer: dict[str, Any] = json.load(response)
        assert answer.get("status") == "ok", answer
        return answer

    def schedule(self, *settings: str, **args: str) -> str:
        job: str = self.call("schedule.json", post=True, project=self.project, spider=self.spider,
                             setting=list(settings),
                             **args)["jobid"]
        return job

    def wait(self, *jobs: str, timeout: float = 180) -> dict[str, dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            finished = {j["id"]: j for j in self.call("listjobs.json", project=self.project)["finished"]}
            if all(job in finished for job in jobs):
                return finished
            time.sleep(0.5)
        raise AssertionError(f"jobs {jobs} did not finish in {timeout} s:\n{self.log.read_text()[-3000:]}")

    def job_log(self, job: str) -> str:
        return (self.workdir / "logs" / self.project / self.spider / f"{job}.log").read_text(encoding="utf-8")


def _pairs(data: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for key, value in data.items():
        for item in value if isinstance(value, list) else [value]:
            yield key, item


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh clone of this checkout's committed HEAD, with Scrapyd's environment built from it."""
    require(shutil.which("git") is not None, "git", "apt-get install git")
    clone = tmp_path_factory.mktemp("clone") / "changewatch"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    build_env(clone)
    return clone


@pytest.fixture(scope="module", params=["no items_dir", "items_dir"])
def scrapyd(checkout: Path, tmp_path_factory: pytest.TempPathFactory,
            request: pytest.FixtureRequest) -> Iterator[Scrapyd]:
    """A Scrapyd with or without items_dir (with it, Scrapyd gives every job a feed of its own)."""
    with serve(ENV_DIR, tmp_path_factory.mktemp("scrapyd"), items=request.param == "items_dir") as server:
        yield server


@contextmanager
def serve(env_dir: Path, workdir: Path, *, items: bool, project: str = PROJECT, spider: str = "watch"
          ) -> Iterator[Scrapyd]:
    """A real Scrapyd of the environment *env_dir*, running in *workdir* on a free port."""
    port = free_port()
    items_dir = "items" if items else ""
    (workdir / "scrapyd.conf").write_text(
        f"[scrapyd]\nbind_address = 127.0.0.1\nhttp_port = {port}\neggs_dir = eggs\nlogs_dir = logs\n"
        f"dbs_dir = dbs\nitems_dir = {items_dir}\npoll_interval = 0.2\nmax_proc = 4\njobs_to_keep = 20\n")
    log = workdir / "scrapyd.out"
    with log.open("wb") as out:
        process = subprocess.Popen([str(env_dir / "bin" / "scrapyd")], cwd=workdir, env=clean_env(env_dir),
                                   stdout=out, stderr=subprocess.STDOUT)
    server = Scrapyd(f"http://127.0.0.1:{port}/", workdir, log, items, project, spider)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                server.call("daemonstatus.json")
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
                time.sleep(0.2)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def deploy(checkout: Path, server: Scrapyd, tmp_path: Path) -> None:
    """``scrapyd-deploy test`` from the clone, the target in the user's own scrapy.cfg (the
    checkout's stays untouched); the tree is as clean after it as before."""
    ignored_before = git(checkout, "status", "--porcelain", "--ignored")
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    (xdg / "scrapy.cfg").write_text(f"[deploy:test]\nurl = {server.url}\n")
    done = subprocess.run([str(ENV_DIR / "bin" / "scrapyd-deploy"), "test"], cwd=checkout, capture_output=True,
                          text=True, env=clean_env(XDG_CONFIG_HOME=str(xdg)), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["status"] == "ok", done.stdout
    assert git(checkout, "status", "--porcelain") == ""
    assert git(checkout, "status", "--porcelain", "--ignored") == ignored_before, "scrapyd-deploy left files behind"


def changes(server: Scrapyd, *flags: str) -> list[dict[str, Any]]:
    """``changewatch changes`` on the jobs' store (the default: .changewatch/state.db in Scrapyd's
    working directory), run as the README says: where changewatch is installed, not in Scrapyd's
    environment."""
    store = f"sqlite:///{server.workdir / '.changewatch' / 'state.db'}"
    done = subprocess.run([sys.executable, "-m", "changewatch.cli", "changes", "--store", store, "--spider", "watch",
                           *flags], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def product(price: str) -> bytes:
    return f"<html><body><h1>Lamp</h1><p class=price>{price} EUR</p></body></html>".encode()


def test_the_default_deploy_target(checkout: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    listed = subprocess.run([str(ENV_DIR / "bin" / "scrapyd-client"), "targets"], cwd=checkout, capture_output=True,
                            text=True, env=clean_env(HOME=str(home), XDG_CONFIG_HOME=str(home)), timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"^default\s+http://localhost:6800/$", listed.stdout, flags=re.M), listed.stdout
    # what runs is the deployed egg: the README's line leaves no installed changewatch to shadow it
    shadow = subprocess.run([str(ENV_DIR / "bin" / "python"), "-c", "import changewatch"], cwd="/",
                            capture_output=True, text=True, env=clean_env())
    assert shadow.returncode != 0 and "No module named 'changewatch'" in shadow.stderr, shadow.stderr


def test_watch_jobs_from_a_watchlist_url(checkout: Path, scrapyd: Scrapyd, tmp_path: Path) -> None:
    site = HostileSite()
    try:
        site.good["/lamp"] = page(product("89.00"))
        site.good["/watchlist.json"] = page(json.dumps({"watches": [
            {"url": f"{site.base}/lamp", "key": "lamp", "fields": {"price": "p.price::text"}}]}).encode(),
            ctype="application/json")
        deploy(checkout, scrapyd, tmp_path)
        watchlist = f"{site.base}/watchlist.json"
        private = "CHANGEWATCH_ALLOW_PRIVATE=True"

        # the baseline, and two jobs whose watchlist cannot be had, at the same time
        baseline = scrapyd.schedule(private, watchlist=watchlist)
        missing = scrapyd.schedule(private, watchlist="w.yaml")
        refused = scrapyd.schedule(watchlist=watchlist)
        bad_setting = scrapyd.schedule(private, "CHANGEWATCH_THRESHOLD=99", watchlist=watchlist)
        scrapyd.wait(baseline, missing, refused, bad_setting)
        assert "ERROR" not in scrapyd.job_log(baseline), scrapyd.job_log(baseline)[-3000:]
        assert changes(scrapyd) == []  # a baseline is silent
        for job, message in [
                (missing, f"cannot read watchlist {scrapyd.workdir / 'w.yaml'}: no such file (a relative path is "
                          f"read from the working directory ({scrapyd.workdir})"),
                (refused, f"cannot fetch watchlist {watchlist}: refused: loopback: 127.0.0.1 (a watchlist on this "
                          "machine or network needs CHANGEWATCH_ALLOW_PRIVATE=True")]:
            log = scrapyd.job_log(job)
            assert f"ERROR: The watch spider cannot start: {message}" in log, log[-3000:]
            # the spider opens and is closed at once, before the store or any page, and no
            # traceback follows the message
            assert "Spider closed (changewatch_failed)" in log and "Traceback" not in log, log[-3000:]
            assert re.search(rf"Process died: exitstatus=1 .*job='{job}'", scrapyd.log.read_text()), job
        # a bad setting stops the job before its spider exists: the job's log says which and why
        log = scrapyd.job_log(bad_setting)
        assert "ERROR: changewatch cannot start: CHANGEWATCH_THRESHOLD = '99': expected an integer" in log, log[-3000:]
        assert re.search(rf"Process died: exitstatus=1 .*job='{bad_setting}'", scrapyd.log.read_text())

        # the price drops; two jobs of the same spider run at once: one change, logged once
        site.good["/lamp"] = page(product("79.00"))
        first, second = scrapyd.schedule(private, watchlist=watchlist), scrapyd.schedule(private, watchlist=watchlist)
        finished = scrapyd.wait(first, second)
        assert finished[first]["start_time"] < finished[second]["end_time"], "the jobs did not overlap"
        assert finished[second]["start_time"] < finished[first]["end_time"], "the jobs did not overlap"
        for job in (first, second):
            assert "ERROR" not in scrapyd.job_log(job), scrapyd.job_log(job)[-3000:]
        logged, undelivered = changes(scrapyd), changes(scrapyd, "--undelivered")
        assert [(c["spider"], c["key"], c["kind"], c["record"]["changes"]) for c in logged] == [
            ("watch", "lamp", "field", {"price": field("89.00 EUR", "79.00 EUR")})]
        exported = scrapyd.records(first) + scrapyd.records(second)
        if scrapyd.items:  # one job exported it, in its own feed, and it counts as delivered
            assert [(r["key"], r["change_id"]) for r in exported] == [("lamp", logged[0]["id"])]
            assert undelivered == [] and logged[0]["delivered_at"]
        else:  # no items_dir and no FEEDS: no job had a feed to deliver it, it waits in the store
            assert exported == []
            assert undelivered == logged and logged[0]["delivered_at"] is None
        assert site.hits["/watchlist.json"] == 3  # once per job that was allowed to fetch it
    finally:
        site.stop()
