"""fetch_once: the watchlist URL fetch, against a real local server that misbehaves on purpose."""

from __future__ import annotations

import socket
import time

import pytest

from changewatch.core.addresses import AddressPolicy
from changewatch.guard.fetch import MAX_REDIRECTS, FetchError, fetch_once

from ..e2e.hostile import HostileSite, endless, hang, huge_length, page, redirect

LOCAL = AddressPolicy.build(allow_private=True)
UA = "changewatch/test (+https://example.invalid)"


def fetch(url: str, policy: AddressPolicy = LOCAL, timeout: float = 5, max_bytes: int = 4096) -> bytes:
    return fetch_once(url, policy, timeout=timeout, max_bytes=max_bytes, user_agent=UA).body


def test_a_document_is_fetched_with_the_user_agent_and_its_content_type(site: HostileSite) -> None:
    site.good["/w.json"] = page(b'{"watches": []}', ctype="application/json")
    fetched = fetch_once(site.base + "/w.json", LOCAL, timeout=5, max_bytes=100, user_agent=UA)
    assert (fetched.body, fetched.content_type, fetched.url) == (b'{"watches": []}', "application/json",
                                                                 site.base + "/w.json")
    assert site.agents == {UA: 1}


def test_redirects_are_followed(site: HostileSite) -> None:
    site.good["/old"] = redirect("/new", 301)
    site.good["/new"] = page(b"watches: []", ctype="text/yaml")
    fetched = fetch_once(site.base + "/old", LOCAL, timeout=5, max_bytes=100, user_agent=UA)
    assert (fetched.url, fetched.body) == (site.base + "/new", b"watches: []")


def test_loopback_is_refused_by_default_and_nothing_is_requested(site: HostileSite) -> None:
    site.good["/w.json"] = page(b"{}")
    with pytest.raises(FetchError, match=r"^refused: loopback: 127\.0\.0\.1$"):
        fetch(site.base + "/w.json", AddressPolicy())
    with pytest.raises(FetchError, match=r"^refused: loopback: localhost is a loopback name$"):
        fetch(f"http://localhost:{site.port}/w.json", AddressPolicy())
    assert not site.hits


@pytest.mark.parametrize("answers", [["127.0.0.1"], ["93.184.215.14", "10.1.2.3"], ["::1"], ["169.254.169.254"]])
def test_a_name_that_resolves_to_a_refused_address_is_refused(site: HostileSite, monkeypatch: pytest.MonkeyPatch,
                                                                answers: list[str]) -> None:
    """Not only IP literals and loopback names: every address a name resolves to is checked (one
    refused address among good ones refuses the name: it might be the one connected to)."""
    def resolve(host: str, port: int, *args: object, **kwargs: object) -> list[tuple[object, ...]]:
        assert host == "watchlists.example"
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
                for a in answers]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    with pytest.raises(FetchError, match=r"^refused: "):
        fetch(f"http://watchlists.example:{site.port}/w.json", AddressPolicy())
    assert not site.hits


def test_a_redirect_to_a_refused_address_is_not_followed(site: HostileSite) -> None:
    # the first host is allowlisted; the redirect's target is another loopback address
    policy = AddressPolicy.build(allowed_hosts=["127.0.0.1"])
    site.good["/w.json"] = redirect(f"http://127.0.0.2:{site.port}/internal")
    site.good["/ftp"] = redirect("ftp://files.example/w.yaml")
    with pytest.raises(FetchError, match=r"^refused: loopback: 127\.0\.0\.2$"):
        fetch(site.base + "/w.json", policy)
    with pytest.raises(FetchError, match=r"^refused: scheme: ftp scheme"):
        fetch(site.base + "/ftp", policy)
    assert set(site.hits) == {"/w.json", "/ftp"}


def test_a_hanging_server_meets_the_hard_timeout(site: HostileSite) -> None:
    site.good["/slow"] = hang(site)
    start = time.monotonic()
    with pytest.raises(FetchError, match=r"^timeout: no complete answer from http://127\.0\.0\.1:\d+/slow within 1 s$"):
        fetch(site.base + "/slow", timeout=1)
    assert time.monotonic() - start < 2


def test_too_large_is_said_so(site: HostileSite) -> None:
    site.good["/announced"] = huge_length
    site.good["/endless"] = endless
    with pytest.raises(FetchError, match=r"^too large: .*/announced announces 1073741824 bytes, more than the 4096 "
                                         r"allowed \(CHANGEWATCH_WATCHLIST_MAXSIZE\)$"):
        fetch(site.base + "/announced")
    with pytest.raises(FetchError, match=r"^too large: .*/endless is more than the 4096 bytes allowed"):
        fetch(site.base + "/endless")


def test_http_errors_redirect_loops_and_closed_ports(site: HostileSite) -> None:
    site.good["/loop"] = redirect("/loop")
    with pytest.raises(FetchError, match=r"^http: 404 Not Found from http://127\.0\.0\.1:\d+/missing$"):
        fetch(site.base + "/missing")
    with pytest.raises(FetchError, match=rf"^redirects: more than {MAX_REDIRECTS} redirects"):
        fetch(site.base + "/loop")
    assert site.hits["/loop"] == MAX_REDIRECTS + 1
    with pytest.raises(FetchError, match=r"^network: http://127\.0\.0\.1:9/: ConnectionRefusedError"):
        fetch("http://127.0.0.1:9/")
    with pytest.raises(FetchError, match=r"^refused: credentials"):
        fetch(f"http://user:pw@127.0.0.1:{site.port}/")
