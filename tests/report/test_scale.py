"""The report at 100,000 changes: the newest --limit shown, the counts still exact, memory
bounded by the limit and not by the log (peak RSS of a report process over 100k changes against
one over 1k, in the same run), and the page still opens in Chromium."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import lxml.html
import pytest

from changewatch.store.sqlite import SQLiteStore

from .browser import browser_home, dump_dom, screenshot
from .stores import bulk

__all__ = ["browser_home"]

pytestmark = pytest.mark.slow  # a 100,000-change store built and reported in a subprocess

_REPORT = """
import json, resource, sys, time
from changewatch.cli import main
start = time.perf_counter()
code = main(["report", "--store", sys.argv[1], "-o", sys.argv[2], "--since", "7d"])
print(json.dumps({"code": code, "seconds": time.perf_counter() - start,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _store(tmp_path: Path, name: str, count: int) -> str:
    store = SQLiteStore(tmp_path / name)
    store.open()
    bulk(store, datetime.now(UTC), count)
    store.close()
    return f"sqlite:///{tmp_path / name}"


def _report(uri: str, out: Path) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", _REPORT, uri, str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result: dict[str, float] = json.loads(proc.stdout.splitlines()[-1])
    assert result["code"] == 0, proc.stderr
    return result


def test_100k_changes_bounded_memory_exact_counts(tmp_path: Path, browser_home: Path) -> None:
    started = time.perf_counter()
    small, large = _store(tmp_path, "small.db", 1_000), _store(tmp_path, "large.db", 100_000)
    filled = time.perf_counter() - started
    small_run = _report(small, tmp_path / "small.html")
    large_run = _report(large, tmp_path / "large.html")
    print(f"report over 1k changes: {small_run['seconds']:.2f} s, peak {small_run['peak_mb']:.0f} MB; over 100k: "
          f"{large_run['seconds']:.2f} s, peak {large_run['peak_mb']:.0f} MB "
          f"(memory {large_run['peak_mb'] / small_run['peak_mb']:.2f}x for 100x the changes; stores filled in "
          f"{filled:.1f} s)")
    # the newest 500 read in full; 99,500 more counted, not kept
    assert large_run["peak_mb"] < small_run["peak_mb"] * 1.3
    html = (tmp_path / "large.html").read_text(encoding="utf-8")
    assert len(html) < 3_000_000
    dom = lxml.html.fromstring(dump_dom(tmp_path / "large.html", browser_home))
    articles = dom.xpath("//article")
    assert len(articles) == 500 and articles[0].get("id") == "change-100000" and articles[-1].get("id") == \
        "change-99501"
    assert dom.xpath("string(//p[@id='more'])").startswith("99,500 more not shown")
    cards = {c.xpath("string(span)"): c.xpath("string(b)") for c in dom.xpath("//div[contains(@class,'card')]")}
    assert cards["changes"] == "100,000" and cards["content"] == "100,000"
    assert len(dom.xpath("//*[local-name()='svg']")) == 10  # 5 sites, 2 charts each
    screenshot(tmp_path / "large.html", browser_home, "report-100k.png", height=1600)
