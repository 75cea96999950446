"""Running a crawl from a script, as Scrapy's documentation shows, without a __main__ guard."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from changewatch.store.sqlite import SQLiteStore

from .crawl import ROOT

SCRIPT = """
import os
from pathlib import Path

from scrapy.crawler import CrawlerProcess
from scrapy.utils.project import get_project_settings

from changewatch.demo.site import DemoSite

with open("runs.txt", "a") as f:  # one line each time this module body runs
    f.write(f"{os.getpid()}\\n")
site = DemoSite()
base = site.start()
Path("wl.yaml").write_text(f"watches:\\n  - url: {base}/terms\\n    key: terms\\n")
settings = get_project_settings()
settings.set("CHANGEWATCH_STORE", "sqlite:///state.db")
settings.set("CHANGEWATCH_WORKERS", 1)
settings.set("CHANGEWATCH_ALLOW_PRIVATE", True)  # the demo site is on 127.0.0.1
settings.set("LOG_LEVEL", "WARNING")
process = CrawlerProcess(settings)
process.crawl("watch", watchlist="wl.yaml")
process.start()
site.stop()
"""


def test_unguarded_script_is_not_rerun_by_the_worker_processes(tmp_path: Path) -> None:
    (tmp_path / "run.py").write_text(SCRIPT)
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "changewatch.settings",
           "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len((tmp_path / "runs.txt").read_text().splitlines()) == 1, "a worker process re-ran the script"
    assert "could not start its worker processes" not in proc.stderr
    assert "Error processing" not in proc.stderr
    store = SQLiteStore(tmp_path / "state.db")
    store.open()
    try:
        assert store.keys("watch") == ["terms"]
    finally:
        store.close()
