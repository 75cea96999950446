"""Notifications, end to end: real ``scrapy crawl`` runs over several rounds, a real webhook receiver
on 127.0.0.1 (Apprise's ``json://``), the store's delivery state, and ``changewatch notify``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from changewatch.store import RoutingStore, open_store

from ..middlewares.conditional.servers import OddServer, Page
from ..middlewares.conditional.test_odd_servers import html
from ..notify.servers import ScriptedServer, webhook
from .crawl import Crawler, scrapy_crawl, scrapy_env
from .hostile import HostileSite, good_page, page

FAST = ("-s", "CHANGEWATCH_NOTIFY_TIMEOUT=2", "-s", "CHANGEWATCH_NOTIFY_RETRIES=2",
        "-s", "CHANGEWATCH_NOTIFY_RETRY_TIME=20")


@pytest.fixture
def receiver() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    yield server
    server.stop()


def product(price: str, stock: str = "In stock") -> bytes:
    return (f"<html><body><main><h1>Kettle 2000</h1><p class='price'>{price}</p><p class='stock'>{stock}</p>"
            "<p>A kettle that boils water quickly and quietly.</p></main></body></html>").encode()


def notify_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "changewatch.cli", "notify", *args], cwd=cwd, env=scrapy_env(),
                          capture_output=True, text=True, timeout=120)


def test_one_batched_message_per_run_carries_every_change_with_its_diff(
        odd_server: tuple[OddServer, str], receiver: ScriptedServer, tmp_path: Path) -> None:
    server, base = odd_server
    server.pages.update({"/terms": Page(html("Terms of service, version one")), "/news": Page(html("Quiet news")),
                         "/kettle": Page(product("€ 89,00"))})
    crawler = Crawler(tmp_path, [{"url": base + "/terms", "key": "terms"}, {"url": base + "/news", "key": "news"},
                                 {"url": base + "/kettle", "key": "kettle", "fields": {"price": "p.price::text"},
                                  "kinds": {"price": "price"}}])
    notify = ("-s", f"CHANGEWATCH_NOTIFY={webhook(receiver)}", *FAST)
    first = crawler.run(*notify)
    assert first.returncode == 0, first.stderr
    assert receiver.received == []  # baselines: nothing to say

    server.pages.update({"/terms": Page(html("Terms of service, version TWO")), "/news": Page(html("Loud news")),
                         "/kettle": Page(product("€ 79,00"))})
    second = crawler.run(*notify)
    assert second.returncode == 0, second.stderr
    assert len(second.records) == 3
    [message] = receiver.received  # one message for the run, not one per change
    assert message.path == "/hook"
    sent = message.json
    assert sent["title"] == "changewatch: 3 changes (content, field) from watch"
    body = sent["message"]
    assert "+ Terms of service, version TWO" in body and "- Terms of service, version one" in body  # as written
    assert "price: € 89,00 → € 79,00" in body and "+ Loud news" in body
    for record in second.records:
        assert f"change {record['change_id']}," in body
    assert second.stats["changewatch/notify/sent"] == 1 and second.stats["changewatch/notify/changes_sent"] == 3
    assert second.stats["changewatch/notify/routed"] == 3

    third = crawler.run(*notify)  # nothing changed, nothing pending
    assert third.returncode == 0 and len(receiver.received) == 1 and "changewatch/notify/sent" not in third.stats


def test_a_failing_destination_is_retried_reported_and_delivered_later(
        odd_server: tuple[OddServer, str], receiver: ScriptedServer, tmp_path: Path) -> None:
    server, base = odd_server
    server.pages["/p"] = Page(html("price 10"))
    crawler = Crawler(tmp_path, [{"url": base + "/p", "key": "p"}])
    notify = ("-s", f"CHANGEWATCH_NOTIFY={webhook(receiver)}", *FAST)
    assert crawler.run(*notify).returncode == 0

    receiver.script = lambda n: (500, b'{"error": "down"}', 0.0)
    server.pages["/p"] = Page(html("price 12"))
    failed = crawler.run(*notify)
    assert failed.returncode == 1, failed.stderr  # a notification that could not be sent is not a success
    assert len(receiver.received) == 3  # the first try and two retries
    assert "could not notify json://127.0.0.1" in failed.stderr and "they stay pending" in failed.stderr
    assert failed.stats["changewatch/notify/failed"] == 1 and failed.stats["changewatch/notify/attempts"] == 3
    [record] = failed.records  # the change itself was exported and logged all the same
    assert "+ price 12" in record["diff"]

    listed = notify_cli("--store", crawler.store, "-s", f"CHANGEWATCH_NOTIFY={webhook(receiver)}", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    [pending] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert pending["change_id"] == record["change_id"] and pending["attempts"] == 3 and pending["configured"]
    assert "500" in pending["last_error"] and pending["destination"] == webhook(receiver)

    receiver.script = lambda n: (200, b"{}", 0.0)
    resent = notify_cli("--resend", "--since", "1d", "--store", crawler.store,
                        "-s", f"CHANGEWATCH_NOTIFY={webhook(receiver)}", cwd=tmp_path)
    assert resent.returncode == 0, resent.stderr
    assert resent.stdout.strip() == f"sent 1 change(s) to {webhook(receiver)}"
    assert "+ price 12" in receiver.received[-1].json["message"] and len(receiver.received) == 4
    again = notify_cli("--resend", "--store", crawler.store, "-s", f"CHANGEWATCH_NOTIFY={webhook(receiver)}",
                       cwd=tmp_path)
    assert again.stdout.strip() == "nothing to send" and len(receiver.received) == 4

    quiet = crawler.run(*notify)  # sent: a later run has nothing to send either
    assert quiet.returncode == 0 and len(receiver.received) == 4


def test_a_later_run_delivers_what_an_earlier_one_could_not(
        odd_server: tuple[OddServer, str], receiver: ScriptedServer, tmp_path: Path) -> None:
    server, base = odd_server
    server.pages["/p"] = Page(html("one"))
    crawler = Crawler(tmp_path, [{"url": base + "/p", "key": "p"}])
    notify = ("-s", f"CHANGEWATCH_NOTIFY={webhook(receiver)}", "-s", "CHANGEWATCH_NOTIFY_RETRIES=0", *FAST[:2])
    crawler.run(*notify)
    receiver.script = lambda n: (503, b"{}", 0.0)
    server.pages["/p"] = Page(html("two"))
    assert crawler.run(*notify).returncode == 1
    receiver.script = lambda n: (200, b"{}", 0.0)
    server.pages["/p"] = Page(html("three"))
    later = crawler.run(*notify)
    assert later.returncode == 0, later.stderr
    body = receiver.received[-1].json["message"]
    assert "+ two" in body and "+ three" in body  # the missed change and this run's, in one message
    assert later.stats["changewatch/notify/changes_sent"] == 2


def test_routes_by_kind_and_by_a_watch_s_condition(odd_server: tuple[OddServer, str], tmp_path: Path) -> None:
    server, base = odd_server
    alerts, errors, deals = ScriptedServer(), ScriptedServer(), ScriptedServer()
    try:
        server.pages.update({"/kettle": Page(product("€ 89,00")), "/gone": Page(html("here"))})
        crawler = Crawler(tmp_path, [
            {"url": base + "/kettle", "key": "kettle", "fields": {"price": "p.price::text", "stock": "p.stock::text"},
             "kinds": {"price": "price", "stock": "availability"},
             "notify": {"urls": webhook(deals), "when": "price < 80 and stock == InStock"}},
            {"url": base + "/gone", "key": "gone"}])
        routes = json.dumps({"field": [webhook(alerts)], "content": [webhook(alerts)], "error": [webhook(errors)]})
        crawler.run("-s", f"CHANGEWATCH_NOTIFY={routes}", *FAST)
        server.pages["/kettle"] = Page(product("€ 85,00"))  # not below 80: not a deal
        del server.pages["/gone"]
        second = crawler.run("-s", f"CHANGEWATCH_NOTIFY={routes}", *FAST)
        assert second.returncode == 0, second.stderr
        assert len(alerts.received) == 1 and "price: € 89,00 → € 85,00" in alerts.received[0].json["message"]
        assert len(errors.received) == 1 and "[error]" in errors.received[0].json["message"]
        assert "[field]" not in errors.received[0].json["message"] and deals.received == []
        server.pages["/kettle"] = Page(product("€ 79,00", "Out of stock"))  # below 80, but not in stock
        crawler.run("-s", f"CHANGEWATCH_NOTIFY={routes}", *FAST)
        assert deals.received == []
        server.pages["/kettle"] = Page(product("€ 75,00", "available"))
        crawler.run("-s", f"CHANGEWATCH_NOTIFY={routes}", *FAST)
        [deal] = deals.received
        assert "price: € 79,00 → € 75,00" in deal.json["message"] and len(alerts.received) == 3
    finally:
        for receiver in (alerts, errors, deals):
            receiver.stop()


def test_a_receiver_that_hangs_is_given_up_on_within_the_timeout(
        odd_server: tuple[OddServer, str], receiver: ScriptedServer, tmp_path: Path) -> None:
    server, base = odd_server
    server.pages["/p"] = Page(html("one"))
    crawler = Crawler(tmp_path, [{"url": base + "/p", "key": "p"}])
    notify = ("-s", f"CHANGEWATCH_NOTIFY={webhook(receiver)}", "-s", "CHANGEWATCH_NOTIFY_TIMEOUT=1",
              "-s", "CHANGEWATCH_NOTIFY_RETRIES=1", "-s", "CHANGEWATCH_NOTIFY_RETRY_TIME=5")
    crawler.run(*notify)
    receiver.script = lambda n: (200, b"{}", 30.0)  # answers after half a minute
    server.pages["/p"] = Page(html("two"))
    hung = crawler.run(*notify)
    assert hung.returncode == 1 and "could not notify" in hung.stderr
    assert hung.stats["elapsed_time_seconds"] < 20  # two attempts of a second each, a pause, and the crawl
    store = open_store(crawler.store)
    try:
        assert isinstance(store, RoutingStore)
        [state] = store.notification_states()
        assert state.attempts == 2 and "timeout" in (state.last_error or "").lower()  # the try and one retry
    finally:
        store.close()


def test_a_huge_diff_is_cut_and_says_so(odd_server: tuple[OddServer, str], receiver: ScriptedServer,
                                         tmp_path: Path) -> None:
    server, base = odd_server
    lines = "".join(f"<p>Line {i} of the long document says something.</p>" for i in range(400))
    server.pages["/long"] = Page(f"<html><body><main>{lines}</main></body></html>".encode())
    crawler = Crawler(tmp_path, [{"url": base + "/long", "key": "long"}])
    notify = ("-s", f"CHANGEWATCH_NOTIFY={webhook(receiver)}", "-s", "CHANGEWATCH_DIFF_MAX_LINES=500", *FAST)
    crawler.run(*notify)
    changed = "".join(f"<p>Line {i} of the long document says something else.</p>" for i in range(400))
    server.pages["/long"] = Page(f"<html><body><main>{changed}</main></body></html>".encode())
    crawler.run(*notify)
    body = receiver.received[0].json["message"]
    assert len(body) <= 4000 and "more diff lines" in body


def test_destinations_of_a_watchlist_fetched_by_url_go_through_the_ssrf_guard(site: HostileSite,
                                                                               tmp_path: Path) -> None:
    """The pages and the watchlist are on 127.0.0.1, allowlisted; one receiver is there too, the
    other on 127.0.0.2, which nothing allows: the watchlist's destination there is refused, naming
    the rule, while the operator's own destination there (CHANGEWATCH_NOTIFY) is the operator's."""
    near, far, operator = ScriptedServer(), ScriptedServer(host="127.0.0.2"), ScriptedServer(host="127.0.0.2")
    try:
        site.good["/page"] = page(good_page("page one"))
        watchlist = {"watches": [{"url": site.base + "/page", "key": "p",
                                  "notify": [webhook(near), webhook(far)]}]}
        site.good["/w.json"] = page(json.dumps(watchlist).encode(), ctype="application/json")
        args = ("-a", f"watchlist={site.base}/w.json", "-s", f"CHANGEWATCH_STORE=sqlite:///{tmp_path / 'state.db'}",
                "-s", "CHANGEWATCH_SSRF_ALLOWED_NETWORKS=127.0.0.1/32", "-s", f"CHANGEWATCH_NOTIFY={webhook(operator)}",
                *FAST)
        assert scrapy_crawl(tmp_path, "watch", 1, *args).returncode == 0
        site.good["/page"] = page(good_page("page two"))
        second = scrapy_crawl(tmp_path, "watch", 2, *args)
        assert second.returncode == 1, second.stderr[-3000:]
        assert len(near.received) == 1 and len(operator.received) == 1 and far.received == []
        assert f"could not notify {webhook(far)} of 1 change(s) (1 attempt(s)): refused: loopback: 127.0.0.2" \
            in second.stderr
    finally:
        for server in (near, far, operator):
            server.stop()


def kettle(name: str, price: str) -> bytes:
    return (f"<html><body><main><h1>{name}</h1><p class='price'>{price}</p>"
            "<p>A kettle that boils water quickly and quietly.</p></main></body></html>").encode()


def terms(word: str) -> bytes:
    clauses = "".join(f"<p>Clause {i}: the provider {word} change these terms.</p>" for i in range(40))
    return f"<html><body><main><h1>Terms</h1>{clauses}<p>Contact us.</p></main></body></html>".encode()


def test_a_crossing_is_sent_once_and_every_message_shows_what_its_condition_tested(
        odd_server: tuple[OddServer, str], receiver: ScriptedServer, tmp_path: Path) -> None:
    """The price hook: a crossing is sent when the price falls below 80, not when the name changes
    at a price already below it; a plain condition is sent both times, saying 62 → 62. A 40-line
    edit to an operator's destination shows removed and added lines alike."""
    server, base = odd_server
    server.pages.update({"/kettle": Page(kettle("Kettle", "€ 89,00")), "/terms": Page(terms("may"))})
    crawler = Crawler(tmp_path, [
        {"url": base + "/kettle", "key": "kettle", "fields": {"name": "h1::text", "price": "p.price::text"},
         "kinds": {"price": "price"},
         "notify": [{"urls": webhook(receiver, "/deals"), "when": {"crossing": "price < 80"}},
                    {"urls": webhook(receiver, "/state"), "when": "price < 80"}]},
        {"url": base + "/terms", "key": "terms"}])
    notify = ("-s", f"CHANGEWATCH_NOTIFY={json.dumps({'content': [webhook(receiver, '/ops')]})}",
              "-s", "CHANGEWATCH_DIFF_MAX_LINES=500", *FAST)

    def sent() -> dict[str, str]:
        got = {m.path: m.json["message"] for m in receiver.received}
        receiver.received.clear()
        return got

    assert crawler.run(*notify).returncode == 0 and sent() == {}  # baselines

    server.pages["/kettle"] = Page(kettle("Kettle", "€ 62,00"))
    fell = crawler.run(*notify)
    assert fell.returncode == 0, fell.stderr
    messages = sent()
    assert sorted(messages) == ["/deals", "/state"]
    assert "sent as price < 80 became true: price: 89 EUR → 62 EUR" in messages["/deals"]
    assert "sent as price < 80 holds: price: 89 EUR → 62 EUR" in messages["/state"]
    assert "became true" not in messages["/state"] and " holds:" not in messages["/deals"]
    [record] = fell.records
    assert [c["when"] for c in record["conditions"]] == [{"crossing": "price < 80"}, "price < 80"]

    server.pages["/kettle"] = Page(kettle("Kettle 2000", "€ 62,00"))  # renamed, still 62
    server.pages["/terms"] = Page(terms("will not"))
    renamed = crawler.run(*notify)
    assert renamed.returncode == 0, renamed.stderr
    messages = sent()
    assert sorted(messages) == ["/ops", "/state"]  # no crossing: nothing to /deals
    assert "sent as price < 80 holds: price: 62 EUR → 62 EUR" in messages["/state"]
    assert "name: Kettle → Kettle 2000" in messages["/state"]
    by_key = {r["key"]: r for r in renamed.records}
    assert by_key["kettle"]["conditions"] == [{"when": "price < 80", "destinations": [webhook(receiver, "/state")],
                                               "values": {"price": {"old": "62 EUR", "new": "62 EUR"}}}]
    assert "conditions" not in by_key["terms"]
    ops = messages["/ops"].splitlines()
    removed = [line for line in ops if line.startswith("    - Clause")]
    added = [line for line in ops if line.startswith("    + Clause")]
    assert len(removed) == len(added) == 10 and "will not change" in added[0]
    # the record's diff holds what fits its 4,000 characters, removed and added lines alike; the
    # message shows ten of each and counts the rest
    assert any(line.startswith("    … ") and line.endswith(" more removed lines") for line in ops), "\n".join(ops)
    assert any(line.startswith("    … ") and line.endswith(" more added lines") for line in ops), "\n".join(ops)


def test_a_retired_destination_is_discarded_with_the_command_the_crawl_gives(
        odd_server: tuple[OddServer, str], receiver: ScriptedServer, tmp_path: Path) -> None:
    """A send fails, the destination is then removed from the configuration: the next crawl warns
    and gives the exact command; run as given, it ends those deliveries, recorded as discarded,
    and the crawl after it says nothing more about it."""
    import re
    import shlex

    server, base = odd_server
    server.pages["/p"] = Page(html("price 10"))
    crawler = Crawler(tmp_path, [{"url": base + "/p", "key": "p"}])
    retired = ("-s", f"CHANGEWATCH_NOTIFY={webhook(receiver)}", *FAST)
    assert crawler.run(*retired).returncode == 0
    receiver.script = lambda n: (500, b"{}", 0.0)
    server.pages["/p"] = Page(html("price 12"))
    assert crawler.run(*retired).returncode == 1  # pending for the retired destination now

    kept = ScriptedServer()
    try:
        # the configuration names another destination, no longer this one
        warned = crawler.run("-s", f"CHANGEWATCH_NOTIFY={webhook(kept)}", *FAST)
    finally:
        kept.stop()
    assert warned.returncode == 0, warned.stderr[-2000:]
    [command] = re.findall(r"which this configuration does not name .*?or end them: (changewatch notify .*)$",
                           warned.stderr, re.M)
    argv = shlex.split(command)
    assert argv[:2] == ["changewatch", "notify"] and "--discard" in argv
    discarded = notify_cli(*argv[2:], cwd=tmp_path)
    assert discarded.returncode == 0, discarded.stderr
    assert discarded.stdout.startswith(f"discarded 1 pending change(s) for {webhook(receiver)}")
    listed = notify_cli("--store", crawler.store, "--all", cwd=tmp_path)
    [state] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert state["discarded_at"] and state["sent_at"] is None and state["attempts"] == 3
    kept = ScriptedServer()
    try:
        quiet = crawler.run("-s", f"CHANGEWATCH_NOTIFY={webhook(kept)}", *FAST)
    finally:
        kept.stop()
    assert quiet.returncode == 0 and "does not name" not in quiet.stderr
