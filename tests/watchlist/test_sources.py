"""Where ``-a watchlist=`` comes from: a path (relative to CHANGEWATCH_WATCHLIST_DIR), an http(s)
URL (fetched under the SSRF policy) or inline JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from changewatch.core.addresses import AddressPolicy
from changewatch.spiders.watch import guarded_fetch
from changewatch.watchlist import WatchlistError, WatchlistSource, read_watchlist

from ..e2e.hostile import HostileSite, endless, page

WATCHES = [{"url": "https://a.example/", "key": "a"}, {"url": "https://b.example/p?id=1"}]


def source(policy: AddressPolicy, directory: str | None = None, *, timeout: float = 30.0,
           max_bytes: int = 10 * 1024 * 1024) -> WatchlistSource:
    """A source that fetches URLs as the watch spider does (under the SSRF guard's *policy*)."""
    return WatchlistSource(directory, guarded_fetch(policy, timeout=timeout, max_bytes=max_bytes))


LOCAL = source(AddressPolicy.build(allow_private=True), timeout=5, max_bytes=4096)


def keys(argument: str, source: WatchlistSource = LOCAL) -> list[str]:
    return [w.key for w in read_watchlist(argument, source)]


def test_inline_json_a_mapping_or_the_watches_alone() -> None:
    assert keys(json.dumps({"watches": WATCHES})) == ["a", "https://b.example/p?id=1"]
    assert keys("  " + json.dumps(WATCHES)) == ["a", "https://b.example/p?id=1"]
    with pytest.raises(WatchlistError, match=r"^watchlist \(inline JSON\) is not valid JSON"):
        read_watchlist('{"watches": [', LOCAL)
    with pytest.raises(WatchlistError, match=r"^\(inline JSON\): watch #1 \(a\): url must be an absolute"):
        read_watchlist('[{"url": "/relative", "key": "a"}]', LOCAL)


def test_a_relative_path_is_read_from_the_watchlist_dir_or_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "lists").mkdir()
    (tmp_path / "lists" / "w.yaml").write_text("watches:\n  - url: https://a.example/\n    key: a\n")
    in_dir = source(AddressPolicy(), str(tmp_path / "lists"))
    assert keys("w.yaml", in_dir) == ["a"]
    assert keys(str(tmp_path / "lists" / "w.yaml"), in_dir) == ["a"]  # an absolute path is itself
    monkeypatch.chdir(tmp_path)
    assert keys("lists/w.yaml", source(AddressPolicy())) == ["a"]
    with pytest.raises(WatchlistError, match=r"no such file \(a relative path is read from the working directory "
                                             rf"\({tmp_path}\), unless CHANGEWATCH_WATCHLIST_DIR is set"):
        read_watchlist("w.yaml", source(AddressPolicy()))
    with pytest.raises(WatchlistError, match=r"read from CHANGEWATCH_WATCHLIST_DIR = '/nowhere'"):
        read_watchlist("w.yaml", source(AddressPolicy(), "/nowhere"))


def test_a_url_is_fetched_json_or_yaml(site: HostileSite) -> None:
    site.good["/w.json"] = page(json.dumps({"watches": WATCHES}).encode(), ctype="text/plain")
    site.good["/w"] = page(b"watches:\n  - url: https://a.example/\n    key: a\n", ctype="application/yaml")
    site.good["/api"] = page(json.dumps({"watches": WATCHES[:1]}).encode(), ctype="application/json; charset=utf-8")
    assert keys(site.base + "/w.json") == ["a", "https://b.example/p?id=1"]
    assert keys(site.base + "/w") == ["a"]
    assert keys(site.base + "/api") == ["a"]


def test_a_bad_url_is_a_clear_watchlist_error(site: HostileSite) -> None:
    site.good["/html.json"] = page(b"<html><body>Sign in</body></html>")
    site.good["/binary"] = page(b"\xff\xfe\x00garbage", ctype="application/octet-stream")
    site.good["/huge"] = endless
    with pytest.raises(WatchlistError, match=r"^watchlist http://127\.0\.0\.1:\d+/html\.json is not valid JSON"):
        read_watchlist(site.base + "/html.json", LOCAL)
    with pytest.raises(WatchlistError, match=r"/binary is not UTF-8 text"):
        read_watchlist(site.base + "/binary", LOCAL)
    with pytest.raises(WatchlistError, match=r"^cannot fetch watchlist .*/huge: too large: "):
        read_watchlist(site.base + "/huge", LOCAL)
    with pytest.raises(WatchlistError, match=r"^cannot fetch watchlist .*: refused: loopback: 127\.0\.0\.1 "
                                             r"\(a watchlist on this machine or network needs"):
        read_watchlist(site.base + "/w.json", source(AddressPolicy()))
    with pytest.raises(WatchlistError, match=r"^watchlist ftp://files\.example/w\.yaml: only http and https"):
        read_watchlist("ftp://user:secret@files.example/w.yaml", LOCAL)
    assert "/w.json" not in site.hits
