"""What a crawl process imports before its first page: what the project's spiders and components
need, not the libraries only some watches need. Every crawl pays its imports, whatever its
watchlist: they are most of what a crawl costs beyond plain Scrapy's outside its pages
(docs/performance.md, "Fixed cost")."""

from __future__ import annotations

import json
import os
import subprocess
import sys

#: imported on first use only: extruct and its dependencies, for microdata and OpenGraph; NumPy,
#: for the adaptive schedule (off by default) and simhash (in the workers); the summary's client
#: (aiohttp), for a crawl with CHANGEWATCH_SUMMARY_URL; Playwright and scrapy-playwright, for
#: the first rendered request
LAZY = ("extruct", "mf2py", "bs4", "html5lib", "rdflib", "numpy", "changewatch.summary.client",
        "changewatch.summary.summariser", "playwright", "scrapy_playwright", "changewatch.render.renderer")


def test_a_crawl_imports_no_optional_library_before_a_page_needs_one() -> None:
    code = (
        "import json, sys\n"
        "from scrapy.crawler import CrawlerRunner\n"
        "from scrapy.utils.misc import load_object\n"
        "from scrapy.utils.project import get_project_settings\n"
        "from scrapy.utils.reactor import install_reactor\n"
        "install_reactor('twisted.internet.asyncioreactor.AsyncioSelectorReactor')  # as a crawl does\n"
        "crawler = CrawlerRunner(get_project_settings()).create_crawler('watch')  # every spider module imported\n"
        "crawler._apply_settings()  # the add-on's components, as the crawl applies them\n"
        "for name in ('ITEM_PIPELINES', 'SPIDER_MIDDLEWARES', 'DOWNLOADER_MIDDLEWARES', 'EXTENSIONS',\n"
        "             'DOWNLOAD_HANDLERS'):\n"
        "    for path in [*crawler.settings.getwithbase(name), *crawler.settings.getwithbase(name).values()]:\n"
        "        if isinstance(path, str) and '.' in path:\n"
        "            load_object(path)\n"
        "assert 'changewatch.render.handler' in sys.modules, 'the components were not all loaded'\n"
        f"print(json.dumps(sorted(m for m in {LAZY!r} if m in sys.modules)))\n"
    )
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "changewatch.settings"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert json.loads(out.stdout.splitlines()[-1]) == []


def test_microdata_and_opengraph_are_read_after_a_lazy_import() -> None:
    code = (
        "from parsel import Selector\n"
        "from changewatch.extract.structured import structured_data\n"
        "html = ('<html><head><meta property=\"og:title\" content=\"Lamp\">'\n"
        "        '<script type=\"application/ld+json\">{\"@type\": \"Offer\", \"price\": 9}</script></head>'\n"
        "        '<body><div itemscope itemtype=\"https://schema.org/Product\">'\n"
        "        '<span itemprop=\"name\">Lamp</span></div></body></html>')\n"
        "data = structured_data(Selector(text=html).root, 'https://shop.example/p/1')\n"
        "print(data.opengraph, [n.get('name') for n in data.nodes(['Product'])], data.jsonld)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "{'og:title': 'Lamp'} ['Lamp'] [{'@type': 'Offer', 'price': 9}]"
