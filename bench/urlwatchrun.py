"""urlwatch on the URLs of ``bench_crawl.py --real``: installed, configured, run and checked.

urlwatch (https://thp.io/2008/urlwatch/, PyPI ``urlwatch``) is installed with ``html2text`` into
its own virtual environment, ``bench/.urlwatch-venv`` (``python -m venv``, ``pip install``), the
first time it is needed; the benchmark exits non-zero with a message if that fails, never skips.

Each urlwatch run is its command-line tool in a directory of its own (``--urls``, ``--config``,
``--hooks``, ``--cache`` all there, and XDG_CONFIG_HOME / XDG_CACHE_HOME pointed there too):

* ``urls.yaml``: one job per URL, each with urlwatch's ``html2text`` filter as its users write
  it (``filter: html2text``): its default method, ``re``, a regex tag stripper (it keeps the
  text of scripts and styles, so it does less than changewatch's visible text). ``--urlwatch-filter
  pyhtml2text`` runs the Python ``html2text`` module instead (Markdown-like text without scripts
  and styles, urlwatch's closest equivalent to changewatch's visible text), about ten times
  slower: ~50 ms of CPU per corpus page. (The method ``html2text`` runs an external binary.)
* ``hooks.py``: urlwatch has no option for its concurrency (a thread pool of
  ``urlwatch.worker.MAX_WORKERS`` = 10 threads in 2.29): the hooks file, loaded before the jobs
  run, sets it to the crawls' CONCURRENT_REQUESTS (16). It also registers a reporter,
  ``benchcount``, that writes each job's outcome (new / changed / unchanged / error) to JSON:
  urlwatch exits 0 whether or not jobs failed, so this is how the benchmark checks that every
  URL was fetched.
* ``urlwatch.yaml``: urlwatch's defaults plus that reporter, and the stdout reporter as shipped
  (enabled) without colour; its output goes to a file.

The first run on a fresh cache stores a baseline per URL (every job ``new``); the second compares
each page with it. A run counts only if every URL has one outcome, none is an error, the first run
has N ``new`` and the second none, and the cache database holds N jobs with a good snapshot and
none with a failed try: otherwise the benchmark aborts.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

VENV = Path(__file__).resolve().parent / ".urlwatch-venv"
VERSION = "2.29"  # the hooks below rely on its internals (worker.MAX_WORKERS, ReporterBase)
PACKAGES = (f"urlwatch=={VERSION}", "html2text")
FILTER = {"html2text": "re"}  # urlwatch's default method: what "filter: html2text" does
METHODS = ("re", "pyhtml2text")
DEFAULT_TIMEOUT = 60  # urlwatch's own, for jobs without a timeout

HOOKS = '''\
"""Written by bench_crawl.py: urlwatch's concurrency, and a reporter that counts outcomes."""
import collections
import json
import threading

import html2text
from urlwatch import __version__, reporters, worker

if not hasattr(worker, "MAX_WORKERS"):
    raise SystemExit("bench hooks: urlwatch.worker.MAX_WORKERS is gone; the benchmark cannot set the concurrency")
worker.MAX_WORKERS = {workers}


class BenchCount(reporters.ReporterBase):
    """Writes each job's outcome to the file of its config's path (for bench_crawl.py)."""

    __kind__ = "benchcount"

    def submit(self):
        verbs = collections.Counter(state.verb for state in self.job_states)
        text = [len(state.new_data) for state in self.job_states if isinstance(state.new_data, str)]
        errors = [f"{{state.job.get_location()}}: {{state.exception!r}}" for state in self.job_states
                  if state.verb == "error"]
        pool = [t for t in threading.enumerate() if t.name.startswith("ThreadPoolExecutor")]
        with open(self.config["path"], "w", encoding="utf-8") as out:
            json.dump({{"verbs": verbs, "jobs": len(self.job_states), "errors": errors[:10],
                       "text_chars": sum(text), "max_workers": worker.MAX_WORKERS, "pool_threads": len(pool),
                       "version": __version__, "html2text": ".".join(map(str, html2text.__version__))}}, out)
'''


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _installed(venv: Path) -> str | None:
    """urlwatch's version in *venv* if urlwatch and html2text both import there."""
    if not _python(venv).exists():
        return None
    probe = subprocess.run([str(_python(venv)), "-c", "import html2text, urlwatch; print(urlwatch.__version__)"],
                           capture_output=True, text=True)
    return probe.stdout.strip() if probe.returncode == 0 else None


def ensure_installed(venv: Path = VENV) -> tuple[Path, str]:
    """The urlwatch command in *venv*, installed there first if missing, and what was done; exits
    non-zero with a message if it cannot be installed or does not run."""
    done = f"found in {venv}"
    if _installed(venv) != VERSION:
        done = f"installed now into {venv}"
        steps = [] if _python(venv).exists() else [[sys.executable, "-m", "venv", str(venv)]]
        steps.append([str(_python(venv)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *PACKAGES])
        for step in steps:
            proc = subprocess.run(step, capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"ABORTED: urlwatch could not be installed for the benchmark: {' '.join(step)} "
                                 f"exited with {proc.returncode}:\n{(proc.stdout + proc.stderr)[-3000:]}")
        if _installed(venv) != VERSION:
            raise SystemExit(f"ABORTED: after installing {' '.join(PACKAGES)} into {venv}, urlwatch {VERSION} and "
                             f"html2text still do not import there (found: {_installed(venv)!r})")
    exe = venv / "bin" / "urlwatch"
    proc = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
    if proc.returncode != 0 or VERSION not in proc.stdout:
        raise SystemExit(f"ABORTED: {exe} --version exited with {proc.returncode}: "
                         f"{(proc.stdout + proc.stderr)[-2000:]}")
    return exe, f"{proc.stdout.strip()} (with html2text), {done}"


def prepare(directory: Path, urls: list[str], workers: int) -> None:
    """A urlwatch home in *directory*: jobs for *urls* (none: an empty job list, for start-up),
    its configuration and the hooks file."""
    directory.mkdir(parents=True, exist_ok=True)
    filters = "".join(f"  - {name}: {method}\n" for name, method in FILTER.items())
    (directory / "urls.yaml").write_text("---\n".join(f"url: {url}\nfilter:\n{filters}" for url in urls),
                                         encoding="utf-8")
    (directory / "urlwatch.yaml").write_text(
        "report:\n  stdout:\n    enabled: true\n    color: false\n"
        f"  benchcount:\n    enabled: true\n    path: {json.dumps(str(directory / 'outcome.json'))}\n",
        encoding="utf-8")
    (directory / "hooks.py").write_text(HOOKS.format(workers=int(workers)), encoding="utf-8")


def command(exe: Path, directory: Path) -> tuple[list[str], dict[str, str]]:
    """The urlwatch command line and environment for the home in *directory*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCRAPY_", "PYTHON"))}
    env |= {"XDG_CONFIG_HOME": str(directory), "XDG_CACHE_HOME": str(directory)}
    args = [str(exe), "--urls", str(directory / "urls.yaml"), "--config", str(directory / "urlwatch.yaml"),
            "--hooks", str(directory / "hooks.py"), "--cache", str(directory / "cache.db")]
    return args, env


def outcome(directory: Path, proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """What the benchcount reporter wrote; exits if urlwatch failed or wrote nothing."""
    path = directory / "outcome.json"
    if proc.returncode != 0 or not path.exists():
        raise SystemExit(f"ABORTED: urlwatch exited with {proc.returncode}"
                         f"{'' if path.exists() else ' without reporting its jobs'}:\n"
                         f"{(proc.stdout[-1500:] + proc.stderr[-3000:]).strip()}")
    result: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    path.unlink()
    return result


def check(label: str, result: dict[str, Any], directory: Path, expected: int, first: bool, workers: int) -> None:
    """Abort unless every one of the *expected* URLs was fetched and filtered: one outcome per job,
    no error, all ``new`` on the *first* run and none on the second, the cache database holding
    *expected* jobs with a good snapshot and none with a failed try, and *workers* threads allowed."""
    verbs: dict[str, int] = result["verbs"]
    problems = []
    if result["jobs"] != expected:
        problems.append(f"{result['jobs']} job outcomes, not {expected}")
    if verbs.get("error"):
        problems.append(f"{verbs['error']} errors, e.g. {result['errors'][:3]}")
    if verbs.get("new", 0) != (expected if first else 0):
        problems.append(f"{verbs.get('new', 0)} new jobs on the {'first' if first else 'second'} run")
    if result["max_workers"] != workers or result["pool_threads"] > workers:
        problems.append(f"MAX_WORKERS is {result['max_workers']} and {result['pool_threads']} pool threads ran, "
                        f"not {workers} at most")
    with sqlite3.connect(directory / "cache.db") as db:
        good, failed = db.execute("SELECT COUNT(DISTINCT guid) FILTER (WHERE tries = 0 OR tries IS NULL), "
                                  "COUNT(*) FILTER (WHERE tries > 0) FROM CacheEntry").fetchone()
    if good != expected or failed:
        problems.append(f"its cache holds {good} jobs with a snapshot and {failed} failed tries")
    if problems:
        raise SystemExit(f"ABORTED: the {label} did not fetch and filter all {expected} URLs: "
                         f"{'; '.join(problems)} (outcomes: {verbs}); its figures would not measure the pages")
