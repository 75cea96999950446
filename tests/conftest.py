"""Shared fixtures: the local sites the tests crawl, each started on a free port and stopped after."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, TypeVar

import pytest

from changewatch.demo.site import DemoSite
from changewatch.examples.site import FixtureSite

from .e2e.dnsserver import DNSServer
from .e2e.hostile import HostileSite
from .e2e.rounds import RedisServer, own_redis_server
from .middlewares.conditional.servers import OddServer
from .pgproxy import PgProxy

#: fixtures that start or reach a real service (PostgreSQL, Redis): a test that asks for one is slow
SERVICE_FIXTURES = frozenset({"postgresql_store_uri", "schema", "proxy", "new_postgresql",
                              "redis_10", "redis_11", "redis_12", "redis_13", "own_redis", "pg_store"})
E2E = Path(__file__).parent / "e2e"


#: the longest test files of the whole suite (each minutes on two busy cores), run first so that
#: pytest-xdist's workers (``--dist loadfile``, scripts/test.sh) start them at once and never end
#: the run waiting on one of them. The three fresh environments are built from the run's start
#: (tests/e2e/environments.py), so their tests come after the long crawls
LONG_FIRST = ("e2e/test_site_page_set.py", "e2e/test_ssrf.py", "e2e/test_distributed.py",
              "e2e/test_distributed_sites.py",
              "e2e/test_learned_noise.py", "e2e/test_summary.py", "e2e/test_watch_crawl.py", "e2e/test_notify.py",
              "e2e/test_postgresql_outage.py", "e2e/test_readme_own_project.py", "e2e/test_scrapyd_own_project.py",
              "e2e/test_scrapyd.py", "e2e/test_scrapyd_sites.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/e2e (real ``scrapy crawl`` processes) and every test of a real service
    is ``slow``: ``-m "not slow"`` leaves them out (README, "Contributing"). The files of
    :data:`LONG_FIRST` go first, in that order; every file keeps its tests together and in order."""
    for item in items:
        if item.path.is_relative_to(E2E) or SERVICE_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    here = Path(__file__).parent
    rank = {here / name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path, len(rank)))  # stable: the others keep pytest's order


class _Site(Protocol):
    def start(self) -> str: ...

    def stop(self) -> None: ...


S = TypeVar("S", bound=_Site)


def _served(site: S) -> Iterator[tuple[S, str]]:
    base = site.start()
    try:
        yield site, base
    finally:
        site.stop()


@pytest.fixture(scope="session")
def checkout_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of this checkout (scrapy-changewatch), built once per test run (tests/wheel.py)."""
    from .wheel import run_wheel

    return run_wheel(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session", autouse=True)
def environments_ahead(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> None:
    """README's own-project environment and Scrapyd's two (minutes each, mostly waiting on the
    package registry) are built in a background thread as soon as a run that includes their
    tests starts, once per run, while the workers run other tests (tests/e2e/environments.py)."""
    from .e2e.environments import build_ahead

    build_ahead({item.path.name for item in request.session.items}, tmp_path_factory.getbasetemp())


@pytest.fixture
def demo_site() -> Iterator[tuple[DemoSite, str]]:
    yield from _served(DemoSite())


@pytest.fixture
def odd_server() -> Iterator[tuple[OddServer, str]]:
    yield from _served(OddServer())


@pytest.fixture
def catalogue() -> Iterator[tuple[FixtureSite, str]]:
    yield from _served(FixtureSite("catalogue"))


@pytest.fixture
def board() -> Iterator[tuple[FixtureSite, str]]:
    yield from _served(FixtureSite("board"))


@pytest.fixture
def site() -> Iterator[HostileSite]:
    """A site of odd and hostile pages (tests/e2e/hostile.py); modules with a site of their own
    override this fixture."""
    server = HostileSite()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def nameserver() -> Iterator[DNSServer]:
    """A real DNS server that knows no name but those a test sets (tests/e2e/dnsserver.py)."""
    server = DNSServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def proxy() -> Iterator[PgProxy]:
    """A TCP proxy to the test PostgreSQL server that a test can cut and restore."""
    from .store.conftest import POSTGRESQL

    proxy = PgProxy(POSTGRESQL).start()
    yield proxy
    proxy.stop()


@pytest.fixture
def schema() -> Iterator[str]:
    """A fresh PostgreSQL schema name in the test database, dropped after the test."""
    from .store.conftest import drop_postgresql_schema, postgresql_schema_uri

    name, _ = postgresql_schema_uri()
    yield name
    drop_postgresql_schema(name)


@pytest.fixture
def pg_store() -> Iterator[str]:
    """The store URI of a fresh PostgreSQL schema in the test database, dropped after the test."""
    from .store.conftest import fresh_postgresql_store

    yield from fresh_postgresql_store()


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    """A redis-server of the test's own, on a free port, that the test may kill and start again
    (tests/e2e/rounds.py); killed after the test."""
    yield from own_redis_server()
