"""The SSRF guard through real crawls: a table of URLs and DNS answers, each refused by the rule
it names or allowed (tests/e2e/ssrf_world.py runs them in a private network namespace)."""

from __future__ import annotations

import ipaddress
import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from changewatch.render.browser import how_to_install
from changewatch.store.sqlite import SQLiteStore

from ..services import require
from .crawl import ROOT, Crawler
from .hostile import HostileSite, good_page, page
from .ssrf_world import ALLOWED, ROWS, Row

ISOLATION = ("the SSRF crawls need a private network namespace (unshare --net, as root) so that a guard "
             "failing open could not send a packet to a private or metadata address")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip(f"{ISOLATION}: unshare or ip is not installed")
    if subprocess.run(["unshare", "--net", "true"], capture_output=True).returncode != 0:
        pytest.skip(f"{ISOLATION}: this user may not create one")
    outdir = tmp_path_factory.mktemp("ssrf")
    proc = subprocess.run(["unshare", "--net", "--", sys.executable, "-m", "tests.e2e.ssrf_world", str(outdir)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result: dict[str, Any] = json.loads((outdir / "result.json").read_text())
    for crawl in ("guard", "allow_private", "fallback", "render"):
        assert result[crawl] is None or result[crawl]["returncode"] == 0, result[crawl]["stderr"]
    return result


def _crawl(world: dict[str, Any], name: str) -> dict[str, Any]:
    crawl: dict[str, Any] | None = world[name]
    if crawl is None:
        require(False, "Chromium (the rendered pages' SSRF crawl)", how_to_install())
    assert crawl is not None
    return crawl


def _baseline_kept(store: str, key: str) -> bool:
    db = SQLiteStore(store)
    db.open()
    try:
        state = db.read("watch", key)
    finally:
        db.close()
    return state is not None and state.last_good is not None


def test_the_table_is_large_enough() -> None:
    assert len(ROWS) >= 40 and len({r.key for r in ROWS}) == len(ROWS)
    assert {r.expect for r in ROWS} >= {"loopback", "private", "link-local", "metadata", "multicast", "reserved",
                                        "unspecified", "scheme", "credentials", ALLOWED}


@pytest.mark.parametrize("row", ROWS, ids=[r.key for r in ROWS])
def test_each_url_is_refused_by_its_rule_or_allowed(world: dict[str, Any], row: Row) -> None:
    crawl = _crawl(world, row.crawl)
    errors = {r["key"]: r.get("error", "") for r in crawl["records"]}
    if row.expect == ALLOWED:
        assert row.key not in errors, errors.get(row.key)
        assert _baseline_kept(crawl["store"], row.key), "an allowed page became a baseline"
    else:
        assert errors.get(row.key, "").startswith(f"refused: {row.expect}: "), errors.get(row.key)
        assert not _baseline_kept(crawl["store"], row.key)
        url = next(r["url"] for r in crawl["records"] if r["key"] == row.key)
        assert "@" not in urlsplit(url).netloc, "credentials leaked into the record's url"
        if row.expect == "credentials":
            assert "secret" not in errors[row.key] and ":pw" not in errors[row.key]


def test_internal_servers_see_only_allowlisted_names(world: dict[str, Any]) -> None:
    port = world["port"]
    guard = world["guard"]
    assert set(guard["internal_hosts"]) == {f"allowed.test:{port}", f"a.corp.test:{port}"}
    assert guard["internal6_hosts"] == {}
    # with CHANGEWATCH_ALLOW_PRIVATE the same servers are reached, over IPv4 and IPv6
    private = world["allow_private"]
    assert set(private["internal_hosts"]) == {f"127.0.0.1:{port}", f"internal.test:{port}"}
    assert set(private["internal6_hosts"]) == {f"v6.test:{port}"}


def test_dns_rebinding_is_caught_where_the_connection_is_made(world: dict[str, Any]) -> None:
    """rebind.test answered 127.0.0.2 (allowed) for the first page, which flipped its DNS answer to
    127.0.0.1 and redirected to the same host: the URL did not change, only the answer did, and
    the guarded resolver refused it, so no byte reached the internal server on 127.0.0.1."""
    guard = world["guard"]
    assert guard["public_hits"]["/rebind"] == 1
    assert not any(host.startswith("rebind.test") for host in guard["internal_hosts"])
    assert guard["stats"]["changewatch/ssrf/refused_dns"] >= 1


def test_without_the_resolver_setting_the_middleware_installs_it(world: dict[str, Any]) -> None:
    fallback = world["fallback"]
    assert "installed changewatch.guard.GuardedResolver as the reactor's name resolver" in fallback["stderr"]
    assert fallback["stats"]["changewatch/ssrf/refused_dns"] >= 2
    assert fallback["internal_hosts"] == {}


def test_every_layer_counts_its_refusals(world: dict[str, Any]) -> None:
    stats = world["guard"]["stats"]
    assert stats["changewatch/ssrf/refused_url"] >= sum(r.key.startswith(("lit-", "name-", "cred")) for r in ROWS)
    assert stats["changewatch/ssrf/refused_redirect"] == 2  # file: and gopher:
    assert stats["changewatch/commit/baseline"] == sum(r.expect == ALLOWED for r in ROWS if r.crawl == "guard")


def test_the_system_resolver_is_guarded_too(tmp_path: Path) -> None:
    """Without CHANGEWATCH_SSRF_NAMESERVERS the guard asks getaddrinfo (and so /etc/hosts), as
    in production: this machine's own host name resolves to loopback and is refused, while an
    allowlisted name goes through the same resolver and is fetched. Only loopback is involved."""
    name = socket.gethostname()
    try:
        answers = {info[4][0] for info in socket.getaddrinfo(name, 80, proto=socket.IPPROTO_TCP)}
    except OSError:
        answers = set()
    if not answers or not all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in answers):
        pytest.skip(f"this machine's host name {name!r} does not resolve to loopback only ({answers})")
    site = HostileSite()
    try:
        site.good["/page"] = page(good_page("page"))
        crawler = Crawler(tmp_path, [{"url": f"http://{name}:{site.port}/page", "key": "own-name"},
                                     {"url": f"http://localhost:{site.port}/page", "key": "allowlisted"}],
                          allow_private=False)
        result = crawler.run("-s", "CHANGEWATCH_SSRF_ALLOWED_HOSTS=localhost")
    finally:
        site.stop()
    assert result.returncode == 0, result.stderr[-3000:]
    errors = {r["key"]: r["error"] for r in result.records}
    assert set(errors) == {"own-name"} and errors["own-name"].startswith(f"refused: loopback: {name} resolved to ")
    # robots.txt and the page (its baseline's two loads); nothing for the own name
    assert site.hosts == {f"localhost:{site.port}": 3}
    assert _baseline_kept(str(tmp_path / "state.db"), "allowlisted")


def test_with_rendering_on_plain_requests_keep_the_guarded_resolver(world: dict[str, Any]) -> None:
    """The download handler is changewatch's RenderDownloadHandler (rendering through scrapy-playwright) and the
    process started with Scrapy's own resolver: the guard still installs its resolver, so a plain
    request to a name that resolves to 127.0.0.1 is refused."""
    render = _crawl(world, "render")
    assert "installed changewatch.guard.GuardedResolver as the reactor's name resolver" in render["stderr"]
    errors = {r["key"]: r.get("error", "") for r in render["records"]}
    assert errors["render-plain-dns-loopback"].startswith("refused: loopback: internal.test resolved to 127.0.0.1")
    assert render["stats"]["changewatch/ssrf/refused_dns"] >= 2


def test_a_rendered_page_reaches_nothing_the_guard_refuses(world: dict[str, Any]) -> None:
    """/hostile-page's scripts, frame, image, data requests (by name, IP literal in three
    spellings, redirect, DNS rebinding, POST), WebSocket, EventSource, worker and service worker
    all aim at the internal servers: not one request reaches them, and the page is still read."""
    render = _crawl(world, "render")
    assert render["internal_hits"] == {} and render["internal6_hits"] == {}, (render["internal_hits"],
                                                                              render["internal6_hits"])
    assert render["internal_hosts"] == {} and render["internal6_hosts"] == {}
    stats = render["stats"]
    # the hostile page, its baseline's two loads; the refused documents never reach the browser
    assert stats["changewatch/render/rendered"] == 2
    assert stats["changewatch/render/refused"] >= 8
    assert stats["changewatch/render/websockets_refused"] >= 1
    assert stats["changewatch/render/blocked"] >= 2  # the image, the EventSource
    assert render["public_hits"]["/worker.js"] == 2  # the worker ran (each load), and its request was refused
    assert "render-hostile-page" not in {r["key"] for r in render["records"]}
    store = SQLiteStore(render["store"])
    store.open()
    try:
        state = store.read("watch", "render-hostile-page")
    finally:
        store.close()
    assert state is not None and state.snapshot is not None
    from changewatch.core.comparisons import load_comparisons
    from changewatch.core.snapshot import Snapshot

    text = Snapshot.decode(state.snapshot, load_comparisons()).part("content").text  # type: ignore[union-attr]
    assert "A page that tried 10 ways to reach the inside." in text
