"""End to end: real ``scrapy crawl watch`` runs against a local server.

A page that answers 404 or 410 is an ``http:`` error, then ``gone:`` on the second consecutive
run; when it answers again, one ``recovered`` record closes the streak, or, if it changed
meanwhile, the change against the baseline from before it went missing. A timeout streak ends
the same way. A permanent redirect is one ``moved`` record, and the watch compares on at the new
URL against its old baseline; a temporary redirect is no move. The failure counts are kept in
the store: the gone crawl runs on SQLite and on PostgreSQL.
"""
# ruff: noqa: F811 -- the store fixtures of tests/store/conftest.py, imported to be requested by name

from __future__ import annotations

from pathlib import Path

from ..store.conftest import postgresql_store_uri, sqlite_store_uri, store_uri  # noqa: F401
from .crawl import Crawler, CrawlResult, by_key
from .hostile import HostileSite, good_page, hang, page, redirect

# a timeout is a timeout on the first try: no retries to wait for
QUICK = ("-s", "DOWNLOAD_TIMEOUT=2", "-s", "RETRY_ENABLED=False")
NOT_FOUND = "http: HTTP 404: the server has no page at this URL (Not Found)"
REMOVED = "http: HTTP 410: the server says the page was removed for good (Gone)"


def ok(result: CrawlResult) -> dict[str, dict]:
    assert result.returncode == 0, result.stderr[-3000:]
    return by_key(result.records)


def all_failed(result: CrawlResult) -> dict[str, dict]:
    """A crawl whose every due watch failed: its records, and exit status 1 (README, "Exit statuses")."""
    assert result.returncode == 1, result.stderr[-3000:]
    assert "changewatch: not one page was observed" in result.stderr
    return by_key(result.records)


def test_gone_then_recovered_and_a_timeout_streak_then_recovered(site: HostileSite, tmp_path: Path,
                                                                 store_uri: str) -> None:
    edited = good_page("edited").replace(b"paragraph 5 says something stable",
                                         b"paragraph 5 now says something new")
    site.good.update({"/same": page(good_page("same")), "/edited": page(good_page("edited")),
                      "/slow": page(good_page("slow"))})
    crawler = Crawler(tmp_path, [{"key": key, "url": f"{site.base}/{key}"} for key in ("same", "edited", "slow")],
                      store=store_uri)
    assert ok(crawler.run(*QUICK)) == {}  # baselines

    site.good["/same"] = page(b"<h1>Not found</h1>", 404)
    site.good["/edited"] = page(b"<h1>Gone</h1>", 410)
    site.good["/slow"] = hang(site)
    second = all_failed(crawler.run(*QUICK))
    assert {k: r["error"] for k, r in second.items()} == {"same": NOT_FOUND, "edited": REMOVED,
                                                         "slow": second["slow"]["error"]}
    assert second["slow"]["error"].startswith("timeout:")

    third = crawler.run(*QUICK)
    records = all_failed(third)  # the timeout streak goes on quietly; the missing pages are gone now
    assert {k: (r["kind"], r["error"]) for k, r in records.items()} == {
        "same": ("error", NOT_FOUND.replace("http: HTTP 404", "gone: HTTP 404 on 2 consecutive runs")),
        "edited": ("error", REMOVED.replace("http: HTTP 410", "gone: HTTP 410 on 2 consecutive runs"))}
    assert third.stats["changewatch/commit/error_repeated"] == 1

    site.good.update({"/same": page(good_page("same")), "/edited": page(edited), "/slow": page(good_page("slow"))})
    fourth = crawler.run(*QUICK)
    records = ok(fourth)
    assert {k: r["kind"] for k, r in records.items()} == {"same": "recovered", "edited": "content",
                                                         "slow": "recovered"}
    assert "- edited: paragraph 5 says something stable about edited." in records["edited"]["diff"]
    assert "+ edited: paragraph 5 now says something new about edited." in records["edited"]["diff"]
    assert records["same"]["url"] == f"{site.base}/same" and "error" not in records["same"]
    assert fourth.stats["changewatch/commit/recovered"] == 2

    assert ok(crawler.run(*QUICK)) == {}  # once per streak


def test_a_permanent_redirect_is_one_moved_record_and_a_temporary_one_none(site: HostileSite,
                                                                          tmp_path: Path) -> None:
    old, new, temp = f"{site.base}/old", f"{site.base}/new", f"{site.base}/temp"
    site.good.update({"/old": page(good_page("moving")), "/temp": page(good_page("visiting"))})
    crawler = Crawler(tmp_path, [{"key": "moving", "url": old}, {"key": "visiting", "url": temp},
                                 {"key": "chained", "url": f"{site.base}/chain"}])
    site.good["/chain"] = page(good_page("chained"))
    assert ok(crawler.run()) == {}

    site.good.update({"/old": redirect(f"{site.base}/hop", 301), "/hop": redirect(new, 308),
                      "/new": page(good_page("moving")),
                      "/temp": redirect(f"{site.base}/elsewhere", 302), "/elsewhere": page(good_page("visiting")),
                      "/chain": redirect(f"{site.base}/chain-hop", 301),
                      "/chain-hop": redirect(f"{site.base}/chain-end", 307),
                      "/chain-end": page(good_page("chained"))})
    second = crawler.run()
    records = ok(second)
    assert list(records) == ["moving"]  # a 302 or a 307 anywhere on the way is no move
    moved = records["moving"]
    assert (moved["kind"], moved["url"], moved["moved_to"]) == ("moved", old, new)
    assert not {"diff", "changes", "error"} & set(moved)
    assert second.stats["changewatch/commit/moved"] == 1

    assert ok(crawler.run()) == {}  # reported once

    site.good["/new"] = page(good_page("moving").replace(b"paragraph 3 says", b"paragraph 3 now says"))
    records = ok(crawler.run())
    assert list(records) == ["moving"]
    change = records["moving"]  # against the baseline fetched at the old URL
    assert change["kind"] == "content" and change["url"] == new and "moved_to" not in change
    assert "+ moving: paragraph 3 now says something stable about moving." in change["diff"]


def test_a_move_and_a_change_in_one_run_is_the_change_carrying_moved_to(site: HostileSite, tmp_path: Path) -> None:
    old, new = f"{site.base}/old", f"{site.base}/new"
    site.good["/old"] = page(good_page("moving"))
    crawler = Crawler(tmp_path, [{"key": "moving", "url": old}])
    assert ok(crawler.run()) == {}
    site.good.update({"/old": redirect(new, 301),
                      "/new": page(good_page("moving").replace(b"paragraph 3 says", b"paragraph 3 now says"))})
    change = ok(crawler.run())["moving"]
    assert (change["kind"], change["url"], change["moved_to"]) == ("content", old, new)
    assert "+ moving: paragraph 3 now says something stable about moving." in change["diff"]
    assert ok(crawler.run()) == {}


def test_a_meta_refresh_on_a_long_page_is_followed(site: HostileSite, tmp_path: Path) -> None:
    """changewatch's MetaRefreshMiddleware stands in Scrapy's (it reads only the head of a page that
    declares its encoding): a real crawl follows the refresh of a page far longer than
    that head, and the watch compares the page it leads to."""
    filler = "".join(f"<p>Filler paragraph {i}, long enough to push the page past its head.</p>" for i in range(1200))
    refreshing = (f'<html><head><meta http-equiv="refresh" content="0; url={site.base}/target">'
                  f"<title>moving on</title></head><body>{filler}</body></html>").encode()
    assert len(refreshing) > 64 * 1024
    site.good.update({"/refreshing": page(refreshing), "/target": page(good_page("target"))})
    crawler = Crawler(tmp_path, [{"key": "refreshed", "url": f"{site.base}/refreshing"}])
    first = crawler.run("-s", "LOG_LEVEL=INFO")
    assert ok(first) == {}
    assert "changewatch.middlewares.MetaRefreshMiddleware" in first.stderr
    assert "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware" not in first.stderr
    assert site.hits["/target"] == 2  # its baseline's two loads (the second made where the first ended)

    site.good["/target"] = page(good_page("target").replace(b"paragraph 4 says", b"paragraph 4 now says"))
    records = ok(crawler.run())
    assert list(records) == ["refreshed"] and records["refreshed"]["kind"] == "content"
    assert "+ target: paragraph 4 now says something stable about target." in records["refreshed"]["diff"]
    assert site.hits["/target"] == 4  # the change's confirmation loads the page it led to once more
