"""``changewatch genspider NAME URL`` in a project made by ``scrapy startproject``: a per-site
spider in the project's spiders module that imports, passes ruff, keeps the URL's scheme as typed,
takes the site from a page's URL and starts from that page, and passes ``scrapy check`` with no
setting but the add-on; bad input is one line and writes nothing; Scrapy's own templates stay
where they were."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from changewatch.cli import main
from changewatch.cli.genspider import site_and_page
from changewatch.core.vantage import Vantage
from changewatch.examples.site import FixtureSite
from changewatch.middlewares.vantage import vantage_from_setting
from changewatch.spider import ChangewatchSpider

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "myshop"


def env() -> dict[str, str]:
    """A user's shell: nothing of this checkout's Scrapy project, changewatch importable."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY")}
    return {**clean, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env(), capture_output=True, text=True, timeout=120)


def genspider(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run(cwd, "-m", "changewatch.cli", "genspider", *args)


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``scrapy startproject myshop`` and the one line README adds to its settings (made once)."""
    folder = tmp_path_factory.mktemp("started")
    made = run(folder, "-m", "scrapy", "startproject", PROJECT)
    assert made.returncode == 0, made.stderr
    settings = folder / PROJECT / PROJECT / "settings.py"
    settings.write_text(settings.read_text(encoding="utf-8") + '\nADDONS = {"changewatch.Addon": 0}\n',
                        encoding="utf-8")
    return folder / PROJECT


@pytest.fixture
def project(started: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(started, tmp_path / PROJECT))


def spiders(project: Path) -> Path:
    return project / PROJECT / "spiders"


def load(source: Path) -> type[ChangewatchSpider]:
    spec = importlib.util.spec_from_file_location(f"generated_{source.stem}", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    [cls] = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, ChangewatchSpider)
             and v is not ChangewatchSpider]
    return cls


def test_the_generated_spider_imports_and_passes_ruff(project: Path) -> None:
    proc = genspider(project, "shop", "shop.example")
    assert proc.returncode == 0, proc.stderr
    source = spiders(project) / "shop.py"
    assert f"in {PROJECT}/spiders/shop.py" in proc.stdout and "scrapy check shop" in proc.stdout
    text = source.read_text(encoding="utf-8")
    assert "$" not in text  # every template variable was filled in
    assert "changewatch genspider shop https://shop.example" in text

    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or "ruff"
    lint = subprocess.run([ruff, "check", "--config", str(ROOT / "pyproject.toml"), str(source)],
                          capture_output=True, text=True, timeout=120)
    assert lint.returncode == 0, lint.stdout + lint.stderr

    cls = load(source)
    assert cls.__name__ == "ShopSpider" and cls.name == "shop" and cls.allowed_domains == ("shop.example",)
    spider = cls()
    assert spider.url("/p/1") == "https://shop.example/p/1"
    assert set(spider.fields) == {"name", "price", "availability"}
    assert vantage_from_setting(dict(cls.vantage)) == Vantage(accept_language="en")
    assert spider.parse.__doc__ is not None and "@site_path /" in spider.parse.__doc__
    # rendering is shown, commented out: the generated spider does not render unless asked
    assert cls.render is None and not spider.changewatch_renders
    assert '# render: ClassVar[dict[str, Any]] = {"wait_for": ' in text and "render=True" in text
    # and Scrapy's own list sees it as one of the project's spiders
    listed = run(project, "-m", "scrapy", "list")
    assert listed.returncode == 0 and listed.stdout.split() == ["shop"], listed.stderr


@pytest.mark.parametrize(("typed", "site", "start"), [
    ("shop.example", "https://shop.example", "/"),  # a bare domain: https, its home page
    ("http://shop.example", "http://shop.example", "/"),  # a scheme typed is kept
    ("HTTPS://Shop.Example/c/lamps/", "HTTPS://Shop.Example", "/c/lamps/"),
    ("127.0.0.1:8000", "http://127.0.0.1:8000", "/"),  # a port: a development server, plain HTTP
    ("localhost:8080/shop/", "http://localhost:8080", "/shop/"),
    ("https://shop.example:8443", "https://shop.example:8443", "/"),
    ("shop.example:443", "https://shop.example:443", "/"),
    # a page as a browser shows it: the site is its origin, the page keeps its query, not its fragment
    ("https://example.com/shop/item?id=3", "https://example.com", "/shop/item?id=3"),
    ("https://example.com/shop/item?id=3&lang=en#reviews", "https://example.com", "/shop/item?id=3&lang=en"),
    ("https://example.com/?page=2", "https://example.com", "/?page=2"),
    ('https://example.com/a b"c\\d', "https://example.com", "/a%20b%22c%5Cd"),  # nothing that breaks the source
])
def test_the_site_and_the_page_of_a_typed_url(typed: str, site: str, start: str) -> None:
    assert site_and_page(typed) == (site, start)


def first_request(spider: ChangewatchSpider) -> Any:
    async def first() -> Any:
        return await anext(aiter(spider.start()))
    return asyncio.run(first())


def test_a_page_url_gives_the_domain_and_the_start_page(project: Path) -> None:
    """The URL of a product page, as copied from a browser: the site is its origin, the domain
    its host, and the page is where the spider starts and what its contract checks."""
    proc = genspider(project, "item", "https://example.com/shop/item?id=3")
    assert proc.returncode == 0, proc.stderr
    assert "watching https://example.com, starting at https://example.com/shop/item?id=3" in proc.stdout
    cls = load(spiders(project) / "item.py")
    assert (cls.default_site, cls.allowed_domains) == ("https://example.com", ("example.com",))
    spider = cls()
    assert first_request(spider).url == "https://example.com/shop/item?id=3"
    assert spider.parse.__doc__ is not None and "@site_path /shop/item?id=3\n" in spider.parse.__doc__
    assert spider.url("/p/1") == "https://example.com/p/1"
    # -a site= points it at a copy of the site: the same page there
    assert first_request(cls(site="http://127.0.0.1:8000")).url == "http://127.0.0.1:8000/shop/item?id=3"


def test_a_host_with_a_port_is_written_as_typed(project: Path) -> None:
    proc = genspider(project, "shop-de", "127.0.0.1:8000/de/")
    assert proc.returncode == 0, proc.stderr
    cls = load(spiders(project) / "shop_de.py")
    assert (cls.name, cls.default_site, cls.allowed_domains) == ("shop-de", "http://127.0.0.1:8000", ("127.0.0.1",))
    assert first_request(cls()).url == "http://127.0.0.1:8000/de/"


@pytest.mark.parametrize(("args", "message"), [
    (("shop", "ftp://shop.example"), "URL 'ftp://shop.example': the scheme must be http or https, not 'ftp'"),
    (("shop", "https://"), "URL 'https://' names no host"),
    (("shop", "https://me:pw@shop.example"), "carries credentials, which the SSRF guard refuses"),
    (("shop", "shop.example:99999"), "URL 'shop.example:99999': its port is not a number from 0 to 65535"),
    (("../shop", "shop.example"), "NAME '../shop': a spider's name is letters, digits"),
    (('sh"op', "shop.example"), "NAME 'sh\"op': a spider's name is letters"),
])
def test_bad_input_is_one_line_and_writes_nothing(project: Path, args: tuple[str, str], message: str,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # refused before the project is read: in this process
    monkeypatch.chdir(project)
    before = sorted(p.name for p in spiders(project).iterdir())
    assert main(["genspider", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("changewatch genspider: ") and err.count("\n") == 1, err
    assert message in err
    assert sorted(p.name for p in spiders(project).iterdir()) == before


def test_the_projects_own_name_is_refused(project: Path) -> None:
    proc = genspider(project, PROJECT, "shop.example")
    assert proc.returncode == 2 and proc.stderr == (f"changewatch genspider: NAME '{PROJECT}' is the project's own "
                                                    "name (BOT_NAME): choose another\n")
    assert sorted(p.name for p in spiders(project).iterdir()) == ["__init__.py"]


def test_outside_a_project_it_says_where_to_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCRAPY_SETTINGS_MODULE", raising=False)
    assert main(["genspider", "shop", "shop.example"]) == 2
    assert capsys.readouterr().err == ("changewatch genspider: not inside a Scrapy project (no scrapy.cfg here or "
                                       "in a folder above): run it in the folder `scrapy startproject` made\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("line", "message"), [
    ('NEWSPIDER_MODULE = ""', "the project's settings name no NEWSPIDER_MODULE (the module new spiders go in"),
    ("import nowhere", "cannot read the project's settings: ModuleNotFoundError: No module named 'nowhere'"),
])
def test_a_project_it_cannot_write_into_is_one_line(project: Path, line: str, message: str) -> None:
    settings = project / PROJECT / "settings.py"
    settings.write_text(settings.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")
    proc = genspider(project, "shop", "shop.example")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and message in proc.stderr, proc.stderr
    assert sorted(p.name for p in spiders(project).iterdir()) == ["__init__.py"]


def test_it_never_overwrites_a_file_or_reuses_a_name(project: Path) -> None:
    assert genspider(project, "shop", "shop.example").returncode == 0
    again = genspider(project, "shop", "http://other.example")
    assert again.returncode == 2
    assert again.stderr == "changewatch genspider: the project has a spider named 'shop' already: choose another NAME\n"
    assert "https://shop.example" in (spiders(project) / "shop.py").read_text(encoding="utf-8")
    # a file of the same module name that is not a spider is kept as it is
    notes = spiders(project) / "notes.py"
    notes.write_text("# my notes\n", encoding="utf-8")
    clash = genspider(project, "notes", "shop.example")
    assert clash.returncode == 2 and clash.stderr == (f"changewatch genspider: {PROJECT}/spiders/notes.py exists "
                                                      "already: choose another NAME, or remove the file\n")
    assert notes.read_text(encoding="utf-8") == "# my notes\n"


def test_scrapys_own_templates_stay_listed(project: Path) -> None:
    for cwd, extra in ((project, {}), (ROOT, {"SCRAPY_SETTINGS_MODULE": "changewatch.settings"})):
        proc = subprocess.run([sys.executable, "-m", "scrapy", "genspider", "-l"], cwd=cwd, env={**env(), **extra},
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and {"basic", "crawl", "csvfeed", "xmlfeed"} <= set(proc.stdout.split()), cwd


def test_the_template_ships_with_the_package() -> None:
    assert (resources.files("changewatch") / "templates" / "spiders" / "changewatch.tmpl").is_file()
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "templates/spiders/*.tmpl" in pyproject["tool"]["setuptools"]["package-data"]["changewatch"]


@pytest.fixture
def catalogue_site() -> Iterator[str]:
    site = FixtureSite("catalogue")
    base = site.start()
    try:
        yield base
    finally:
        site.stop()


@pytest.mark.slow
def test_the_generated_spider_passes_scrapy_check_with_only_the_addon(project: Path, catalogue_site: str) -> None:
    """Against a site on 127.0.0.1, whose pages have the template's shape (a category grid of
    article.product, product pages with JSON-LD): the project sets nothing but the add-on, and
    the command line only what a site on this machine needs. The URL is a category page's, as a
    browser shows it: the contract fetches that page."""
    assert genspider(project, "lamps", f"{catalogue_site}/c/lamps/?sort=price#grid").returncode == 0
    assert load(spiders(project) / "lamps.py").default_site == catalogue_site
    check = run(project, "-m", "scrapy", "check", "lamps", "-s", "CHANGEWATCH_ALLOW_PRIVATE=True")
    assert check.returncode == 0, check.stderr[-3000:]
    assert "Ran 1 contract" in check.stderr and "OK" in check.stderr, check.stderr[-3000:]
    # the guard still stands between the contract and 127.0.0.1 unless told otherwise
    refused = run(project, "-m", "scrapy", "check", "lamps")
    assert refused.returncode == 1 and "KeyError" not in refused.stderr, refused.stderr[-3000:]
