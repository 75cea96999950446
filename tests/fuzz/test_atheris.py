"""Coverage-guided fuzzing with atheris, when it installs (pyproject.toml: Linux x86_64 wheels)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ..e2e.crawl import ROOT

pytestmark = pytest.mark.slow  # coverage-guided fuzzing in subprocesses

pytest.importorskip("atheris", reason="atheris is not installed: it ships wheels for Linux x86_64 only and "
                                      "building it needs clang's libFuzzer; the hypothesis fuzzers still run")

RUNS = 20_000  # per target: seconds each on this 2-core machine; raise it for a longer hunt


@pytest.mark.parametrize("target", ["normalise", "extract", "watchlist", "urls"])
def test_atheris_finds_no_crash(target: str, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "tests.fuzz.atheris_targets", target, f"-runs={RUNS}",
                           "-max_total_time=120", "-timeout=30", "-rss_limit_mb=4096", "-max_len=4096",
                           f"-artifact_prefix={tmp_path}/", "-print_final_stats=1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    crashes = sorted(p.name for p in tmp_path.iterdir())
    assert proc.returncode == 0 and not crashes, f"{crashes}\n{proc.stderr[-4000:]}"
    assert "Done" in proc.stderr and "stat::number_of_executed_units" in proc.stderr
