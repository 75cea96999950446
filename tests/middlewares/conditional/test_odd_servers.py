"""Conditional requests against servers that validate oddly, abuse validators or send bad ones."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest

from ...e2e.crawl import Crawler, by_key
from .servers import OddServer, Page

pytestmark = pytest.mark.slow  # crawl subprocesses

LM = "Tue, 03 Nov 2026 10:00:00 GMT"


def html(text: str) -> bytes:
    body = f"<main><h1>{text}</h1><p>{text} is the substance of this page.</p></main>"
    return f"<html><body>{body}</body></html>".encode()


def setup(server: OddServer, pages: dict[str, Page]) -> None:
    server.pages.update(pages)


def test_odd_validators_are_stored_and_sent_back_verbatim(odd_server: tuple[OddServer, str], tmp_path: Path) -> None:
    server, base = odd_server
    future = format_datetime(datetime.now(UTC) + timedelta(days=2), usegmt=True)
    setup(server, {
        "/etag-only": Page(html("etag only"), etag='"e1"'),
        "/lm-only": Page(html("lm only"), last_modified=LM),
        "/weak": Page(html("weak"), etag='W/"w-17"'),
        "/both": Page(html("both"), etag='"b1"', last_modified=LM),
        "/huge-etag": Page(html("huge etag"), etag='"' + "x" * 2000 + '"'),
        "/future-lm": Page(html("future"), last_modified=future),
        "/garbage-lm": Page(html("garbage lm"), last_modified="yesterday at noon"),
        "/no-validators": Page(html("no validators")),
    })
    crawler = Crawler(tmp_path, [{"url": base + p, "key": p} for p in server.pages])
    first = crawler.run()
    assert first.returncode == 0, first.stderr
    assert first.records == [] and first.stats["changewatch/commit/baseline"] == 8
    assert first.stats["changewatch/conditional/validator_refused"] == 3

    second = crawler.run()
    assert second.returncode == 0 and second.records == []
    assert server.sent("/etag-only")[-1] == ('"e1"', None, 304)
    assert server.sent("/lm-only")[-1] == (None, LM, 304)  # the server's own string, never our clock
    assert server.sent("/weak")[-1] == ('W/"w-17"', None, 304)  # weak as received
    assert server.sent("/both")[-1] == ('"b1"', LM, 304)
    for path in ("/huge-etag", "/future-lm", "/garbage-lm", "/no-validators"):
        assert server.sent(path)[-1] == (None, None, 200), path
    assert second.stats["changewatch/conditional/not_modified"] == 4
    assert second.stats["changewatch/conditional/full_fetch_no_validators"] == 4
    assert second.stats["changewatch/commit/none"] == 8


def test_servers_that_ignore_or_misuse_validators_keep_working(odd_server: tuple[OddServer, str],
                                                               tmp_path: Path) -> None:
    server, base = odd_server
    setup(server, {
        "/always200": Page(html("always 200"), etag='"a"', last_modified=LM, mode="always200"),
        "/precondition": Page(html("precondition"), etag='"p"', mode="precondition"),
        "/body304": Page(html("body 304"), etag='"b"', mode="body304"),
        "/flip": Page(html("flip"), etag='"f"', mode="flip"),
        "/moved": Page(b"", redirect="/target"),
        "/target": Page(html("target"), etag='"t"'),
    })
    watches = [{"url": base + p, "key": p} for p in ("/always200", "/precondition", "/body304", "/flip", "/moved")]
    crawler = Crawler(tmp_path, watches)
    runs = [crawler.run() for _ in range(3)]
    for run in runs:
        assert run.returncode == 0, run.stderr
        assert run.records == [], run.records
    # a first crawl loads a page twice (its baseline's second load teaches where it varies: never conditional)
    assert [s for _, _, s in server.sent("/always200")] == [200, 200, 200, 200]
    assert runs[1].stats["changewatch/conditional/ignored_by_server"] == 1
    # a 412 to our validators is asked again without them
    assert server.sent("/precondition")[2:] == [('"p"', None, 412), (None, None, 200)] * 2
    assert runs[1].stats["changewatch/conditional/precondition_failed"] == 1
    # a 304 that carries a body is still a 304
    assert server.sent("/body304")[2:] == [('"b"', None, 304)] * 2
    # ETag, no ETag (the baseline's second load: its validators are not kept), 304, no ETag:
    # validators only while the last full response had them (a 304 keeps them)
    assert server.sent("/flip") == [(None, None, 200), (None, None, 200), ('"f"', None, 304), ('"f"', None, 200)]
    # validators belong to the URL that answered: the redirect's target (the baseline's second
    # load is made where the first ended)
    assert server.sent("/moved") == [(None, None, 301)] * 3
    assert server.sent("/target") == [(None, None, 200), (None, None, 200), ('"t"', None, 304), ('"t"', None, 304)]
    assert runs[2].stats["changewatch/commit/none"] == 5
    assert crawler.run().records == [] and server.sent("/flip")[-1] == (None, None, 200)


def test_a_304_to_a_request_without_validators_is_an_error(odd_server: tuple[OddServer, str],
                                                         tmp_path: Path) -> None:
    server, base = odd_server
    setup(server, {"/rogue": Page(html("rogue"), mode="rogue304"), "/fine": Page(html("fine"), etag='"f"')})
    crawler = Crawler(tmp_path, [{"url": base + "/rogue", "key": "rogue"}, {"url": base + "/fine", "key": "fine"}])
    first = crawler.run()
    records = by_key(first.records)
    assert set(records) == {"rogue"}
    assert records["rogue"]["kind"] == "error"
    assert "304" in records["rogue"]["error"] and "without validators" in records["rogue"]["error"]
    assert first.stats["changewatch/conditional/unexpected_not_modified"] == 1
    assert first.stats["changewatch/commit/baseline"] == 1  # the rogue page has none


def test_safety_net_catches_a_change_hidden_by_wrong_304s(odd_server: tuple[OddServer, str], tmp_path: Path) -> None:
    server, base = odd_server
    setup(server, {"/liar": Page(html("version one"), etag='"v1"', mode="wrong304")})
    crawler = Crawler(tmp_path, [{"url": base + "/liar", "key": "liar"}])
    every = ("-s", "CHANGEWATCH_CONDITIONAL_FULL_FETCH_RUNS=2")
    assert crawler.run(*every).records == []
    server.pages["/liar"] = Page(html("version two"), etag='"v2"', mode="wrong304")
    hidden = [crawler.run(*every) for _ in range(2)]
    assert all(r.records == [] for r in hidden)  # the server lies twice...
    assert [s for _, _, s in server.sent("/liar")] == [200, 200, 304, 304]
    caught = crawler.run(*every)  # ...and the third run is a full fetch
    assert caught.stats["changewatch/conditional/full_fetch_max_runs"] == 1
    assert [r["kind"] for r in caught.records] == ["content"]
    assert "+ version two" in caught.records[0]["diff"]


def test_opt_outs_and_spec_changes_force_full_fetches(odd_server: tuple[OddServer, str], tmp_path: Path) -> None:
    server, base = odd_server
    setup(server, {"/a": Page(html("a"), etag='"a"'), "/b": Page(html("b"), etag='"b"')})
    crawler = Crawler(tmp_path, [{"url": base + "/a", "key": "a", "conditional": False},
                                 {"url": base + "/b", "key": "b"}])
    crawler.run()
    second = crawler.run()
    assert server.sent("/a") == [(None, None, 200)] * 3  # the first crawl: a baseline of two loads
    assert second.stats["changewatch/conditional/opt_out"] == 1
    assert server.sent("/b")[-1] == ('"b"', None, 304)
    # a new extraction spec must see the page once in full, not a 304
    crawler.write_watchlist([{"url": base + "/b", "key": "b", "region": "main"}])
    third = crawler.run()
    assert server.sent("/b")[-1] == (None, None, 200)
    assert third.stats["changewatch/conditional/full_fetch_spec_changed"] == 1
    assert crawler.run().stats["changewatch/conditional/not_modified"] == 1
    # a run can skip conditional requests altogether, and an age of 0 days means always in full
    assert "changewatch/conditional/sent" not in crawler.run("-s", "CHANGEWATCH_CONDITIONAL_FULL_FETCH_DAYS=0").stats


def test_two_watches_of_one_url_validate_apart(odd_server: tuple[OddServer, str], tmp_path: Path) -> None:
    server, base = odd_server
    setup(server, {"/shared": Page(b"<html><body><main>main text</main><aside>side text</aside></body></html>",
                                   etag='"s1"')})
    crawler = Crawler(tmp_path, [{"url": base + "/shared", "key": "main", "region": "main"},
                                 {"url": base + "/shared", "key": "aside", "region": "aside"}])
    assert crawler.run().stats["changewatch/commit/baseline"] == 2
    second = crawler.run()
    assert server.sent("/shared")[-2:] == [('"s1"', None, 304)] * 2
    assert second.stats["changewatch/commit/none"] == 2  # each key once, not twice
    assert "changewatch/conditional/full_fetch_spec_changed" not in second.stats
