"""``changewatch genspider NAME URL``: a per-site spider, from the template the package ships, in
the spiders module (``NEWSPIDER_MODULE``) of the Scrapy project the command runs in.

The URL is a page of the site, as a browser shows it: its scheme and host (and port) are the
site (``default_site``, ``allowed_domains``), its path and query the page the spider starts from.

Scrapy's own ``genspider -t`` finds templates only in ``TEMPLATES_DIR``, which replaces Scrapy's
folder (its basic, crawl… templates disappear) instead of adding to it, and turns ``host:port``
into ``https://``: this command leaves Scrapy's alone and writes the URL with the scheme typed."""

from __future__ import annotations

import argparse
import os
import re
import string
from importlib import import_module, resources
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from .common import CommandError, UsageError, add_command

__all__ = ["add_parser", "site_and_page", "site_url"]

NAME = "genspider"
_SPIDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
#: what a page's path and query keep as typed; anything else (a space, a quote, a backslash) is
#: percent-encoded, as a browser sends it, so that it sits in the spider's source as it is
_URL_SAFE = "/?&=%:@!$'()*+,;~-._[]"


def site_url(typed: str) -> str:
    """The URL as the user typed it, checked, with a scheme: without one, ``https://``, or
    ``http://`` when a port is given (a development server or a local copy, as a rule plain HTTP).

    >>> [site_url(u) for u in ("shop.example", "http://shop.example", "127.0.0.1:8000", "shop.example:443/p/")]
    ['https://shop.example', 'http://shop.example', 'http://127.0.0.1:8000', 'https://shop.example:443/p/']
    """
    url = typed.strip()
    if "://" in url:
        scheme = url.split("://", 1)[0]
        if scheme.lower() not in ("http", "https"):
            raise UsageError(f"URL {typed!r}: the scheme must be http or https, not {scheme!r}")
    else:
        port = _port(urlsplit(f"//{url}"), typed)
        url = f"{'https' if port in (None, 443) else 'http'}://{url}"
    parts = urlsplit(url)
    _port(parts, typed)
    if not parts.hostname:
        raise UsageError(f"URL {typed!r} names no host: give the site's address, e.g. https://shop.example")
    if parts.username is not None or parts.password is not None:
        raise UsageError(f"URL {typed!r} carries credentials, which the SSRF guard refuses: give the site's "
                         "address alone (a login goes in the spider's vantage cookies or headers)")
    return url


def site_and_page(typed: str) -> tuple[str, str]:
    """The site a typed page URL belongs to (its scheme, host and port, as typed: :func:`site_url`)
    and the page, as a path on that site with its query (``/`` for the site itself); a fragment
    never reaches the server and is left out.

    >>> site_and_page("https://example.com/shop/item?id=3")
    ('https://example.com', '/shop/item?id=3')
    >>> site_and_page("shop.example")
    ('https://shop.example', '/')
    >>> site_and_page("127.0.0.1:8000/de/#top")
    ('http://127.0.0.1:8000', '/de/')
    """
    url = site_url(typed)
    parts = urlsplit(url)
    page = quote(parts.path or "/", safe=_URL_SAFE) + (f"?{quote(parts.query, safe=_URL_SAFE)}" if parts.query else "")
    return f"{url.split('://', 1)[0]}://{parts.netloc}", page  # the scheme as typed (urlsplit lowers it)


def _port(parts: Any, typed: str) -> int | None:
    try:
        port: int | None = parts.port
    except ValueError:
        raise UsageError(f"URL {typed!r}: its port is not a number from 0 to 65535") from None
    return port


def _module_name(name: str) -> str:
    # as Scrapy's genspider names the module: dashes and dots become underscores
    if not _SPIDER_NAME.fullmatch(name):
        raise UsageError(f"NAME {name!r}: a spider's name is letters, digits, '_', '-' and '.', starting "
                         "with a letter or digit")
    module = name.replace("-", "_").replace(".", "_")
    return module if module[0] in string.ascii_letters else f"a{module}"


def _project_settings() -> Any:
    """The settings of the Scrapy project around the working directory."""
    from scrapy.utils.conf import closest_scrapy_cfg
    from scrapy.utils.project import get_project_settings

    if not closest_scrapy_cfg() and "SCRAPY_SETTINGS_MODULE" not in os.environ:
        raise CommandError("not inside a Scrapy project (no scrapy.cfg here or in a folder above): run it in "
                           "the folder `scrapy startproject` made", 2)
    try:
        return get_project_settings()
    except Exception as exc:  # the project's own settings module, whatever it raises
        raise CommandError(f"cannot read the project's settings: {type(exc).__name__}: {exc}", 2) from None


def _spiders_folder(settings: Any, name: str, module: str) -> tuple[str, Path]:
    """Where the new spider goes (NEWSPIDER_MODULE), after checking that no spider is named *name*."""
    package = settings.get("NEWSPIDER_MODULE")
    if not package:
        raise CommandError("the project's settings name no NEWSPIDER_MODULE (the module new spiders go in, "
                           "as `scrapy startproject` sets it, e.g. NEWSPIDER_MODULE = \"myshop.spiders\")", 2)
    if module == settings.get("BOT_NAME"):
        raise CommandError(f"NAME {name!r} is the project's own name (BOT_NAME): choose another", 2)
    try:
        from scrapy.spiderloader import get_spider_loader

        existing = get_spider_loader(settings).list()
        folder = Path(import_module(package).__file__ or "").parent
    except Exception as exc:  # a spider module of the project, whatever it raises
        raise CommandError(f"cannot load the project's spiders: {type(exc).__name__}: {exc}", 2) from None
    if name in existing:
        raise CommandError(f"the project has a spider named {name!r} already: choose another NAME", 2)
    return package, folder


def render(name: str, module: str, url: str) -> str:
    """The spider's source: the package's template with its names filled in."""
    site, page = site_and_page(url)
    parts = urlsplit(site)
    template = resources.files("changewatch").joinpath("templates/spiders/changewatch.tmpl").read_text("utf-8")
    classname = "".join(part.capitalize() for part in module.split("_")) + "Spider"
    return string.Template(template).substitute(name=name, classname=classname, url=site + page, site_url=site,
                                                page=page, domain=parts.hostname or "", site=parts.netloc)


def run(args: argparse.Namespace) -> int:
    url = site_url(args.url)
    site, page = site_and_page(url)
    module = _module_name(args.name)
    package, folder = _spiders_folder(_project_settings(), args.name, module)
    path = folder / f"{module}.py"
    try:
        with path.open("x", encoding="utf-8") as f:  # never over a file that is there
            f.write(render(args.name, module, url))
    except FileExistsError:
        raise CommandError(f"{_shown(path)} exists already: choose another NAME, or remove the file", 2) from None
    except OSError as exc:
        raise CommandError(f"cannot write {_shown(path)}: {exc.strerror or exc}", 2) from None
    print(f"Created spider {args.name!r} ({package}.{module}) in {_shown(path)}, watching {site}, starting at "
          f"{site}{page}\n"
          f"Adapt its selectors, then: scrapy check {args.name} && scrapy crawl {args.name} -O changes.jsonl")
    return 0


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def add_parser(sub: Any) -> None:
    parser = add_command(sub, NAME, __doc__, "write a per-site spider into this Scrapy project")
    parser.add_argument("name", metavar="NAME", help="the spider's name (scrapy crawl NAME); its module is named "
                                                     "after it")
    parser.add_argument("url", metavar="URL", help="a page of the site, the one the spider starts from (the site "
                                                   "alone: its home page); the scheme is kept as typed, without one "
                                                   "https:// (http:// when a port is given)")
    parser.set_defaults(func=run)
