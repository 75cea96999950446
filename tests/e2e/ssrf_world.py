"""The SSRF table and the world it runs in: ``python -m tests.e2e.ssrf_world OUTDIR``.

Run it inside a private network namespace (``unshare --net``, as test_ssrf.py does): there only
the loopback interface exists, so a guard that failed open could not send a packet to a private
or metadata address; the run refuses to start anywhere else. In it:

* a DNS server of our own (tests.e2e.dnsserver) that the guard's resolver asks
  (``CHANGEWATCH_SSRF_NAMESERVERS``), so host names resolve for real;
* a "public" web server on 127.0.0.2, made fetchable by ``CHANGEWATCH_SSRF_ALLOWED_NETWORKS``
  (it stands for the internet: this machine has no other address we may use), and an
  "internal" one on 127.0.0.1, same port, that must only ever be reached by allowlisted names;
* one crawl per policy, each with one watchlist of many watches; OUTDIR/result.json gets the
  change records, stats and what each server saw; OUTDIR/<crawl>/state.db is the store.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from changewatch.render.browser import find_browser

from .crawl import Crawler
from .dnsserver import DNSServer
from .hostile import HostileSite, good_page, page, redirect

ALLOWED = "allowed"


@dataclass(frozen=True)
class Row:
    key: str
    url: str  # {port}: the web servers' port
    expect: str  # the refusal rule, or ALLOWED
    crawl: str = "guard"
    render: bool = False  # the watch is rendered in Chromium (the "render" crawl)


DNS = {
    "public.test": ["127.0.0.2"], "www.public.test": ["127.0.0.2"], "rebind.test": ["127.0.0.2"],
    "allowed.test": ["127.0.0.1"], "a.corp.test": ["127.0.0.1"], "corp.test.evil.test": ["127.0.0.1"],
    "evilcorp.test": ["127.0.0.1"], "internal.test": ["127.0.0.1"], "private.test": ["10.0.0.1"],
    "imds.test": ["169.254.169.254"], "v6.test": ["::1"], "mapped.test": ["::ffff:127.0.0.1"],
    "mapped10.test": ["::ffff:10.0.0.1"], "ll6.test": ["fe80::1"], "mixed.test": ["127.0.0.2", "10.0.0.1"],
    "zero.test": ["0.0.0.0"], "mc.test": ["239.1.1.1"], "ula.test": ["fd12:3456::1"],
}
PUBLIC = "http://public.test:{port}"

ROWS = [
    # the URL text: IP literals in every spelling, loopback and metadata names, credentials
    Row("lit-loopback", "http://127.0.0.1:{port}/page", "loopback"),
    Row("lit-decimal", "http://2130706433:{port}/page", "loopback"),
    Row("lit-hex", "http://0x7f000001:{port}/page", "loopback"),
    Row("lit-octal", "http://0177.0.0.1:{port}/page", "loopback"),
    Row("lit-short", "http://127.1:{port}/page", "loopback"),
    Row("lit-hex-dotted", "http://0x7f.0.0.0x1:{port}/page", "loopback"),
    Row("lit-fullwidth", "http://\uff11\uff12\uff17\uff0e\uff10\uff0e\uff10\uff0e\uff11:{port}/page", "loopback"),
    Row("lit-zero", "http://0.0.0.0:{port}/page", "unspecified"),
    Row("lit-zero-short", "http://0:{port}/page", "unspecified"),
    Row("lit-v6-loopback", "http://[::1]:{port}/page", "loopback"),
    Row("lit-v6-mapped", "http://[::ffff:127.0.0.1]:{port}/page", "loopback"),
    Row("lit-v6-mapped-hex", "http://[::ffff:7f00:1]:{port}/page", "loopback"),
    Row("lit-v6-unspecified", "http://[::]:{port}/page", "unspecified"),
    Row("lit-10", "http://10.0.0.1/page", "private"),
    Row("lit-172", "http://172.16.5.4/page", "private"),
    Row("lit-192", "http://192.168.1.1/page", "private"),
    Row("lit-metadata", "http://169.254.169.254/latest/meta-data/", "metadata"),
    Row("lit-metadata-decimal", "http://2852039166/latest/meta-data/", "metadata"),
    Row("lit-metadata-v6", "http://[fd00:ec2::254]/latest/meta-data/", "metadata"),
    Row("lit-metadata-alibaba", "http://100.100.100.200/latest/meta-data/", "metadata"),
    Row("lit-link-local", "http://169.254.1.1/page", "link-local"),
    Row("lit-v6-link-local", "http://[fe80::1]/page", "link-local"),
    Row("lit-multicast", "http://224.0.0.1/page", "multicast"),
    Row("lit-v6-ula", "http://[fd12:3456::1]/page", "private"),
    Row("lit-reserved", "http://240.0.0.1/page", "reserved"),
    Row("lit-broadcast", "http://255.255.255.255/page", "reserved"),
    Row("lit-cgnat", "http://100.64.0.1/page", "non-global"),
    Row("lit-6to4-loopback", "http://[2002:7f00:1::]/page", "loopback"),
    Row("lit-nat64-private", "http://[64:ff9b::a00:1]/page", "private"),
    Row("name-localhost", "http://localhost:{port}/page", "loopback"),
    Row("name-sub-localhost", "http://app.localhost:{port}/page", "loopback"),
    Row("name-metadata", "http://metadata.google.internal/computeMetadata/v1/", "metadata"),
    Row("credentials", "http://user:secret@public.test:{port}/page", "credentials"),
    Row("credentials-user", "http://user@public.test:{port}/page", "credentials"),
    # what names resolve to, checked by the guarded resolver
    Row("dns-loopback", "http://internal.test:{port}/page", "loopback"),
    Row("dns-private", "http://private.test/page", "private"),
    Row("dns-metadata", "http://imds.test/latest/meta-data/", "metadata"),
    Row("dns-v6-loopback", "http://v6.test:{port}/page", "loopback"),
    Row("dns-v6-mapped", "http://mapped.test:{port}/page", "loopback"),
    Row("dns-v6-mapped-private", "http://mapped10.test/page", "private"),
    Row("dns-v6-link-local", "http://ll6.test/page", "link-local"),
    Row("dns-v6-ula", "http://ula.test/page", "private"),
    Row("dns-mixed-answers", "http://mixed.test:{port}/page", "private"),
    Row("dns-unspecified", "http://zero.test:{port}/page", "unspecified"),
    Row("dns-multicast", "http://mc.test/page", "multicast"),
    Row("dns-allowlist-suffix-trick", "http://corp.test.evil.test:{port}/page", "loopback"),
    Row("dns-allowlist-lookalike", "http://evilcorp.test:{port}/page", "loopback"),
    Row("dns-rebinding", "http://rebind.test:{port}/rebind", "loopback"),
    # redirects from an allowed host
    Row("redirect-to-literal", PUBLIC + "/to-literal", "loopback"),
    Row("redirect-to-internal-name", PUBLIC + "/to-internal", "loopback"),
    Row("redirect-to-file", PUBLIC + "/to-file", "scheme"),
    Row("redirect-to-gopher", PUBLIC + "/to-gopher", "scheme"),
    Row("redirect-to-metadata", PUBLIC + "/to-metadata", "metadata"),
    Row("redirect-to-credentials", PUBLIC + "/to-credentials", "credentials"),
    # allowed
    Row("public", PUBLIC + "/page", ALLOWED),
    Row("public-literal-allowed-network", "http://127.0.0.2:{port}/page", ALLOWED),
    Row("allowlisted-host", "http://allowed.test:{port}/page", ALLOWED),
    Row("allowlisted-domain", "http://a.corp.test:{port}/page", ALLOWED),
    Row("redirect-to-public", PUBLIC + "/to-public", ALLOWED),
    # CHANGEWATCH_ALLOW_PRIVATE: addresses allowed, schemes and credentials still refused
    Row("private-literal", "http://127.0.0.1:{port}/page", ALLOWED, "allow_private"),
    Row("private-name", "http://internal.test:{port}/page", ALLOWED, "allow_private"),
    Row("private-v6-name", "http://v6.test:{port}/page", ALLOWED, "allow_private"),
    Row("private-redirect-to-file", PUBLIC + "/to-file", "scheme", "allow_private"),
    Row("private-credentials", "http://user:pw@127.0.0.1:{port}/page", "credentials", "allow_private"),
    # a process started without the add-on (a spider enables it): the middleware installs the guarded resolver
    Row("fallback-dns-loopback", "http://internal.test:{port}/page", "loopback", "fallback"),
    Row("fallback-redirect-to-internal-name", PUBLIC + "/to-internal", "loopback", "fallback"),
    Row("fallback-public", PUBLIC + "/page", ALLOWED, "fallback"),
    # rendering on: plain requests keep the guarded resolver, though the download
    # handler is scrapy-playwright's and the process started with Scrapy's own resolver
    Row("render-plain-dns-loopback", "http://internal.test:{port}/page", "loopback", "render"),
    Row("render-plain-redirect-to-internal-name", PUBLIC + "/to-internal", "loopback", "render"),
    Row("render-plain-public", PUBLIC + "/page", ALLOWED, "render"),
    # rendered pages: the document is fetched under the guard, and so is everything the page loads
    Row("render-internal-name", "http://internal.test:{port}/page", "loopback", "render", render=True),
    Row("render-redirect-to-internal-name", PUBLIC + "/to-internal", "loopback", "render", render=True),
    Row("render-rebinding", "http://rebind.test:{port}/rebind", "loopback", "render", render=True),
    Row("render-hostile-page", PUBLIC + "/hostile-page", ALLOWED, "render", render=True),
]

#: what /hostile-page's scripts try, each aimed at the internal servers; none may reach them
HOSTILE_PAGE = """<!doctype html><html><head><title>hostile</title>
<script src="http://internal.test:{port}/secret-script.js"></script>
<link rel="dns-prefetch" href="http://internal.test:{port}/"><link rel="preconnect" href="http://127.0.0.1:{port}/">
</head><body><main id="out">A page that tries to reach the inside.</main>
<iframe src="http://internal.test:{port}/secret-frame"></iframe>
<img src="http://127.0.0.1:{port}/secret-img.png">
<script>
const tries = [
  fetch('http://internal.test:{port}/secret-fetch'), fetch('http://127.0.0.1:{port}/secret-literal'),
  fetch('http://[::1]:{port}/secret-v6'), fetch('http://2130706433:{port}/secret-decimal'),
  fetch('/to-internal'), fetch('http://rebind.test:{port}/rebind'),
  fetch('http://localhost:{port}/secret-localhost', {{method: 'POST', body: 'x'}}),
  new Promise(done => {{ const ws = new WebSocket('ws://127.0.0.1:{port}/secret-ws');
                          ws.onerror = ws.onclose = done; }}),
  navigator.serviceWorker ? navigator.serviceWorker.register('/sw.js') : Promise.resolve('no service workers'),
  new Promise(done => {{ const w = new Worker('/worker.js'); w.onmessage = done; w.onerror = done; }}),
];
Promise.allSettled(tries).then(r => {{
  document.getElementById('out').textContent = 'A page that tried ' + r.length + ' ways to reach the inside.';
}});
const es = new EventSource('http://internal.test:{port}/secret-events');
</script></body></html>"""
WORKER_JS = "fetch('http://internal.test:{port}/secret-worker').finally(() => postMessage('done'));"
SW_JS = "self.addEventListener('fetch', e => e.respondWith(fetch('http://127.0.0.1:{port}/secret-sw')));"

SETTINGS = {
    "guard": ["-s", "CHANGEWATCH_SSRF_ALLOWED_NETWORKS=127.0.0.2/32",
              "-s", "CHANGEWATCH_SSRF_ALLOWED_HOSTS=allowed.test,.corp.test"],
    "allow_private": ["-s", "CHANGEWATCH_ALLOW_PRIVATE=True"],
    "fallback": ["-s", "CHANGEWATCH_SSRF_ALLOWED_NETWORKS=127.0.0.2/32"],
    "render": ["-s", "CHANGEWATCH_SSRF_ALLOWED_NETWORKS=127.0.0.2/32", "-s", "CHANGEWATCH_RENDER_TIMEOUT=30"],
}
#: the project settings of a crawl, when not changewatch.settings
SETTINGS_MODULES = {
    # the add-on in the spider's custom_settings only: the process starts with Scrapy's resolver
    "fallback": "tests.e2e.addon_in_spider",
    "render": "tests.e2e.addon_in_spider",
}


def _servers() -> tuple[HostileSite, HostileSite, HostileSite]:
    """Public (127.0.0.2), internal (127.0.0.1) and internal IPv6 ([::1]) servers on one port."""
    for _ in range(20):
        public = HostileSite("127.0.0.2")
        try:
            return public, HostileSite("127.0.0.1", public.port), HostileSite("::1", public.port)
        except OSError:
            public.stop()
    raise RuntimeError("no port free on 127.0.0.2, 127.0.0.1 and ::1 at once")


def _serve(public: HostileSite, internals: list[HostileSite], dns: DNSServer) -> None:
    port = public.port
    for site in (public, *internals):
        site.good["/page"] = page(good_page(f"page on {site.base}"))

    def rebind(h: object) -> None:
        dns.set("rebind.test", "127.0.0.1")  # the next lookup of the name answers loopback
        redirect(f"http://rebind.test:{port}/after")(h)  # type: ignore[arg-type]

    public.good.update({
        "/rebind": rebind,
        "/to-literal": redirect(f"http://127.0.0.1:{port}/page"),
        "/to-internal": redirect(f"http://internal.test:{port}/page"),
        "/to-file": redirect("file:///etc/passwd"),
        "/to-gopher": redirect(f"gopher://127.0.0.1:{port}/_secret"),
        "/to-metadata": redirect("http://169.254.169.254/latest/meta-data/iam/"),
        "/to-credentials": redirect(f"http://user:pw@public.test:{port}/page"),
        "/to-public": redirect(f"http://www.public.test:{port}/page"),
        "/hostile-page": page(HOSTILE_PAGE.format(port=port).encode()),
        "/worker.js": page(WORKER_JS.format(port=port).encode(), ctype="text/javascript"),
        "/sw.js": page(SW_JS.format(port=port).encode(), ctype="text/javascript"),
    })


def _isolated() -> bool:
    """Only a loopback interface, and it is up: nothing can leave this namespace."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    return [name for _, name in socket.if_nameindex()] == ["lo"]


def main(outdir: Path) -> int:
    if not _isolated():
        print("refusing to run: this is not a private network namespace (run it under unshare --net)")
        return 3
    dns = DNSServer()
    public, internal, internal6 = _servers()
    result: dict[str, object] = {"port": public.port, "rows": [asdict(r) for r in ROWS]}
    for crawl, extra in SETTINGS.items():
        if crawl == "render" and find_browser(None) is None:
            result[crawl] = None  # test_ssrf.py skips (or fails, under CI) saying how to install Chromium
            continue
        for name, addresses in DNS.items():
            dns.set(name, *addresses)
        _serve(public, [internal, internal6], dns)
        for site in (public, internal, internal6):
            site.hits.clear()
            site.hosts.clear()
        workdir = outdir / crawl
        workdir.mkdir(parents=True, exist_ok=True)
        watches = [{"url": r.url.format(port=public.port), "key": r.key, **({"render": True} if r.render else {})}
                   for r in ROWS if r.crawl == crawl]
        run = Crawler(workdir, watches, allow_private=False,
                      settings_module=SETTINGS_MODULES.get(crawl, "changewatch.settings")).run(
            "-s", f"CHANGEWATCH_SSRF_NAMESERVERS={dns.address}", "-s", "DOWNLOAD_TIMEOUT=20", *extra)
        result[crawl] = {"returncode": run.returncode, "records": run.records, "stats": run.stats,
                         "stderr": run.stderr[-30000:], "public_hits": dict(public.hits),
                         "internal_hits": dict(internal.hits), "internal6_hits": dict(internal6.hits),
                         "internal_hosts": dict(internal.hosts), "internal6_hosts": dict(internal6.hosts),
                         "store": str(workdir / "state.db")}
    (outdir / "result.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
