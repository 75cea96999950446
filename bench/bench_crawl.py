"""Crawl throughput with changewatch on, as a ratio to the same crawl without it (target >= 0.9x);
on real pages, urlwatch's too.

Run: ``.venv/bin/python bench/bench_crawl.py`` (about 1.5 minutes, 3 at most; ``--runs 1 --pages 300``
for a smoke run; ``--profile DIR`` also writes a cProfile of each changewatch crawl process to DIR).
``--durability`` compares instead the store as shipped (SQLite file, WAL, synchronous=NORMAL) with an
in-memory store and with synchronous=FULL, on first crawls: the throughput cost of crash safety.

Modes and flags (``--pages N`` URLs per crawl, ``--runs R`` runs of each variant, default 3):

* default: synthetic pages from a Twisted server, described below (2,000 pages).
* ``--real`` (= ``--source corpus``): the real-page corpus (/work/shared/corpus/pages, 79 pages,
  mean ~230 KB; ``--corpus DIR`` elsewhere) served by nginx, read in place (realpages.py); default
  1,500 URLs, URL i being page i mod 79. Same variants, runs and table, plus urlwatch's 1st and
  2nd runs on the same URLs (below), plus CPU milliseconds per page of the crawl process, of its
  worker(s) and of nginx. Every crawl must get one 200 per URL (and per second load changewatch made)
  (``downloader/response_status_count/200``), and every urlwatch run must fetch and filter every
  URL without an error, or the benchmark aborts. No corpus directory: exits 1 with a message,
  never falls back to synthetic pages; urlwatch not installable or not running: exits 1 with a
  message, never skips it. ``--urlwatch-filter`` picks the method of urlwatch's ``html2text``
  filter: ``re`` (default, what ``filter: html2text`` does) or ``pyhtml2text`` (its Markdown
  converter, ~10x slower). About 2.5 minutes on a 2-core machine (urlwatch ~190-250 pages/s,
  the watch crawls ~230-360; 12 minutes with ``pyhtml2text``); ``--real --runs 1 --pages 300``
  for a smoke run (about a minute).
* ``--memory``: peak RSS instead of throughput, over long crawls: for each page count of
  ``--memory-pages`` (default 2000,20000), plain Scrapy, then the watch spider's 1st and 2nd
  crawls on one store, once each; the table gives each peak and the ratio of the largest count to
  the smallest (flat = close to 1.00x), plain Scrapy's being the reference. Peaks are VmHWM, the
  crawl process's and its largest child's (changewatch's worker), sampled while the crawl runs
  (rss.py says why ``ru_maxrss`` of RUSAGE_CHILDREN would report the crawl process's size for the
  worker; ``ru_maxrss`` is printed too), with the crawl process's RSS at spider_opened (the
  watchlist read, the pipelines open) to tell start-up from growth during the crawl. Synthetic
  pages by default: the server renders 2,000 templates and page i is template i mod 2,000 with i
  in its title, canonical link and JSON-LD (distinct pages, a cheap server). ``--memory --real``:
  the corpus, served by nginx as above. About 6 minutes synthetic; with ``--real`` about 13
  (20,000 real pages are 4.6 GB a crawl, 65-90 pages/s); ``--memory --memory-pages 200,2000`` for
  a smoke run (about 2 minutes).

  ``--durability`` and ``--profile`` go with the throughput modes; ``--durability --real`` runs
  the durability comparison on the corpus.
* ``--against PYTHON`` (throughput modes): the two watch crawls again, in the same runs, by a Python
  whose ``import changewatch`` is another checkout (main: e.g. a venv with ``git archive main``
  unpacked first on its path), each pair on a store of its own; the report ends with this tree's
  rate as a ratio to it (what a change costs, measured against the code it changes).

What it does, all on 127.0.0.1 and in a temporary directory it removes at the end:

* A server process (``bench_crawl.py serve``) serves N distinct HTML pages (default 2,000) of
  15-30 KB each: head with CSS, inline scripts and JSON-LD, nav, breadcrumbs, an article of
  paragraphs, lists and tables, related links, footer, trailing analytics scripts, and per-load
  noise (a timestamp, "N minutes ago", a CSRF token in a script and a hidden input). It is a
  Twisted ``twisted.web`` resource in its own process, not a thread of the crawler: the crawl is
  single-threaded Python, so a server in the same process would take turns with it on one core.
  Pages are rendered once at start and kept as byte segments: a request only splices the noise
  in (no template work, no access log), so the server costs little of the second core, which the
  changewatch worker process needs too. No CPU pinning for the same reason; the server's CPU time
  per crawl is reported.
* Every crawl is a subprocess (``bench_crawl.py crawl``): a small runner around Scrapy's
  ``CrawlerProcess`` that writes the crawl's stats, effective settings and CPU times to JSON.

  - ``plain``: the reference, "a spider that fetches the same URLs and yields each body's
    length, with Scrapy's default settings plus the same concurrency": the same URLs
    (``dont_filter``, the same ``start()`` loop), ``{"length": len(response.body)}`` per page,
    on ``scrapy.settings.Settings()`` (no SCRAPY_SETTINGS_MODULE, so not changewatch.settings:
    ``ADDONS`` and ``ITEM_PIPELINES`` empty, Scrapy's user agent, robots.txt not fetched) plus
    CONCURRENT_REQUESTS=16, CONCURRENT_REQUESTS_PER_DOMAIN=16, LOG_LEVEL=WARNING and
    TWISTED_REACTOR set to the watch crawls' reactor (asyncio), so both run on the same reactor
    (the report aborts if they did not). No changewatch component runs.
  - ``watch, 1st crawl``: on the project's settings (``SCRAPY_SETTINGS_MODULE=changewatch.settings``,
    as every watch crawl), changewatch's ``watch`` spider with a watchlist of the N URLs (text
    watches), the project's add-on and pipelines, a fresh SQLite store
    (``CHANGEWATCH_STORE=sqlite:////tmp/.../state.db``): every page becomes a baseline.
  - ``watch, 2nd crawl``: the same against that store: every page is compared with its baseline.
* With ``--real`` (not ``--durability``), urlwatch 2.29 on the same N URLs (urlwatchrun.py says
  how in detail). It is installed with ``html2text`` into its own virtual environment,
  ``bench/.urlwatch-venv`` (git-ignored), before anything else if it is not there yet. Each run
  of the benchmark gives it a fresh home in the temporary directory (``--urls``, ``--config``,
  ``--hooks``, ``--cache`` files there): one job per URL with the filter
  ``html2text: pyhtml2text`` (the Python html2text module: text without scripts and styles,
  urlwatch's closest equivalent to the visible-text comparison), 16 threads (urlwatch has no
  option for it: its hooks file sets ``urlwatch.worker.MAX_WORKERS``, 10 by default, to the
  crawls' CONCURRENT_REQUESTS), urlwatch's default reporting on stdout (captured) and a small
  reporter of the hooks file that counts each job's outcome.

  - ``urlwatch, 1st run``: a fresh cache: every URL is ``new`` (a baseline).
  - ``urlwatch, 2nd run``: the same home: every page is compared with its snapshot.
  - start-up, measured apart: urlwatch on an empty job list (its imports, configuration, hooks,
    cache and reporters), three times per run of the benchmark, each in a fresh home.

  urlwatch exits 0 when jobs fail, so a run counts only if each URL has one outcome and none is an
  error, the 1st run has N ``new`` and the 2nd none, 16 pool threads at most ran, and the cache
  database holds N jobs with a snapshot and no failed try; otherwise the benchmark aborts.

  The watch crawls run on the project's values (CONCURRENT_ITEMS, ...) plus LOG_LEVEL=WARNING,
  ROBOTSTXT_OBEY=False (the server has no robots.txt), AUTOTHROTTLE off, CONCURRENT_REQUESTS=16
  and CONCURRENT_REQUESTS_PER_DOMAIN=16 (one host: the project's 4 per domain would measure the
  politeness limit, not the crawler). The effective values of each variant are printed.

pages/s = ``response_received_count`` / ``elapsed_time_seconds`` (Scrapy's CoreStats, from
spider_opened to spider_closed: process start-up and imports excluded, changewatch's pipeline
open/close and worker start-up included). For urlwatch, which has no such figure, pages/s = URLs /
wall seconds of the whole urlwatch process, so its start-up is included, unlike the crawls'; the
report also gives it start-up corrected: URLs / (wall - the median start-up). urlwatch's CPU
seconds are its process's (RUSAGE_CHILDREN of the benchmark around it, all its threads), raw and
less the start-up's. Each variant runs ``--runs`` times (default 3, interleaved: urlwatch's
start-up, plain, watch without pipelines, 1st, 2nd, urlwatch 1st, urlwatch 2nd, then again) and
the median is reported, with the median of each run's ratio to the plain crawl just before it
(robust to a machine that drifts). The report ends with the ratios of urlwatch's runs to plain
Scrapy and of the watch crawls to urlwatch's ("watch 1st crawl / urlwatch 1st run", "watch 2nd /
urlwatch 2nd"), raw and start-up corrected. Before each crawl or urlwatch run the benchmark waits
(60 s at most in all) for other processes to be quiet, and reports the CPU other processes used
during each.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import urlwatchrun
from realpages import CORPUS, CorpusServer
from rss import ChildPeaks, vm_hwm_kb, vm_rss_kb

ROOT = Path(__file__).resolve().parents[1]
COMMON_SETTINGS: dict[str, Any] = {
    "LOG_LEVEL": "WARNING",
    "ROBOTSTXT_OBEY": False,
    "AUTOTHROTTLE_ENABLED": False,
    "CONCURRENT_REQUESTS": 16,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
    "CHANGEWATCH_ALLOW_PRIVATE": True,
}
NO_CHANGEWATCH: dict[str, Any] = {"ADDONS": {}, "ITEM_PIPELINES": {}}
# The reactor of the watch crawls (the project sets none: Scrapy's default, which changewatch requires)
REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
# The plain reference: Scrapy's default settings (not changewatch.settings) plus the same
# concurrency, and only what a benchmark needs: quiet logs, the watch crawls' reactor.
PLAIN_SETTINGS: dict[str, Any] = {
    "LOG_LEVEL": "WARNING",
    "CONCURRENT_REQUESTS": COMMON_SETTINGS["CONCURRENT_REQUESTS"],
    "CONCURRENT_REQUESTS_PER_DOMAIN": COMMON_SETTINGS["CONCURRENT_REQUESTS_PER_DOMAIN"],
    "TWISTED_REACTOR": REACTOR,
}
# urlwatch on the same URLs (real-page mode, urlwatchrun.py), as many threads as the crawls' requests
URLWATCH_WORKERS = COMMON_SETTINGS["CONCURRENT_REQUESTS"]
URLWATCH_FIRST, URLWATCH_SECOND = "urlwatch, 1st run", "urlwatch, 2nd run"
SHOWN_SETTINGS = ("CONCURRENT_REQUESTS", "CONCURRENT_REQUESTS_PER_DOMAIN", "CONCURRENT_ITEMS", "ROBOTSTXT_OBEY",
                  "AUTOTHROTTLE_ENABLED", "LOG_LEVEL", "DOWNLOAD_DELAY", "DOWNLOAD_TIMEOUT", "USER_AGENT")

# -- the pages ------------------------------------------------------------------------------------

_VOCABULARY = """the of and to in is that for it as was with be by on not this are or from at which have an
they one you were her all she there would their we him been has when who will more no if out so said what
up its about into than them can only other new some could time these two may then do first any my now such
like our over man me even most made after also did many before must through back years where much your way
well down should because each just those people how too little state good very make world still own see
men work long get here between both life being under never day same another know while last might us great
old year off come since against go came right used take three council report market policy water energy
city river school health museum library station bridge garden festival season harbour village county
budget vote plan study survey result issue change price service customer order delivery refund account
storage network server record archive release version update feature design model system review""".split()


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_VOCABULARY) for _ in range(rng.randint(8, 22))]
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words)), str(rng.randint(2, 2030)))
    return " ".join(words).capitalize() + "."


def _paragraph(rng: random.Random) -> str:
    """A paragraph with the inline markup of a CMS: links with tracking parameters, emphasis."""
    parts = []
    for _ in range(rng.randint(3, 6)):
        sentence = _sentence(rng)
        if rng.random() < 0.4:
            words = sentence.split(" ")
            i = rng.randrange(len(words) - 1)
            words[i] = (f'<a class="inline-link c{rng.randint(0, 39)}" data-track="body-link" '
                        f'href="https://www.example.com/story/{rng.getrandbits(32):x}?utm_source=article&amp;'
                        f'utm_medium=inline">{words[i]}')
            words[i + 1] += "</a>"
            sentence = " ".join(words)
        elif rng.random() < 0.2:
            sentence = f'<span class="highlight" data-id="{rng.getrandbits(24)}">{sentence}</span>'
        parts.append(sentence)
    return " ".join(parts)


_ICON = ('<svg class="icon" width="16" height="16" viewBox="0 0 16 16" aria-hidden="true"><path d="M2 3h12v2H2zm0 4'
         'h12v2H2zm0 4h12v2H2z" fill="currentColor"/></svg>')


def _links(rng: random.Random, count: int, prefix: str, icons: bool = False) -> str:
    return "".join(
        f'<li class="menu-item menu-item-{rng.randint(100, 999)}"><a class="menu-link" data-track="{prefix}-link" '
        f'href="/{prefix}/{rng.choice(_VOCABULARY)}-{rng.randint(1, 9999)}?ref={prefix}">{_ICON if icons else ""}'
        f"<span>{rng.choice(_VOCABULARY).title()} {rng.choice(_VOCABULARY)}</span></a></li>" for _ in range(count))


def _card(rng: random.Random) -> str:
    slug = f"{rng.choice(_VOCABULARY)}-{rng.getrandbits(32):x}"
    return (f'<li class="card"><a href="/story/{slug}?ref=related"><figure><img loading="lazy" '
            f'src="/img/{slug}-320.jpg" srcset="/img/{slug}-320.jpg 320w, /img/{slug}-640.jpg 640w" '
            f'sizes="(max-width: 600px) 100vw, 320px" width="320" height="180" alt="">'
            f"<figcaption>{_sentence(rng)}</figcaption></figure></a></li>")


def _script(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    length = 0
    while length < size:
        name = rng.choice(_VOCABULARY)
        parts.append(f'window.__cfg_{name}_{rng.randint(0, 99)} = {{"id": "{rng.getrandbits(64):x}", '
                     f'"enabled": {str(rng.random() < 0.5).lower()}, "ratio": {rng.random():.4f}}};\n')
        length += len(parts[-1])
    return "".join(parts)


_CSS = "".join(f".c{i} {{ margin: {i % 7}px {i % 5}em; color: #{i * 2654435761 % 0xFFFFFF:06x}; }}\n"
               for i in range(40))


def page_template(index: int, label: str | None = None) -> str:
    """Page *index* with ``@@stamp@@``, ``@@ago@@`` and ``@@token@@`` where the per-load noise goes.
    *label* names the page in its title, canonical link and JSON-LD instead of *index* (``@@id@@``:
    one template for many distinct pages).

    Proportions of a real article page: scripts, styles, menus and cards around a few KB of text
    (visible text is ~11% of the HTML; in the real-page corpus: median 6%, mean 10%, p75 12%).
    """
    rng = random.Random(index)
    name = str(index) if label is None else label
    target = rng.randint(15 * 1024, 30 * 1024)
    title = f"{_sentence(rng)[:-1]} ({name})"
    head = (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f'<meta name="viewport" content="width=device-width"><link rel="stylesheet" href="/static/site.css">'
            f'<meta property="og:title" content="{title}"><link rel="canonical" href="/p/{name}">'
            f"<style>{_CSS}</style><script>{_script(rng, target // 8)}var csrfToken = \"@@token@@\";</script>"
            f'<script type="application/ld+json">{{"@context": "https://schema.org", "@type": "Article", '
            f'"headline": "{title}", "identifier": "{name}"}}</script></head>')
    top = (f'<body class="c{index % 40}"><header><a class="logo" href="/">Example Times</a><nav><ul class="menu">'
           f"{_links(rng, 20, 'section', icons=True)}</ul></nav><form action=\"/search\"><input type=\"hidden\" "
           f'name="csrf" value="@@token@@"><input name="q"></form></header>'
           f'<main><ol class="breadcrumbs">{_links(rng, 3, "topic")}</ol><article><h1>{title}</h1>'
           f'<p class="meta">By {rng.choice(_VOCABULARY).title()} {rng.choice(_VOCABULARY).title()} · '
           "Updated @@stamp@@ · @@ago@@</p>")
    bottom = (f'</article><aside><h2>Related</h2><ul class="cards">{"".join(_card(rng) for _ in range(6))}</ul>'
              f"</aside></main><footer><ul>{_links(rng, 24, 'about')}</ul><p>© Example Times. All rights "
              f'reserved.</p></footer><script src="/static/app.js" async></script>'
              f"<script>{_script(rng, target // 10)}</script></body></html>")
    body: list[str] = []
    size = len(head) + len(top) + len(bottom)
    while size < target:
        roll = rng.random()
        if roll < 0.1:
            block = f'<h2 class="section-title" id="s{len(body)}">{_sentence(rng)[:-1]}</h2>'
        elif roll < 0.17:
            block = "<ul>" + "".join(f"<li>{_sentence(rng)}</li>" for _ in range(rng.randint(3, 6))) + "</ul>"
        elif roll < 0.2:
            rows = "".join(f'<tr class="row"><td class="name">{rng.choice(_VOCABULARY)}</td><td class="num">'
                           f'{rng.randint(1, 999)}</td><td class="num">{rng.random() * 100:.1f}%</td></tr>'
                           for _ in range(rng.randint(3, 8)))
            block = (f'<table class="data"><thead><tr><th>Item</th><th>Count</th><th>Share</th></tr></thead>'
                     f"{rows}</table>")
        elif roll < 0.3:
            block = f'<div class="ad-slot" data-slot="{rng.getrandbits(32)}"><script>{_script(rng, 600)}</script></div>'
        else:
            block = f'<p class="c{rng.randint(0, 39)}">{_paragraph(rng)}</p>'
        body.append(block)
        size += len(block)
    return head + top + "\n".join(body) + bottom


_SLOT = re.compile(r"@@(\w+)@@")


def split_template(html: str) -> list[bytes | str]:
    """Alternating literal byte segments and slot names."""
    return [p.encode("utf-8") if i % 2 == 0 else p for i, p in enumerate(_SLOT.split(html))]


# -- the server process -----------------------------------------------------------------------------


def serve(pages: int, templates: int | None = None) -> int:
    """Serves /p/0 .. /p/<pages - 1>. With fewer *templates* than pages (the memory mode's 20,000
    pages), page i is template i mod *templates* with i in its title: distinct pages, cheap server."""
    from datetime import UTC, datetime

    from twisted.internet import reactor as installed_reactor
    from twisted.web.http import Request as HTTPRequest
    from twisted.web.resource import Resource
    from twisted.web.server import Site

    reactor: Any = installed_reactor  # the module-level stand-in has no useful static type

    count = pages if templates is None else min(templates, pages)
    label = None if count == pages else "@@id@@"
    rendered = [split_template(page_template(i, label)) for i in range(count)]

    class Pages(Resource):
        isLeaf = True

        def render_GET(self, request: Any) -> bytes:  # twisted.web.server.Request, partly untyped
            match = re.fullmatch(rb"/p/(\d+)", request.path)
            if match is None or int(match.group(1)) >= pages:
                request.setResponseCode(404)
                return b"not found"
            noise = {"stamp": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC").encode(),
                     "ago": f"{random.randint(2, 59)} minutes ago".encode(),
                     "token": os.urandom(16).hex().encode(), "id": match.group(1)}
            request.setHeader(b"content-type", b"text/html; charset=utf-8")
            page = rendered[int(match.group(1)) % count]
            return b"".join(p if isinstance(p, bytes) else noise[p] for p in page)

    class QuietSite(Site):
        def log(self, request: HTTPRequest) -> None:  # no access log: it would only cost CPU
            pass

    site = QuietSite(Pages())  # type: ignore[no-untyped-call]
    port = reactor.listenTCP(0, site, backlog=128, interface="127.0.0.1")
    print(f"PORT {port.getHost().port}", flush=True)
    reactor.run()
    return 0


class Server:
    """The server subprocess; stops it (and only it) on exit."""

    def __init__(self, pages: int, templates: int | None = None):
        more = [] if templates is None else ["--templates", str(templates)]
        self.proc = subprocess.Popen([sys.executable, __file__, "serve", "--pages", str(pages), *more],
                                     stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            self.stop()
            raise RuntimeError(f"the page server did not start: {line!r}")
        self.base = f"http://127.0.0.1:{int(line.split()[1])}"

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# -- the crawl process ------------------------------------------------------------------------------


def _plain_spider(urls_file: str) -> Any:
    import scrapy
    from scrapy.http import Response

    class PlainSpider(scrapy.Spider):
        """The reference: same requests as the watch spider, each body's length."""

        name = "plain"

        def __init__(self, **kwargs: Any):
            super().__init__(**kwargs)
            self.urls = Path(urls_file).read_text(encoding="utf-8").split()

        async def start(self) -> AsyncIterator[Any]:
            for url in self.urls:
                yield scrapy.Request(url, callback=self.parse, dont_filter=True)

        def parse(self, response: Response) -> Iterator[dict[str, Any]]:
            yield {"length": len(response.body)}

    return PlainSpider


def _workers(settings: Any) -> Any:
    """The number of changewatch worker processes, or the raw setting if changewatch's config moved."""
    try:
        try:
            from changewatch.config import ChangewatchConfig
        except ImportError:  # a checkout from before this layout
            from changewatch.config import ChangewatchConfig  # type: ignore[no-redef]

        return ChangewatchConfig.from_settings(settings).workers
    except (ImportError, AttributeError, TypeError):
        return settings.get("CHANGEWATCH_WORKERS", "default")


def crawl(spider: str, urls_file: str, overrides: dict[str, Any], out: str, profile: str | None,
          sample_rss: bool = False) -> int:
    """``scrapy crawl watch -a watchlist=URLS_FILE -s ...`` (the spider loaded by name, as the
    command does, on the project's settings: SCRAPY_SETTINGS_MODULE), or the plain spider on
    Scrapy's default settings; either with *overrides*. Writes stats, CPU times and peak RSS to
    *out*. With *sample_rss*, a thread samples the children's own peak RSS (rss.py) while the
    crawl runs."""
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess
    from scrapy.settings import Settings
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings() if spider == "watch" else Settings()
    settings.setdict(overrides, priority="cmdline")
    process = CrawlerProcess(settings)
    kwargs = {"watchlist": urls_file} if spider == "watch" else {}
    crawler = process.create_crawler("watch" if spider == "watch" else _plain_spider(urls_file))
    rss_opened: list[int] = []  # RSS once the spider (its watchlist) and the pipelines are open
    crawler.signals.connect(lambda: rss_opened.append(vm_rss_kb()), signal=signals.spider_opened, weak=False)
    process.crawl(crawler, **kwargs)
    before = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    peaks = ChildPeaks() if sample_rss else None
    with peaks or contextlib.nullcontext():
        if profile:
            import cProfile

            cProfile.runctx("process.start()", globals(), {"process": process}, profile)
        else:
            process.start()
    wall = time.perf_counter() - t0
    from twisted.internet import reactor as installed_reactor

    after = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert crawler.stats is not None
    result = {
        "stats": crawler.stats.get_stats(), "wall": wall,
        "cpu_self": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
        "cpu_children": children.ru_utime + children.ru_stime,
        # peak RSS in KB: ru_maxrss of this process and of its largest child, which both start from
        # their parent's (rss.py); VmHWM of this process and, sampled, of each of its children
        "maxrss_self": after.ru_maxrss, "maxrss_children": children.ru_maxrss,
        "vmhwm_self": vm_hwm_kb(), "child_peaks": peaks.peaks if peaks is not None else None,
        "rss_opened": rss_opened[0] if rss_opened else 0,
        "settings": {"settings": os.environ.get("SCRAPY_SETTINGS_MODULE", "-") if spider == "watch"
                     else "Scrapy's defaults",
                     "reactor": f"{type(installed_reactor).__module__}.{type(installed_reactor).__qualname__}",
                     "ADDONS": sorted(crawler.settings.getdict("ADDONS"))}
        | {name: crawler.settings.get(name) for name in SHOWN_SETTINGS}
        | ({"CHANGEWATCH_WORKERS": _workers(crawler.settings)} if spider == "watch" else {}),
        "pipelines": sorted(crawler.settings.getdict("ITEM_PIPELINES")),
    }
    Path(out).write_text(json.dumps(result, default=str), encoding="utf-8")
    return 0


# -- the benchmark ------------------------------------------------------------------------------------


def busy_seconds() -> float:
    """CPU seconds spent by the whole machine so far (all cores, everything but idle and iowait)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class QuietGate:
    """Before each crawl, waits until the machine's other processes use less than *limit* of a
    core over one second (a test suite running next to the benchmark would skew it), spending at
    most *budget* seconds waiting over the whole benchmark so that it stays bounded in time."""

    def __init__(self, limit: float = 0.15, budget: float = 60.0):
        self.limit = limit
        self.budget = budget

    def wait(self) -> float:
        """The load (other processes' CPU seconds per second) seen last."""
        while True:
            t0 = time.monotonic()
            before = busy_seconds()
            time.sleep(0.5)
            load = (busy_seconds() - before) / 0.5
            self.budget -= time.monotonic() - t0
            if load < self.limit or self.budget <= 0:
                return load


@dataclass
class Variant:
    label: str
    spider: str
    changewatch: bool
    results: list[dict[str, Any]] = field(default_factory=list)
    store_uri: str | None = None  # instead of a fresh SQLite file per run
    extra: dict[str, Any] = field(default_factory=dict)  # more settings for this variant
    #: the Python that runs this variant's crawls (--against: one whose changewatch is another checkout's)
    python: str | None = None

    def rate(self, r: dict[str, Any]) -> float:
        if self.spider == "urlwatch":  # URLs / wall seconds of the whole urlwatch process
            return float(r["pages"]) / float(r["wall"])
        return float(r["stats"]["response_received_count"]) / float(r["stats"]["elapsed_time_seconds"])

    def corrected_rate(self, r: dict[str, Any], startup: float) -> float:
        """urlwatch's rate with its start-up (*startup* seconds) taken out of its wall time."""
        return float(r["pages"]) / (float(r["wall"]) - startup)

    def median_corrected(self, startup: float) -> float:
        return statistics.median(self.corrected_rate(r, startup) for r in self.results)

    def median_rate(self) -> float:
        return statistics.median(self.rate(r) for r in self.results)


class PageServer(Protocol):
    """What the crawls need of a page server: :class:`Server` (synthetic pages) or
    :class:`realpages.CorpusServer` (nginx serving the real-page corpus)."""

    base: str

    def cpu_seconds(self) -> float: ...

    def stop(self) -> None: ...


@dataclass
class Workbench:
    """What every crawl of one benchmark shares: the server, the temporary directory with the
    URL list and the watchlist, the quiet gate, and where profiles go. With *expect_200* (the
    real-page and memory modes), a crawl that did not get that many 200 responses aborts the run."""

    server: PageServer
    workdir: Path
    gate: QuietGate
    profile_dir: Path | None
    expect_200: int | None = None
    sample_rss: bool = False
    urlwatch: Path | None = None  # the urlwatch command, for the urlwatch variants
    startups: list[dict[str, float]] = field(default_factory=list)  # urlwatch on an empty job list

    def command(self, variant: Variant, store: Path, run: int, out: Path) -> list[str]:
        overrides = dict(PLAIN_SETTINGS if variant.spider == "plain" else COMMON_SETTINGS)
        if variant.changewatch:
            overrides["CHANGEWATCH_STORE"] = variant.store_uri or f"sqlite:///{store}"
            overrides.update(variant.extra)
        elif variant.spider == "watch":
            overrides.update(NO_CHANGEWATCH)
        profile = []
        if self.profile_dir is not None and variant.changewatch:
            profile = ["--profile", str(self.profile_dir / f"{re.sub(r'[^a-z0-9]+', '_', variant.label)}-{run}.prof")]
        urls = self.workdir / ("watchlist.yaml" if variant.spider == "watch" else "urls.txt")
        return [variant.python or sys.executable, __file__, "crawl", "--spider", variant.spider, "--urls", str(urls),
                "--settings-json", json.dumps(overrides), "--out", str(out), *profile,
                *(["--sample-rss"] if self.sample_rss else [])]

    def _measured(self, cmd: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
        """Runs *cmd* once the machine is quiet: its process, wall seconds, CPU seconds (its own and
        its children's), the page server's CPU seconds, and the CPU any other process used meanwhile."""
        load_before = self.gate.wait()
        cpu0, busy0, children0 = self.server.cpu_seconds(), busy_seconds(), _children_cpu()
        # 600 s, or more for the memory mode's long crawls (a safety net, not an expectation)
        timeout = max(600.0, 0.3 * (self.expect_200 or 0))
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=self.workdir, env=env, capture_output=True, text=True, timeout=timeout)
        wall = time.perf_counter() - t0
        busy, children = busy_seconds() - busy0, _children_cpu() - children0
        server = self.server.cpu_seconds() - cpu0
        # CPU used by anything else while the process ran (start-up included on both sides)
        return proc, {"process_wall": wall, "process_cpu": children, "cpu_server": server,
                      "cpu_foreign": max(0.0, busy - children - server), "load_before": load_before,
                      "stderr": proc.stderr[-2000:]}

    def run(self, variant: Variant, store: Path, run: int) -> dict[str, Any]:
        if variant.spider == "urlwatch":
            return self.run_urlwatch(variant, run)
        out = self.workdir / f"result-{len(variant.results)}-{run}.json"
        out.unlink(missing_ok=True)
        cmd = self.command(variant, store, run, out)
        env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
        if variant.spider == "watch":  # the plain spider runs on Scrapy's defaults
            env["SCRAPY_SETTINGS_MODULE"] = "changewatch.settings"
        proc, measured = self._measured(cmd, env)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"{variant.label} crawl failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        if self.expect_200 is not None:
            check_all_200(variant.label, result["stats"], self.expect_200)
        result |= {k: measured[k] for k in ("cpu_server", "cpu_foreign", "load_before", "stderr")}
        variant.results.append(result)
        return result

    def run_urlwatch(self, variant: Variant, run: int) -> dict[str, Any]:
        """urlwatch on the URL list in the home of this *run* (urlwatchrun.py): a first run (a fresh
        cache: baselines), then a second (comparisons). Aborts unless it fetched every URL."""
        assert self.urlwatch is not None and self.expect_200 is not None
        home = self.workdir / f"urlwatch-{run}"
        first = not (home / "cache.db").exists()
        if first:
            urls = (self.workdir / "urls.txt").read_text(encoding="utf-8").split()
            urlwatchrun.prepare(home, urls, URLWATCH_WORKERS)
        proc, measured = self._measured(*urlwatchrun.command(self.urlwatch, home))
        outcome = urlwatchrun.outcome(home, proc)
        urlwatchrun.check(variant.label, outcome, home, self.expect_200, first, URLWATCH_WORKERS)
        verbs = outcome["verbs"]
        result: dict[str, Any] = {
            "pages": sum(verbs.get(v, 0) for v in ("new", "changed", "unchanged")), "wall": measured["process_wall"],
            "cpu_self": measured["process_cpu"], "cpu_children": 0.0, "outcome": outcome,
            "stats": {f"urlwatch/{verb}": n for verb, n in verbs.items()},
            "settings": {"urlwatch": outcome["version"], "html2text": outcome["html2text"],
                         "filter": ", ".join(f"{k}: {m}" for k, m in urlwatchrun.FILTER.items()),
                         "MAX_WORKERS": outcome["max_workers"], "pool threads": outcome["pool_threads"],
                         "timeout": urlwatchrun.DEFAULT_TIMEOUT, "reporters": "stdout (no colour), benchcount",
                         "cache": "minidb (SQLite)"},
            "pipelines": [],
        } | {k: measured[k] for k in ("cpu_server", "cpu_foreign", "load_before", "stderr")}
        variant.results.append(result)
        return result

    def urlwatch_startup(self, run: int, samples: int = 3) -> None:
        """urlwatch's start-up: *samples* runs on an empty job list (its imports, configuration,
        hooks and cache opened, reporters run), each in a fresh home, added to :attr:`startups`."""
        assert self.urlwatch is not None
        for i in range(samples):
            home = self.workdir / f"urlwatch-startup-{run}-{i}"
            urlwatchrun.prepare(home, [], URLWATCH_WORKERS)
            proc, measured = self._measured(*urlwatchrun.command(self.urlwatch, home))
            outcome = urlwatchrun.outcome(home, proc)
            if outcome["jobs"]:
                raise SystemExit(f"ABORTED: urlwatch ran {outcome['jobs']} jobs from an empty job list")
            self.startups.append({"wall": measured["process_wall"], "cpu": measured["process_cpu"]})

    def startup(self) -> dict[str, float]:
        """The median wall and CPU seconds of urlwatch's start-up."""
        return {k: statistics.median(s[k] for s in self.startups) for k in ("wall", "cpu")}


def check_all_200(label: str, stats: dict[str, Any], expected: int) -> None:
    """Abort unless the crawl got *expected* 200 responses, and one more for each second load
    changewatch made (a baseline's, a confirmation: its stats count them): a 403 (nginx's worker
    user unable to read the pages) or a 404 costs nothing to process and would pass for a fast
    crawl."""
    expected += sum(stats.get(f"changewatch/confirm/{name}", 0) for name in ("baseline", "sent")) \
        - stats.get("changewatch/confirm/shared", 0)
    got = stats.get("downloader/response_status_count/200", 0)
    if got == expected:
        return
    statuses = {k.rsplit("/", 1)[1]: v for k, v in stats.items() if k.startswith("downloader/response_status_count/")}
    failures = {k.rsplit("/", 1)[1]: v for k, v in stats.items() if k.startswith("downloader/exception_type_count/")}
    raise SystemExit(f"ABORTED: the {label} crawl got {got} responses with status 200, not {expected} "
                     f"(responses by status: {statuses or 'none'}; download errors: {failures or 'none'}); "
                     "its figures would measure error pages")


# Stats that count observations by kind. The names may change (the package is being refactored):
# every changewatch/commit/* stat is shown by its last part, as before, and any other stat
# changewatch/<component>/<kind> as component/kind.
_KIND_STAT = re.compile(r"changewatch/(\w+)/(baseline|none|noise|content|field|entities|error)")
_URLWATCH_STAT = re.compile(r"urlwatch/(new|changed|unchanged|error)")


def _kinds(stats: dict[str, Any]) -> str:
    kinds: dict[str, Any] = {}
    for name, value in stats.items():
        match = _KIND_STAT.fullmatch(name)
        if name.startswith("changewatch/commit/"):
            kinds[name.rsplit("/", 1)[1]] = value
        elif _URLWATCH_STAT.fullmatch(name):
            kinds[name] = value
        elif match is not None:
            kinds[f"{match[1]}/{match[2]}"] = value
    return ", ".join(f"{k}={v}" for k, v in sorted(kinds.items())) or "-"


def report(variants: list[Variant], pages: int) -> None:
    reference = variants[0].median_rate()
    print(f"\n{'crawl':<20} {'pages/s per run':<21} {'median':>6} {'ratio':>6} {'elapsed':>7} {'crawler':>7} "
          f"{'worker':>6} {'server':>6} {'other':>5}  outcome")
    for v in variants:
        rates = " ".join(f"{v.rate(r):6.1f}" for r in v.results)
        mid = sorted(v.results, key=v.rate)[len(v.results) // 2]
        stats = mid["stats"]
        urlwatch = v.spider == "urlwatch"
        ok = all((r["pages"] if urlwatch else r["stats"].get("response_received_count")) == pages for r in v.results)
        elapsed = mid["wall"] if urlwatch else stats["elapsed_time_seconds"]
        worker = "-" if urlwatch else f"{mid['cpu_children']:.2f}"
        print(f"{v.label:<20} {rates:<21} {v.median_rate():6.1f} {v.median_rate() / reference:5.2f}x "
              f"{elapsed:7.2f} {mid['cpu_self']:7.2f} {worker:>6} "
              f"{mid['cpu_server']:6.2f} {max(r['cpu_foreign'] for r in v.results):5.2f}  "
              f"{'all ' + str(pages) + ' pages' if ok else 'MISSING PAGES'}; {_kinds(stats)}")
    print("\nelapsed: seconds, spider_opened to spider_closed; CPU seconds of the median run: crawler = the Scrapy "
          "process\n(reactor, store and pool threads), worker = its changewatch worker process(es), server = the "
          "page server;\nother = the most CPU any other process on the machine used during one of the runs (start-up "
          "included).")
    if any(v.spider == "urlwatch" for v in variants):
        print("urlwatch: pages/s = URLs / wall seconds of the whole urlwatch process, its start-up (imports, "
              "configuration,\ncache) included, unlike the crawls' elapsed_time_seconds; elapsed = that wall time; "
              "crawler = the CPU seconds\nof the urlwatch process (all its threads, start-up included). Start-up "
              "corrected figures below.")
    report_settings(variants)
    plain = variants[0]
    for v in variants[2:]:
        if v.spider == "urlwatch":
            continue  # report_urlwatch
        paired = statistics.median(v.rate(r) / plain.rate(p) for r, p in zip(v.results, plain.results, strict=True))
        print(f"Ratio {v.label} / plain: {v.median_rate() / reference:.2f}x (ratio of the medians); "
              f"{paired:.2f}x (median of each run's ratio to the plain crawl just before it); target >= 0.9x")


def _paired(a: Variant, b: Variant, startup: float | None = None) -> float:
    """The median of each run's ratio of *a* to *b* (urlwatch's rates start-up corrected with *startup*)."""
    def rate(v: Variant, r: dict[str, Any]) -> float:
        return v.corrected_rate(r, startup) if startup is not None and v.spider == "urlwatch" else v.rate(r)

    return statistics.median(rate(a, ra) / rate(b, rb) for ra, rb in zip(a.results, b.results, strict=True))


def report_urlwatch(variants: list[Variant], workbench: Workbench, pages: int) -> None:
    """urlwatch's start-up, its rates raw and start-up corrected, and the ratios of the watch
    crawls to urlwatch's runs and of urlwatch's runs to plain Scrapy."""
    by_label = {v.label: v for v in variants}
    plain = variants[0]
    startup = workbench.startup()
    print(f"\nurlwatch start-up (an empty job list, {len(workbench.startups)} times, median): {startup['wall']:.2f} s "
          f"wall, {startup['cpu']:.2f} CPU s")
    for v in (by_label[URLWATCH_FIRST], by_label[URLWATCH_SECOND]):
        mid = sorted(v.results, key=v.rate)[len(v.results) // 2]
        corrected = v.median_corrected(startup["wall"])
        print(f"{v.label}: {v.median_rate():.1f} pages/s raw, {corrected:.1f} start-up corrected "
              f"(URLs / (wall - {startup['wall']:.2f} s)); CPU {mid['cpu_self']:.2f} s raw, "
              f"{mid['cpu_self'] - startup['cpu']:.2f} s corrected; text after the filter: "
              f"{mid['outcome']['text_chars'] / pages / 1024:.1f} KB per page")
        print(f"Ratio {v.label} / plain: {v.median_rate() / plain.median_rate():.2f}x raw, "
              f"{corrected / plain.median_rate():.2f}x start-up corrected (ratio of the medians); "
              f"{_paired(v, plain):.2f}x, {_paired(v, plain, startup['wall']):.2f}x (median of each run's ratio)")
    for watch, urlwatch in ((by_label["watch, 1st crawl"], by_label[URLWATCH_FIRST]),
                            (by_label["watch, 2nd crawl"], by_label[URLWATCH_SECOND])):
        print(f"Ratio {watch.label} / {urlwatch.label}: {watch.median_rate() / urlwatch.median_rate():.2f}x raw, "
              f"{watch.median_rate() / urlwatch.median_corrected(startup['wall']):.2f}x against urlwatch start-up "
              f"corrected (ratio of the medians); {_paired(watch, urlwatch):.2f}x, "
              f"{_paired(watch, urlwatch, startup['wall']):.2f}x (median of each run's ratio)")


def report_settings(variants: list[Variant]) -> None:
    """The effective settings of each variant, and an abort if the crawls ran on different reactors."""
    print("Effective settings:")
    for v in variants:
        shown = v.results[0]["settings"]
        pipelines = "" if v.spider == "urlwatch" else f", ITEM_PIPELINES={v.results[0]['pipelines'] or '{}'}"
        print(f"  {v.label}: " + ", ".join(f"{k}={val}" for k, val in shown.items()) + pipelines)
    reactors = {v.results[0]["settings"]["reactor"] for v in variants if "reactor" in v.results[0]["settings"]}
    if len(reactors) > 1:
        raise SystemExit(f"ABORTED: the crawls ran on different reactors ({', '.join(sorted(reactors))})")


def durability_variants() -> list[Variant]:
    """The crash test's throughput cost: the store as shipped (an SQLite file, WAL,
    synchronous=NORMAL) against an in-memory store, each on a first crawl (every page a new
    baseline: the most writes a crawl does). synchronous=FULL (an fsync per observation, for
    power-loss safety) is shown for information."""
    return [Variant("plain Scrapy", "plain", False),
            Variant("in-memory store", "watch", True, store_uri="sqlite:///:memory:"),
            Variant("store as shipped", "watch", True),
            Variant("store, FULL sync", "watch", True, extra={"CHANGEWATCH_STORE_SYNCHRONOUS": "FULL"})]


def _start_source(source: str, pages: int, tmp: Path, corpus: Path,
                  templates: int | None = None) -> tuple[PageServer, list[str], str]:
    """The page server, the *pages* URLs to crawl, and a line that describes them."""
    t0 = time.perf_counter()
    if source == "corpus":
        nginx = CorpusServer(corpus, tmp / "nginx")
        return nginx, nginx.urls(pages), f"{nginx.describe(pages)}; started in {time.perf_counter() - t0:.1f} s"
    server = Server(pages, templates)
    urls = [f"{server.base}/p/{i}" for i in range(pages)]
    distinct = pages if templates is None else min(pages, templates)
    sizes = [len(page_template(i).encode("utf-8")) for i in range(0, distinct, 97)]
    made = "" if distinct == pages else f" (made from {distinct} templates)"
    return server, urls, (f"Server: {server.base}, {pages} pages{made}, {min(sizes) // 1024}-{max(sizes) // 1024} KB "
                          f"(mean {statistics.mean(sizes) / 1024:.1f} KB) in {time.perf_counter() - t0:.1f} s")


def _write_url_files(workdir: Path, urls: list[str]) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "urls.txt").write_text("\n".join(urls), encoding="utf-8")
    (workdir / "watchlist.yaml").write_text("watches:\n" + "".join(f"  - url: {u}\n" for u in urls),
                                            encoding="utf-8")


def report_per_page(variants: list[Variant], pages: int) -> None:
    """CPU milliseconds per page of the median run, and what changewatch's conditional requests did."""
    print(f"\n{'CPU ms per page':<20} {'crawler':>7} {'worker':>7} {'both':>7} {'server':>7}   (median run; "
          "server = nginx; urlwatch: crawler = its process, start-up included)")
    for v in variants:
        mid = sorted(v.results, key=v.rate)[len(v.results) // 2]
        crawler, worker = 1000 * mid["cpu_self"] / pages, 1000 * mid["cpu_children"] / pages
        shown = "-" if v.spider == "urlwatch" else f"{worker:.2f}"
        print(f"{v.label:<20} {crawler:7.2f} {shown:>7} {crawler + worker:7.2f} "
              f"{1000 * mid['cpu_server'] / pages:7.2f}")
    for v in variants:
        conditional = {k.removeprefix("changewatch/conditional/"): val for k, val in v.results[-1]["stats"].items()
                       if k.startswith("changewatch/conditional/")}
        if conditional:
            print(f"  {v.label}, last run: changewatch/conditional/ {conditional} (nginx answers 200 regardless)")


def against_variants(python: str) -> list[Variant]:
    """--against: the watch crawls again, run by *python* (whose ``import changewatch`` is the
    reference checkout: main), each pair on a store of its own, in the same runs as this tree's."""
    return [Variant("against, 1st crawl", "watch", True, python=python),
            Variant("against, 2nd crawl", "watch", True, python=python)]


def _in_turn(variants: list[Variant], run: int) -> list[Variant]:
    """*variants* in the order of run *run*: with --against, every other run crawls the other
    tree's pair first, so neither tree always runs on the machine as the other leaves it."""
    theirs = [v for v in variants if v.label.startswith("against, ")]
    if not theirs or run % 2 == 0:
        return variants
    mine = [v for v in variants if v.label in ("watch, 1st crawl", "watch, 2nd crawl")]
    at = variants.index(mine[0])
    rest = [v for v in variants[at:] if v not in mine and v not in theirs]
    return variants[:at] + theirs + mine + rest


def report_against(variants: list[Variant]) -> None:
    ours = {v.label.removeprefix("watch, "): v for v in variants if v.label.startswith("watch, ") and v.changewatch}
    for theirs in (v for v in variants if v.label.startswith("against, ")):
        mine = ours[theirs.label.removeprefix("against, ")]
        print(f"Ratio this tree / against, {theirs.label.removeprefix('against, ')}: "
              f"{mine.median_rate() / theirs.median_rate():.3f}x (ratio of the medians); "
              f"{_paired(mine, theirs):.3f}x (median of each run's ratio)")


def bench(pages: int, runs: int, profile_dir: Path | None, durability: bool = False, source: str = "synthetic",
          corpus: Path = CORPUS, against: str | None = None) -> int:
    with_urlwatch = source == "corpus" and not durability
    urlwatch: Path | None = None
    if with_urlwatch:  # first: a benchmark that cannot run urlwatch fails before any crawl
        urlwatch, installed = urlwatchrun.ensure_installed()
        print(f"urlwatch: {installed}")
    tmp = Path(tempfile.mkdtemp(prefix="changewatch-bench-"))
    server: PageServer | None = None
    try:
        t0 = time.perf_counter()
        server, urls, described = _start_source(source, pages, tmp, corpus)
        print(f"{described}; {os.cpu_count()} CPUs; {runs} run(s) per crawl")
        _write_url_files(tmp, urls)
        variants = durability_variants() if durability else [
            Variant("plain Scrapy", "plain", False),
            Variant("watch, 1st crawl", "watch", True), Variant("watch, 2nd crawl", "watch", True)]
        if with_urlwatch:
            variants += [Variant(URLWATCH_FIRST, "urlwatch", False), Variant(URLWATCH_SECOND, "urlwatch", False)]
        if against is not None:
            variants += against_variants(against)
        workbench = Workbench(server, tmp, QuietGate(), profile_dir, pages if source == "corpus" else None,
                              urlwatch=urlwatch)
        for run in range(runs):
            if with_urlwatch:
                workbench.urlwatch_startup(run)
                print(f"  run {run + 1}: urlwatch start-up    " + ", ".join(
                    f"{s['wall']:.2f} s" for s in workbench.startups[-3:]) + " wall (an empty job list)", flush=True)
            for v in _in_turn(variants, run):
                # a fresh store per variant and run in the durability comparison: first crawls only
                folder = (f"store-{run}-{v.label.replace(' ', '-')}" if durability
                          else f"store-{run}-against" if v.python else f"store-{run}")
                store = tmp / folder / "state.db"
                r = workbench.run(v, store, run)
                print(f"  run {run + 1}: {v.label:<20} {v.rate(r):7.1f} pages/s  ({_kinds(r['stats'])}; other "
                      f"processes {r['cpu_foreign']:.2f} CPU s)", flush=True)
                if r["stderr"].strip():
                    print(f"    stderr of that crawl: {r['stderr'].strip()[-600:]}")
        report(variants, pages)
        if against is not None:
            report_against(variants)
        if with_urlwatch:
            report_urlwatch(variants, workbench, pages)
        if source == "corpus":
            report_per_page(variants, pages)
        if durability:
            memory, shipped = variants[1], variants[2]
            paired = statistics.median(shipped.rate(r) / memory.rate(m)
                                       for r, m in zip(shipped.results, memory.results, strict=True))
            print(f"Durability cost: store as shipped / in-memory store = "
                  f"{shipped.median_rate() / memory.median_rate():.2f}x (ratio of the medians); "
                  f"{paired:.2f}x (median of paired runs)")
        print(f"\nTotal time {time.perf_counter() - t0:.0f} s")
        return 0
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


# -- the memory mode ----------------------------------------------------------------------------------

MEMORY_TEMPLATES = 2000  # synthetic pages rendered by the server; more pages reuse them with their own id


def _mb(kilobytes: float) -> str:
    return f"{kilobytes / 1024:.0f}" if kilobytes else "-"


def _peak_kb(result: dict[str, Any], part: str) -> int:
    """Peak RSS in KB (VmHWM, see rss.py) of the crawl process ("self") or of its largest child
    ("children", changewatch's worker; 0 if none: plain Scrapy); "opened": the crawl process's
    RSS at spider_opened (the watchlist read, the pipelines open)."""
    if part == "opened":
        return int(result["rss_opened"])
    if part == "self":
        return int(result["vmhwm_self"])
    return max((kb for _, kb in (result["child_peaks"] or {}).values()), default=0)


def _largest_child(result: dict[str, Any]) -> str:
    peaks = sorted((result["child_peaks"] or {}).values(), key=lambda p: p[1])
    return f"{peaks[-1][0]} {_mb(peaks[-1][1])} MB" if peaks else "none"


def memory_crawls(workbench: Workbench, pages: int) -> list[Variant]:
    """Plain Scrapy, then the watch spider's 1st and 2nd crawls on one store, over *pages* URLs."""
    variants = [Variant("plain Scrapy", "plain", False), Variant("watch, 1st crawl", "watch", True),
                Variant("watch, 2nd crawl", "watch", True)]
    for v in variants:
        r = workbench.run(v, workbench.workdir / "store" / "state.db", 0)
        print(f"  {pages:>6} pages: {v.label:<17} {v.rate(r):6.1f} pages/s; peak RSS: crawl process "
              f"{_mb(_peak_kb(r, 'self'))} MB, largest child {_largest_child(r)} (ru_maxrss {_mb(r['maxrss_self'])} "
              f"and {_mb(r['maxrss_children'])} MB; {_kinds(r['stats'])}; other processes "
              f"{r['cpu_foreign']:.2f} CPU s)", flush=True)
    return variants


def report_memory(table: dict[int, list[Variant]], sizes: list[int]) -> None:
    small, large = sizes[0], sizes[-1]
    print(f"\n{'peak RSS, MB':<32}" + "".join(f"{n:>8} p" for n in sizes)
          + f"  {large}/{small}  MB per 1,000 pages more")
    for i, label in enumerate(v.label for v in table[small]):
        for part, key in (("crawl, at open", "opened"), ("crawl process", "self"), ("worker", "children")):
            kb = [_peak_kb(table[n][i].results[0], key) for n in sizes]
            if not any(kb):
                continue  # plain Scrapy has no worker process
            trend = (f"  {kb[-1] / kb[0]:9.2f}x  {(kb[-1] - kb[0]) / 1024 / (large - small) * 1000:8.1f}"
                     if all(kb) else "")
            print(f"{label + ': ' + part:<32}" + "".join(f"{_mb(k):>10}" for k in kb) + trend)
    print("crawl process = its VmHWM (peak RSS since exec) at its end; at open = its RSS at spider_opened (the "
          "watchlist read,\nthe pipelines open); worker = the VmHWM of its largest child "
          "(changewatch's worker), sampled\nevery 0.1 s. ru_maxrss is shown per crawl above, but a spawned worker's "
          "RUSAGE_CHILDREN figure starts at the crawl\nprocess's RSS (rss.py). Flat = a ratio close to 1.00x; plain "
          "Scrapy is the reference.")
    for n in sizes:
        print(f"  pages/s at {n}: " + ", ".join(f"{v.label} {v.rate(v.results[0]):.1f}" for v in table[n]))


def memory_bench(sizes: list[int], source: str, corpus: Path) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="changewatch-bench-memory-"))
    server: PageServer | None = None
    try:
        t0 = time.perf_counter()
        server, urls, described = _start_source(source, sizes[-1], tmp, corpus, MEMORY_TEMPLATES)
        print(f"{described}; {os.cpu_count()} CPUs; one crawl of each kind per size")
        gate = QuietGate()
        table: dict[int, list[Variant]] = {}
        for n in sizes:
            _write_url_files(tmp / f"pages-{n}", urls[:n])
            workbench = Workbench(server, tmp / f"pages-{n}", gate, None, expect_200=n, sample_rss=True)
            table[n] = memory_crawls(workbench, n)
        report_memory(table, sizes)
        print(f"\nTotal time {time.perf_counter() - t0:.0f} s")
        return 0
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def _sizes(text: str) -> list[int]:
    sizes = sorted({int(n) for n in text.split(",")})
    if len(sizes) < 2 or sizes[0] <= 0:
        raise argparse.ArgumentTypeError("two or more positive page counts, e.g. 2000,20000")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command")
    s = sub.add_parser("serve", help="(internal) serve the pages")
    s.add_argument("--pages", type=int, required=True)
    s.add_argument("--templates", type=int, help="render this many pages; the others reuse them with their own id")
    c = sub.add_parser("crawl", help="(internal) run one crawl")
    c.add_argument("--spider", choices=("plain", "watch"), required=True)
    c.add_argument("--urls", required=True)
    c.add_argument("--settings-json", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--profile")
    c.add_argument("--sample-rss", action="store_true")
    parser.add_argument("--pages", type=int, help="URLs per crawl (default 2000 synthetic pages, 1500 real ones)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", type=Path, help="write a cProfile of each changewatch crawl here")
    parser.add_argument("--durability", action="store_true",
                        help="compare the store as shipped with an in-memory store (the crash safety's cost)")
    parser.add_argument("--source", choices=("synthetic", "corpus"), default="synthetic",
                        help="synthetic pages from a Twisted server, or the real-page corpus served by nginx "
                             "(with urlwatch on the same URLs, unless --durability)")
    parser.add_argument("--real", dest="source", action="store_const", const="corpus", help="= --source corpus")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help=f"the real-page corpus (default {CORPUS})")
    parser.add_argument("--urlwatch-filter", choices=urlwatchrun.METHODS, default="re",
                        help="the method of urlwatch's html2text filter (default re: what 'filter: html2text' does)")
    parser.add_argument("--against", metavar="PYTHON",
                        help="also run the watch crawls with this Python, whose changewatch is another checkout "
                             "(main), in the same runs, and report this tree's rate as a ratio to it")
    parser.add_argument("--memory", action="store_true", help="peak RSS over long crawls instead of throughput")
    parser.add_argument("--memory-pages", type=_sizes, default=[2000, 20000], metavar="N,M",
                        help="page counts of the memory mode (default 2000,20000)")
    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve(args.pages, args.templates)
    if args.command == "crawl":
        return crawl(args.spider, args.urls, json.loads(args.settings_json), args.out, args.profile, args.sample_rss)
    if args.memory:
        if args.pages is not None or args.durability or args.profile is not None:
            parser.error("--memory takes --memory-pages (and --real), not --pages, --durability or --profile")
        return memory_bench(args.memory_pages, args.source, args.corpus)
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    urlwatchrun.FILTER["html2text"] = args.urlwatch_filter
    pages = args.pages if args.pages is not None else (1500 if args.source == "corpus" else 2000)
    return bench(pages, args.runs, args.profile, args.durability, args.source, args.corpus, args.against)


if __name__ == "__main__":
    sys.exit(main())
