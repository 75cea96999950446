"""Peak memory of a site watch's crawl as its sitemap grows: one site of N small synthetic pages
listed in one sitemap (``--index``: a sitemap index of children of PER_CHILD pages each), crawled
by the watch spider (its first crawl, then its second on the same store), for each N of
``--pages`` (default 5000,50000). The target: both processes' peak RSS (the crawl process and its
worker) within 10% from the smallest N to the largest, on both crawls.

Run: ``.venv/bin/python bench/bench_site.py [--index]`` (about 15 minutes on 2 cores;
``--pages 500,5000`` for a smoke run). Everything on 127.0.0.1 in a temporary directory removed at
the end. The server (a subprocess) answers the sitemaps (N URLs, each with a lastmod in the past)
and ``/p/<i>`` (~1 KB of text that names i). A first crawl must get an answer 200 for each sitemap
and page, and a second one for the sitemaps and between 5% and 20% of the pages (the lastmod
sample), or the benchmark aborts: a benchmark that measures errors measures nothing. Peaks are
VmHWM (rss.py): the crawl process's at its end, and each child's (the workers), sampled while it
runs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


#: pages listed in one child sitemap of the ``index`` layout
PER_CHILD = 5000


def serve(pages: int, port_file: str, layout: str = "single") -> int:
    """Serve the site until killed; write the port to *port_file*. *layout*: ``single``, one
    sitemap lists every page; ``index``, /sitemap.xml is an index of children of PER_CHILD pages."""
    def rows(start: int, stop: int) -> str:
        return "".join(f"<url><loc>http://127.0.0.1:{{port}}/p/{i}</loc><lastmod>2026-01-01</lastmod></url>"
                       for i in range(start, stop))

    def urlset(text: str) -> str:
        return f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{text}</urlset>'

    children = range(0, pages, PER_CHILD)
    index = ('<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
             + "".join(f"<sitemap><loc>http://127.0.0.1:{{port}}/sitemap-{j // PER_CHILD}.xml</loc></sitemap>"
                       for j in children) + "</sitemapindex>")
    files = ({"/sitemap.xml": urlset(rows(0, pages))} if layout == "single" else
             {"/sitemap.xml": index, **{f"/sitemap-{j // PER_CHILD}.xml": urlset(rows(j, min(pages, j + PER_CHILD)))
                                        for j in children}})

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            port = self.server.server_address[1]
            if self.path in files:
                body, ctype = files[self.path].replace("{port}", str(port)).encode(), "application/xml"
            elif self.path == "/robots.txt":
                body, ctype = b"User-agent: *\nAllow: /\n", "text/plain"
            elif self.path.startswith("/p/"):
                i = self.path[3:]
                body = (f"<!doctype html><html><head><title>Page {i}</title></head><body><main><h1>Page {i}</h1>"
                        + "".join(f"<p>Paragraph {k} of page {i}: the quick brown fox jumps over the lazy dog "
                                  f"while the committee reviews item {i}-{k}.</p>" for k in range(8))
                        + "</main></body></html>").encode()
                ctype = "text/html; charset=utf-8"
            else:
                body, ctype = b"not found", "text/plain"
            self.send_response(200 if ctype != "text/plain" or self.path == "/robots.txt" else 404)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    Path(port_file).write_text(str(server.server_address[1]))
    server.serve_forever()
    return 0


def _crawl(workdir: Path, watchlist: Path, store: Path, out: Path) -> dict[str, Any]:
    # the project's politeness settings as shipped (CONCURRENT_REQUESTS_PER_DOMAIN = 4); with far more
    # requests in flight than the worker judges, responses of 1 KB pages wait for it in Scrapy's
    # scraper, which bounds them by their bytes (5 MB: thousands of small pages), not their number
    settings = {"CHANGEWATCH_STORE": f"sqlite:///{store}", "CHANGEWATCH_ALLOW_PRIVATE": True, "LOG_LEVEL": "WARNING",
                "ROBOTSTXT_OBEY": False}
    cmd = [sys.executable, str(HERE / "bench_crawl.py"), "crawl", "--spider", "watch", "--urls", str(watchlist),
           "--settings-json", json.dumps(settings), "--out", str(out), "--sample-rss"]
    env = {"SCRAPY_SETTINGS_MODULE": "changewatch.settings", "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        raise SystemExit(f"the crawl failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.read_text())
    result["wall"] = time.perf_counter() - t0
    result["stderr"] = proc.stderr[-3000:]
    return result


def bench(sizes: list[int], layout: str) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="changewatch-bench-site-"))
    table: dict[int, list[dict[str, Any]]] = {}
    try:
        for n in sizes:
            port_file = tmp / f"port-{n}"
            server = subprocess.Popen([sys.executable, __file__, "serve", "--pages", str(n), "--port-file",
                                       str(port_file), "--layout", layout])
            try:
                while not port_file.exists() or not port_file.read_text():
                    time.sleep(0.05)
                base = f"http://127.0.0.1:{port_file.read_text()}"
                watchlist = tmp / f"watchlist-{n}.json"
                watchlist.write_text(json.dumps({"watches": [{"key": "site", "site": {
                    "sitemap": f"{base}/sitemap.xml", "max_pages": 100000}}]}))
                runs = []
                for run in (1, 2):
                    result = _crawl(tmp, watchlist, tmp / f"state-{n}.db", tmp / f"out-{n}-{run}.json")
                    stats = result["stats"]
                    ok = stats.get("downloader/response_status_count/200", 0)
                    sitemaps = 1 if layout == "single" else 1 + len(range(0, n, PER_CHILD))
                    # the second crawl fetches the sitemaps and the lastmod sample (~10% of the pages)
                    if (run == 1 and ok != n + sitemaps) or (run == 2 and not n // 20 <= ok - sitemaps <= n // 5):
                        raise SystemExit(f"{n} pages, crawl {run}: {ok} answers 200: {stats}\n{result['stderr']}")
                    peaks = result["child_peaks"] or {}
                    child = max((kb for _, kb in peaks.values()), default=0)
                    runs.append({"self": result["vmhwm_self"], "child": child, "wall": result["wall"], "ok": ok,
                                 "opened": result["rss_opened"]})
                    children = ", ".join(f"{label} {kb / 1024:.0f}" for label, kb in sorted(peaks.values()))
                    print(f"{n:>6} pages, crawl {run}: {ok} answers 200 in {result['wall']:.0f} s; peak RSS crawl "
                          f"process {result['vmhwm_self'] / 1024:.0f} MB (at open {result['rss_opened'] / 1024:.0f}),"
                          f" worker {child / 1024:.0f} MB (children: {children})", flush=True)
                table[n] = runs
            finally:
                server.kill()
                server.wait()
        small, large = sizes[0], sizes[-1]
        print(f"\npeak RSS, MB{'':<20}" + "".join(f"{n:>10}" for n in sizes) + f"   {large}/{small}")
        for run in (0, 1):
            for part in ("self", "child"):
                kb = [table[n][run][part] for n in sizes]
                label = f"crawl {run + 1}: {'crawl process' if part == 'self' else 'worker'}"
                print(f"{label:<32}" + "".join(f"{k / 1024:>10.0f}" for k in kb)
                      + (f"   {kb[-1] / kb[0]:.2f}x" if kb[0] else ""))
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command")
    s = sub.add_parser("serve")
    s.add_argument("--pages", type=int, required=True)
    s.add_argument("--port-file", required=True)
    s.add_argument("--layout", choices=("single", "index"), default="single")
    parser.add_argument("--pages", dest="sizes", default="5000,50000", help="page counts (default 5000,50000)")
    parser.add_argument("--index", action="store_true",
                        help=f"a sitemap index of children of {PER_CHILD} pages (default: one sitemap)")
    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve(args.pages, args.port_file, args.layout)
    return bench(sorted({int(n) for n in args.sizes.split(",")}), "index" if args.index else "single")


if __name__ == "__main__":
    sys.exit(main())
