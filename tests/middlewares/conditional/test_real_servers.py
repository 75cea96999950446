"""Conditional requests against real servers: nginx and Twisted's static file server."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ...e2e.crawl import Crawler, by_key
from .servers import Nginx, TwistedStatic

pytestmark = pytest.mark.slow  # crawl subprocesses against nginx

PAGE = """<html><head><title>{name}</title></head><body><main><h1>{name}</h1>
<p>{text}</p><p>Opening hours: nine to five, Monday to Friday.</p></main></body></html>"""


def write_pages(root: Path, count: int) -> list[str]:
    names = [f"page{i}.html" for i in range(count)]
    for i, name in enumerate(names):
        (root / name).write_text(PAGE.format(name=name, text=f"Page {i} says hello to its readers."), encoding="utf-8")
    return names


def parse_log(nginx: Nginx, since: int) -> dict[str, tuple[int, str, str]]:
    out: dict[str, tuple[int, str, str]] = {}
    for line in nginx.log_lines()[since:]:
        status, uri, rest = line.split(" ", 2)
        inm = rest[rest.index("inm=[") + 5: rest.index("] ims=")]
        ims = rest[rest.index("ims=[") + 5: rest.rindex("]")]
        out[uri] = (int(status), inm, ims)
    return out


def test_nginx_second_crawl_is_all_304_and_edits_are_still_seen(nginx: Nginx, tmp_path: Path) -> None:
    names = write_pages(nginx.root, 12)
    crawler = Crawler(tmp_path, [{"url": f"{nginx.base}/{n}", "key": n} for n in names])

    first = crawler.run()
    assert first.returncode == 0, first.stderr
    assert first.records == [] and first.stats["changewatch/commit/baseline"] == 12
    assert "changewatch/conditional/sent" not in first.stats

    mark = len(nginx.log_lines())
    second = crawler.run()
    assert second.returncode == 0 and second.records == []
    log = parse_log(nginx, mark)
    for name in names:
        status, inm, ims = log[f"/{name}"]
        assert status == 304, (name, log[f"/{name}"])
        assert inm.startswith('"') and ims.endswith("GMT")  # nginx's own values, sent back verbatim
    assert second.stats["changewatch/conditional/sent"] == 12
    assert second.stats["changewatch/conditional/not_modified"] == 12
    assert second.stats["changewatch/commit/none"] == 12
    full_size = len((nginx.root / names[0]).read_bytes())
    assert second.stats["changewatch/conditional/bytes_saved"] >= 12 * full_size - 12
    # 304s cost headers only: far fewer bytes than the first crawl's bodies
    assert second.stats["downloader/response_bytes"] < first.stats["downloader/response_bytes"] / 2

    # an edit gives a 200 and a change; touching a file (new mtime, same bytes) gives a 200 and no change
    (nginx.root / names[3]).write_text(PAGE.format(name=names[3], text="Page 3 now says goodbye."), encoding="utf-8")
    later = time.time() + 5
    os.utime(nginx.root / names[5], (later, later))
    mark = len(nginx.log_lines())
    third = crawler.run()
    assert third.returncode == 0, third.stderr
    log = parse_log(nginx, mark)
    assert log[f"/{names[3]}"][0] == 200 and log[f"/{names[5]}"][0] == 200
    assert sum(status == 304 for status, _, _ in log.values()) >= 10
    records = by_key(third.records)
    assert set(records) == {names[3]}
    assert records[names[3]]["kind"] == "content"
    assert "+ Page 3 now says goodbye." in records[names[3]]["diff"]

    # the touched file's new validators were kept with its (unchanged) observation
    mark = len(nginx.log_lines())
    fourth = crawler.run()
    assert fourth.records == []
    assert {s for uri, (s, _, _) in parse_log(nginx, mark).items() if uri.endswith(".html")} == {304}


def test_nginx_with_conditional_requests_disabled_downloads_everything(nginx: Nginx, tmp_path: Path) -> None:
    names = write_pages(nginx.root, 4)
    crawler = Crawler(tmp_path, [{"url": f"{nginx.base}/{n}", "key": n} for n in names])
    assert crawler.run().returncode == 0
    mark = len(nginx.log_lines())
    second = crawler.run("-s", "CHANGEWATCH_CONDITIONAL_ENABLED=False")
    assert second.returncode == 0 and second.records == []
    log = parse_log(nginx, mark)
    assert {log[f"/{n}"] for n in names} == {(200, "", "")}
    assert "changewatch/conditional/sent" not in second.stats


def test_twisted_static_server_last_modified_only(twisted_static: tuple[TwistedStatic, Path, str],
                                                  tmp_path: Path) -> None:
    _, root, base = twisted_static
    names = write_pages(root, 3)
    crawler = Crawler(tmp_path, [{"url": f"{base}/{n}", "key": n} for n in names])
    assert crawler.run().returncode == 0
    second = crawler.run()
    assert second.records == []
    assert second.stats["changewatch/conditional/not_modified"] == 3

    (root / names[1]).write_text(PAGE.format(name=names[1], text="Changed words on page one."), encoding="utf-8")
    later = time.time() + 5
    os.utime(root / names[1], (later, later))
    third = crawler.run()
    assert [r["key"] for r in third.records] == [names[1]]
    assert third.stats["changewatch/conditional/not_modified"] == 2
