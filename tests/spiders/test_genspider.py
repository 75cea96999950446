"""``scrapy genspider -t changewatch``: a per-site spider skeleton that imports, passes ruff and
follows the conventions (ChangewatchSpider, fields checked at start, a fixed vantage point)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from changewatch.core.vantage import Vantage
from changewatch.middlewares.vantage import vantage_from_setting
from changewatch.spider import ChangewatchSpider

from ..e2e.crawl import ROOT, scrapy_env


def genspider(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # NEWSPIDER_MODULE empty: write into the working directory, not into the checkout's package.
    return subprocess.run([sys.executable, "-m", "scrapy", "genspider", "-s", "NEWSPIDER_MODULE=", *args],
                          cwd=tmp_path, env=scrapy_env(), capture_output=True, text=True, timeout=120)


def test_template_is_listed(tmp_path: Path) -> None:
    proc = genspider(tmp_path, "-l")
    assert proc.returncode == 0 and "changewatch" in proc.stdout


def test_generated_spider_imports_and_passes_ruff(tmp_path: Path) -> None:
    proc = genspider(tmp_path, "-t", "changewatch", "shop", "shop.example")
    assert proc.returncode == 0, proc.stderr
    source = tmp_path / "shop.py"
    text = source.read_text(encoding="utf-8")
    assert "$" not in text  # every template variable was filled in

    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or "ruff"
    lint = subprocess.run([ruff, "check", "--config", str(ROOT / "pyproject.toml"), str(source)],
                          capture_output=True, text=True, timeout=120)
    assert lint.returncode == 0, lint.stdout + lint.stderr

    spec = importlib.util.spec_from_file_location("generated_shop", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cls = module.ShopSpider
    assert issubclass(cls, ChangewatchSpider)
    assert cls.name == "shop" and cls.allowed_domains == ("shop.example",)
    spider = cls()
    assert spider.url("/p/1") == "https://shop.example/p/1"
    assert set(spider.fields) == {"name", "price", "availability"}
    assert vantage_from_setting(dict(cls.vantage)) == Vantage(accept_language="en")
    assert spider.parse.__doc__ is not None and "@site_path /" in spider.parse.__doc__
    # rendering is shown, commented out: the generated spider does not render unless asked
    assert cls.render is None and not spider.changewatch_renders
    assert '# render: ClassVar[dict[str, Any]] = {"wait_for": ' in text and "render=True" in text


@pytest.mark.parametrize("template", ["changewatch"])
def test_template_ships_with_the_package(template: str) -> None:
    from changewatch import settings

    assert (Path(settings.TEMPLATES_DIR) / "spiders" / f"{template}.tmpl").is_file()
