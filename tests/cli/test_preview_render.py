"""``changewatch preview`` of a watch with ``render``: rendered in a real Chromium by one small
crawl of that watch (a subprocess: it installs a reactor), its fields and text printed, nothing
stored; a rendered URL the SSRF policy refuses is not fetched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from changewatch.render.browser import find_browser, how_to_install

from ..render.site import JsSite
from ..services import require

pytestmark = pytest.mark.slow  # a crawl in a subprocess that renders in Chromium

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def js_site() -> Iterator[JsSite]:
    require(find_browser(None) is not None, "Chromium", how_to_install())
    site = JsSite(page_count=1)
    try:
        yield site
    finally:
        site.stop()


def preview(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    return subprocess.run([sys.executable, "-m", "changewatch.cli", "preview", *args], capture_output=True, text=True,
                          cwd=workdir, env=env, timeout=300)


def test_a_rendered_watch_is_previewed_as_rendered(js_site: JsSite, tmp_path: Path) -> None:
    url = js_site.url("p0")
    # a plain fetch of the shell has no price: what a crawl without rendering would say
    watch = {"fields": {"price": ".price::text"}}
    plain = preview(tmp_path, url, "--watch", json.dumps(watch), "-s", "CHANGEWATCH_ALLOW_PRIVATE=True")
    assert plain.returncode == 1 and "field 'price' (.price::text) matched nothing" in plain.stderr
    rendered = preview(tmp_path, url, "--watch", json.dumps({**watch, "render": True}),
                       "-s", "CHANGEWATCH_ALLOW_PRIVATE=True")
    assert rendered.returncode == 0, rendered.stderr[-3000:]
    lines = rendered.stdout.splitlines()
    assert lines[0] == f"{url}: key {url}; rendered in Chromium; compared by fields; nothing stored"
    assert "  price: 11.00 EUR → 11.00 EUR" in lines
    assert list(tmp_path.iterdir()) == []  # nothing stored here (the crawl's store was temporary)
    hits = sum(js_site.hits.values())
    refused = preview(tmp_path, url, "--watch", '{"render": true}')
    assert refused.returncode == 1 and "refused: " in refused.stderr and "rendered" not in refused.stdout
    assert sum(js_site.hits.values()) == hits  # nothing fetched
