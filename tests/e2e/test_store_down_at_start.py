"""A store that cannot be opened when the crawl starts: one clear line, a non-zero exit, no
traceback (it used to come out as asyncio's "Task exception was never retrieved"), nothing
fetched."""

from __future__ import annotations

from pathlib import Path

import pytest

from changewatch.demo.site import DemoSite

from ..services import require
from ..store.conftest import POSTGRESQL, postgresql_unavailable
from .crawl import Crawler


def _wrong_database() -> str:
    why = postgresql_unavailable()
    require(why is None, "the test PostgreSQL server", f"{why}; start it (pg_ctlcluster … start) or set "
            "CHANGEWATCH_TEST_POSTGRESQL")
    base, _, query = POSTGRESQL.partition("?")
    return base.rsplit("/", 1)[0] + "/changewatch_no_such_database" + (f"?{query}" if query else "")


@pytest.mark.parametrize(("store", "says"), [
    pytest.param(lambda tmp: "postgresql://postgres:s3cret@127.0.0.1:1/test?timeout=2",
                 "port 1 failed: Connection refused", id="postgresql-no-server"),
    pytest.param(lambda tmp: _wrong_database(), 'database "changewatch_no_such_database" does not exist',
                 id="postgresql-no-database"),
    pytest.param(lambda tmp: f"sqlite:///{tmp / 'garbage.db'}", "is not a changewatch store", id="sqlite-not-a-store"),
])
def test_a_store_that_cannot_be_opened_stops_the_crawl_with_one_line(
        tmp_path: Path, demo_site: tuple[DemoSite, str], store: object, says: str) -> None:
    _, base = demo_site
    (tmp_path / "garbage.db").write_bytes(b"not a database at all" * 10)
    uri = store(tmp_path)  # type: ignore[operator]
    crawler = Crawler(tmp_path, [{"url": f"{base}/terms", "key": "terms"}], store=uri)
    failed = crawler.run()
    assert failed.returncode == 1, failed.stderr[-3000:]
    lines = [line for line in failed.stderr.splitlines() if "stopping the crawl" in line]
    assert len(lines) == 1 and "CRITICAL" in lines[0] and "the store cannot be opened" in lines[0], failed.stderr
    assert says in lines[0]
    assert "Traceback" not in failed.stderr and "never retrieved" not in failed.stderr, failed.stderr[-3000:]
    assert "s3cret" not in failed.stderr
    # Scrapy sends no engine_stopped for a spider closed while it opened (the stats file is
    # written then): its stats dump in the log says what happened
    assert failed.records == [] and "'downloader/request_count'" not in failed.stderr
    assert "'changewatch/runtime/failed': 1" in failed.stderr
