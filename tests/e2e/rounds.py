"""Distributed rounds for the tests and the benchmark: a local product site that counts fetches
per path, a Redis database the test owns, and N ``scrapy crawl watch`` processes sharing one
round through ``changewatch.distributed.RoundScheduler``."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from changewatch.demo.serving import ServedSite

from .crawl import crawl_command, read_feed, scrapy_env

REDIS = os.environ.get("CHANGEWATCH_TEST_REDIS", "redis://127.0.0.1:6379")
REDIS_HOW = ("start one (redis-server --port 6379, or docker run -p 6379:6379 redis:7) or point "
             "CHANGEWATCH_TEST_REDIS at a server whose databases 10-15 the tests may flush")


def redis_unavailable() -> str | None:
    try:
        import redis
    except ImportError:
        return "the redis client is not installed: pip install 'scrapy-changewatch[redis]'"
    try:
        redis.Redis.from_url(REDIS, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        return f"{REDIS}: {exc}"
    return None


REDIS_SERVER_HOW = "install redis-server (Debian: apt-get install redis-server): the outage tests start their own"


class RedisServer:
    """A redis-server of the test's own on a free port, without persistence, that the test kills
    and starts again (empty, on the same port): the shared test Redis is never touched. The
    ``own_redis`` fixture (tests/conftest.py) gives one (it skips, or fails under CI=true, without
    the binary)."""

    def __init__(self, binary: str):
        self.binary = binary
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> str:
        import redis

        assert self.proc is None
        self.proc = subprocess.Popen([self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis.from_url(self.url, socket_connect_timeout=1).ping()
                return self.url
            except redis.ConnectionError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: connections reset, nothing saved (the next start is empty)."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def redis_server_binary() -> str | None:
    return shutil.which("redis-server") or next(
        (p for p in ("/usr/bin/redis-server", "/usr/local/bin/redis-server") if os.access(p, os.X_OK)), None)


def own_redis_server() -> Iterator[RedisServer]:
    """A started :class:`RedisServer` (a fixture's body), killed after the test."""
    from ..services import require

    binary = redis_server_binary()
    require(binary is not None, "the redis-server binary", REDIS_SERVER_HOW)
    assert binary is not None
    server = RedisServer(binary)
    server.start()
    try:
        yield server
    finally:
        server.kill()


def redis_db_url(db: int) -> str:
    """A URL of database *db* of the test Redis (each test owns one, 10-15: it may flush it)."""
    return f"{REDIS.rstrip('/')}/{db}"


def owned_redis(db: int) -> Iterator[str]:
    """The URL of database *db* of the test Redis (a fixture's body), flushed before and after the
    test; skips, or fails under CI=true, when the server is not there."""
    from ..services import require

    why = redis_unavailable()
    require(why is None, f"the test Redis server ({why})", REDIS_HOW)
    import redis

    url = redis_db_url(db)
    client = redis.Redis.from_url(url)
    client.flushdb()
    yield url
    client.flushdb()


def product(i: int, price: str) -> bytes:
    node = {"@context": "https://schema.org", "@type": "Product", "name": f"Lamp {i}",
            "offers": {"@type": "Offer", "price": price, "priceCurrency": "EUR"}}
    return (f'<html><head><script type="application/ld+json">{json.dumps(node)}</script></head>'
            f"<body><h1>Lamp {i}</h1><p>A lamp.</p></body></html>").encode()


@dataclass
class ProductSite(ServedSite):
    """``/p/<i>``: a product page whose price the test sets; answers If-None-Match with a 304 as a
    real server does, after *delay* seconds, and counts every fetch of every page (and which
    process made it: each has its own User-Agent)."""

    delay: float = 0.0
    prices: dict[int, str] = field(default_factory=dict)
    hits: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)
    first_hit: float | None = None
    last_hit: float | None = None
    agents: set[str] = field(default_factory=set)  # User-Agents seen: which processes have fetched
    log: list[tuple[float, str]] = field(default_factory=list)  # (time.monotonic(), User-Agent) per page fetch
    fetched: list[tuple[str, str]] = field(default_factory=list)  # (path, User-Agent) per page fetch
    #: paths that answer 429 to every fetch but the first of a round (a confirmation refused)
    refused: set[str] = field(default_factory=set)
    #: called with the site on each page fetched (after counting it), before it answers
    on_hit: Callable[[ProductSite], None] | None = None

    def respond_to(self, path: str, headers: dict[str, str]) -> tuple[int, str, bytes, dict[str, str]]:
        if path == "/robots.txt":
            return 404, "text/plain", b"", {}
        if self.delay:
            time.sleep(self.delay)
        with self.lock:
            self.hits[path] += 1
            now = time.monotonic()
            self.first_hit = self.first_hit or now
            self.last_hit = now
            agent = next((v for k, v in headers.items() if k.lower() == "user-agent"), "")
            self.agents.add(agent)
            self.log.append((now, agent))
            self.fetched.append((path, agent))
            refused = path in self.refused and self.hits[path] > 1
        if self.on_hit is not None:
            self.on_hit(self)
        if refused:
            return 429, "text/html; charset=utf-8", b"<h1>Too many requests</h1>", {}
        i = int(path.rsplit("/", 1)[1])
        body = product(i, self.prices[i])
        etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
        lowered = {k.lower(): v for k, v in headers.items()}
        if lowered.get("if-none-match") == etag:
            return 304, "text/html; charset=utf-8", b"", {"ETag": etag}
        return 200, "text/html; charset=utf-8", body, {"ETag": etag}

    def take_hits(self) -> Counter[str]:
        with self.lock:
            hits, self.hits = self.hits, Counter()
            self.agents = set()
            self.log = []
            self.fetched = []
            self.first_hit = self.last_hit = None
        return hits


def write_watchlist(path: Path, base: str, indices: range, key_prefix: str = "p") -> Path:
    path.write_text(json.dumps({"watches": [
        {"url": f"{base}/p/{i}", "key": f"{key_prefix}{i}", "jsonld": {"type": "Product", "fields": ["offers.price"]}}
        for i in indices]}), encoding="utf-8")
    return path


@dataclass
class Proc:
    returncode: int
    records: list[dict[str, Any]]
    stats: dict[str, Any]
    stderr: str


def round_command(workdir: Path, run: int, watchlist: Path, store: str, redis_url: str, prefix: str,
                  round_: str, *extra: str) -> tuple[list[str], Path]:
    return crawl_command(workdir, "watch", run, "-a", f"watchlist={watchlist}",
                         "-s", f"CHANGEWATCH_STORE={store}", "-s", "CHANGEWATCH_ALLOW_PRIVATE=True",
                         "-s", "SCHEDULER=changewatch.distributed.RoundScheduler", "-s", f"REDIS_URL={redis_url}",
                         "-s", f"CHANGEWATCH_ROUND_PREFIX={prefix}", "-s", f"CHANGEWATCH_ROUND={round_}",
                         "-s", "CHANGEWATCH_WORKERS=0", *extra)


def start_round(workdir: Path, watchlist: Path, store: str, redis_url: str, prefix: str, round_: str,
                processes: int, first_run: int, *extra: str) -> list[tuple[subprocess.Popen[str], int]]:
    procs = []
    for n in range(processes):
        cmd, _ = round_command(workdir, first_run + n, watchlist, store, redis_url, prefix, round_,
                               "-s", f"USER_AGENT=changewatch-test/{n}", *extra)
        procs.append((subprocess.Popen(cmd, cwd=workdir, env=scrapy_env(), stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, text=True), first_run + n))
    return procs


def finish(workdir: Path, procs: list[tuple[subprocess.Popen[str], int]], timeout: float = 300) -> list[Proc]:
    """Wait for every process, *timeout* seconds in all: a process still running then has hung,
    and every one is killed (none outlives the test) before the test fails saying so."""
    out = []
    deadline = time.monotonic() + timeout
    for proc, run in procs:
        try:
            _, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for other, _ in procs:
                other.kill()
                other.communicate()
            raise AssertionError(f"scrapy crawl (run {run}) still running after {timeout:g} s: it hung") from None
        stats = workdir / f"stats-{run}.json"
        out.append(Proc(proc.returncode, read_feed(workdir / f"changes-{run}.jsonl"),
                        json.loads(stats.read_text()) if stats.exists() else {}, err))
    return out


def records_of(procs: list[Proc]) -> list[dict[str, Any]]:
    """The records every process of a round exported."""
    return [r for p in procs for r in p.records]


def stat(procs: list[Proc], name: str) -> int:
    """The sum of a stat over the processes of a round."""
    return sum(int(p.stats.get(name, 0)) for p in procs)


def served_products() -> Iterator[tuple[ProductSite, str]]:
    """A ProductSite on a free port, stopped after (the ``site`` fixture of the round tests)."""
    served = ProductSite()
    base = served.start()
    yield served, base
    served.stop()


def agents_by_path(fetched: list[tuple[str, str]]) -> dict[str, list[str]]:
    """The User-Agent of each fetch of each path, in order (each process has its own)."""
    by_path: dict[str, list[str]] = {}
    for path, agent in fetched:
        by_path.setdefault(path, []).append(agent)
    return by_path


def price(i: int, round_: int) -> str:
    """Product *i*'s price in round *round_*: every seventh product changes each round."""
    return f"{10 + i + (round_ if i % 7 == 0 else 0)}.00"
