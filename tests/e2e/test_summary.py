"""The optional AI summary, end to end: real ``scrapy crawl`` runs against a fake OpenAI-compatible
endpoint on 127.0.0.1 that answers as each test scripts it. A summary is a garnish: whatever the
endpoint does, every change ships with its diff."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..middlewares.conditional.servers import OddServer, Page
from ..middlewares.conditional.test_odd_servers import html
from ..notify.servers import QUOTA, ScriptedServer, answering, completion, webhook
from .crawl import Crawler, CrawlResult, scrapy_env

SUMMARY = "The terms now name a new contact and a new version."
EMAIL = "privacy-officer@shop.example"
#: secrets the page's stable text keeps (the normaliser drops other random-looking tokens itself)
TOKENS = ("AKIAIOSFODNN7EXAMPLE", "abcDEF123456ghiJKL789", "9f8e7d6c5b4a")


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    monkeypatch.setenv("CHANGEWATCH_SUMMARY_API_KEY", "test-key-123")
    server = ScriptedServer(answering(SUMMARY))
    yield server
    server.stop()


def summary_settings(server: ScriptedServer, *extra: str) -> tuple[str, ...]:
    return ("-s", f"CHANGEWATCH_SUMMARY_URL={server.base}/v1", "-s", "CHANGEWATCH_SUMMARY_MODEL=test-model",
            "-s", "CHANGEWATCH_SUMMARY_TIMEOUT=2", *extra)


def pages(server: OddServer, n: int, version: str) -> None:
    for i in range(n):
        server.pages[f"/p{i}"] = Page(html(f"Page {i} says {version}"))


def crawl_twice(server: OddServer, base: str, tmp_path: Path, n: int, *settings: str) -> tuple[Crawler, CrawlResult]:
    """A baseline of *n* pages, then a run where every one of them changed."""
    pages(server, n, "one thing")
    crawler = Crawler(tmp_path, [{"url": f"{base}/p{i}", "key": f"p{i}"} for i in range(n)])
    first = crawler.run(*settings)
    assert first.returncode == 0, first.stderr
    pages(server, n, "another thing")
    second = crawler.run(*settings)
    assert second.returncode == 0, second.stderr
    assert len(second.records) == n and all("another thing" in r["diff"] for r in second.records)
    return crawler, second


def logged_records(store: str, cwd: Path) -> list[dict[str, object]]:
    proc = subprocess.run([sys.executable, "-m", "changewatch.cli", "changes", "--store", store], cwd=cwd,
                          env=scrapy_env(), capture_output=True, text=True, timeout=60, check=True)
    return [json.loads(line)["record"] for line in proc.stdout.splitlines()]


def test_a_summary_is_added_to_the_record_the_log_and_the_notification_and_nothing_private_leaves(
        odd_server: tuple[OddServer, str], model: ScriptedServer, tmp_path: Path) -> None:
    server, base = odd_server
    receiver = ScriptedServer()
    try:
        server.pages.update({"/terms?session=abc123": Page(html("Contact: legal@shop.example. Version 1")),
                             "/kettle": Page(b"<html><body><p class='price'>89.00</p></body></html>")})
        crawler = Crawler(tmp_path, [{"url": base + "/terms?session=abc123", "key": "terms"},
                                     {"url": base + "/kettle", "key": "kettle", "fields": {"price": "p.price::text"}}])
        settings = (*summary_settings(model), "-s", f"CHANGEWATCH_NOTIFY={webhook(receiver)}")
        assert crawler.run(*settings).returncode == 0
        assert model.received == []  # baselines are not summarised
        terms = f"Contact: {EMAIL}, key {TOKENS[0]}, Authorization: Bearer {TOKENS[1]}, api_key={TOKENS[2]}. Version 2"
        server.pages.update({"/terms?session=abc123": Page(html(terms)),
                             "/kettle": Page(b"<html><body><p class='price'>79.00</p></body></html>")})
        second = crawler.run(*settings)
        assert second.returncode == 0, second.stderr
    finally:
        receiver.stop()
    records = {r["key"]: r for r in second.records}
    assert records["terms"]["summary"] == records["kettle"]["summary"] == SUMMARY
    assert all(secret in records["terms"]["diff"] for secret in (EMAIL, *TOKENS))  # the diff: the page's own words
    assert len(model.received) == 2 and second.stats["changewatch/summary/added"] == 2
    for request in model.received:
        assert request.path == "/v1/chat/completions"
        assert request.headers["Authorization"] == "Bearer test-key-123"
        sent = request.body.decode()
        assert not any(secret in sent for secret in (EMAIL, *TOKENS, "legal@shop.example"))
        assert "session=abc123" not in sent
        assert request.json["model"] == "test-model"
    prompts = " ".join(r.json["messages"][1]["content"] for r in model.received)
    assert "[email]" in prompts and "[secret]" in prompts and "'89.00' → '79.00'" in prompts
    assert all(r.get("summary") == SUMMARY for r in logged_records(crawler.store, tmp_path))  # kept in the log
    assert receiver.received and f"Summary: {SUMMARY}" in receiver.received[0].json["message"]


@pytest.mark.parametrize("answer", [(402, b'{"error": {"message": "Payment Required"}}'), (429, QUOTA)],
                         ids=["402", "insufficient_quota"])
def test_an_unfunded_endpoint_is_asked_once_in_a_run(odd_server: tuple[OddServer, str], model: ScriptedServer,
                                                     tmp_path: Path, answer: tuple[int, bytes]) -> None:
    server, base = odd_server
    model.script = lambda n: (*answer, 0.0)
    _, second = crawl_twice(server, base, tmp_path, 10, *summary_settings(model, "-s",
                                                                          "CHANGEWATCH_SUMMARY_CONCURRENCY=8"))
    assert len(model.received) == 1  # exactly one call for ten changes
    assert all("summary" not in r for r in second.records)
    assert second.stderr.count("no more summaries this run") == 1
    assert second.stats["changewatch/summary/unfunded"] == 1 and second.stats["changewatch/summary/skipped"] == 9


def test_a_single_server_error_does_not_stop_summaries(odd_server: tuple[OddServer, str], model: ScriptedServer,
                                                       tmp_path: Path) -> None:
    server, base = odd_server
    model.script = lambda n: (500, b'{"error": "overloaded"}', 0.0) if n == 0 else (200, completion(SUMMARY), 0.0)
    _, second = crawl_twice(server, base, tmp_path, 3, *summary_settings(model))
    assert len(model.received) == 3
    assert sorted("summary" in r for r in second.records) == [False, True, True]
    assert "no more summaries" not in second.stderr and second.stats["changewatch/summary/failed"] == 1


def test_a_slow_answer_times_out_and_the_record_ships_without_one(odd_server: tuple[OddServer, str],
                                                                  model: ScriptedServer, tmp_path: Path) -> None:
    server, base = odd_server
    model.script = lambda n: (200, completion(SUMMARY), 4.0 if n == 0 else 0.0)
    _, second = crawl_twice(server, base, tmp_path, 2, *summary_settings(model, "-s", "CHANGEWATCH_SUMMARY_TIMEOUT=1"))
    assert sorted("summary" in r for r in second.records) == [False, True]  # a timeout does not stop the next
    assert second.stats["changewatch/summary/timeout"] == 1 and "no more summaries" not in second.stderr


@pytest.mark.parametrize("body", [b"this is not JSON", b'{"choices": []}', b'{"id": "x"}',
                                  b'{"choices": [{"message": {"content": "  "}}]}'],
                         ids=["not-json", "no-choices", "no-choices-key", "empty"])
def test_an_answer_that_is_not_one_is_no_summary(odd_server: tuple[OddServer, str], model: ScriptedServer,
                                                 tmp_path: Path, body: bytes) -> None:
    server, base = odd_server
    model.script = lambda n: (200, body, 0.0)
    _, second = crawl_twice(server, base, tmp_path, 2, *summary_settings(model))
    assert len(model.received) == 2 and all("summary" not in r for r in second.records)
    assert second.stats["changewatch/summary/failed"] == 2


def test_an_empty_url_makes_no_call(odd_server: tuple[OddServer, str], model: ScriptedServer,
                                    tmp_path: Path) -> None:
    server, base = odd_server
    off = summary_settings(model, "-s", "CHANGEWATCH_SUMMARY_URL=")  # the last -s wins
    _, second = crawl_twice(server, base, tmp_path, 2, *off)
    assert model.received == [] and all("summary" not in r for r in second.records)
    assert not any(k.startswith("changewatch/summary/") for k in second.stats)


def test_the_daily_budget_stops_calls_and_every_process_of_the_day_shares_it(
        odd_server: tuple[OddServer, str], model: ScriptedServer, tmp_path: Path) -> None:
    server, base = odd_server
    model.script = lambda n: (200, completion(SUMMARY, tokens=None), 0.0)  # no usage: the estimates stand
    # each call is estimated at ~0.2 (~200 tokens at 1 per 1,000): 0.5 pays for two
    budget = summary_settings(model, "-s", "CHANGEWATCH_SUMMARY_DAILY_BUDGET=0.5", "-s",
                              "CHANGEWATCH_SUMMARY_PRICE_PER_1K=1")
    crawler, second = crawl_twice(server, base, tmp_path, 4, *budget)
    assert len(model.received) == 2 and sum("summary" in r for r in second.records) == 2
    assert second.stats["changewatch/summary/over_budget"] >= 1
    assert second.stderr.count("CHANGEWATCH_SUMMARY_DAILY_BUDGET (0.5) is spent") == 1
    pages(server, 4, "a third thing")
    third = crawler.run(*budget)  # the same day, another process: the spend is the store's
    assert third.returncode == 0 and len(model.received) == 2 and all("summary" not in r for r in third.records)


@pytest.mark.parametrize(("setting", "says"), [
    (("-s", "CHANGEWATCH_SUMMARY_DAILY_BUDGET=0", "-s", "CHANGEWATCH_SUMMARY_PRICE_PER_1K=1"),
     "CHANGEWATCH_SUMMARY_DAILY_BUDGET is 0"),
    ((), "CHANGEWATCH_SUMMARY_API_KEY is not set"),
], ids=["budget-0", "no-api-key"])
def test_no_call_is_made_and_it_is_said_once(odd_server: tuple[OddServer, str], model: ScriptedServer,
                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             setting: tuple[str, ...], says: str) -> None:
    server, base = odd_server
    if "API_KEY" in says:
        monkeypatch.delenv("CHANGEWATCH_SUMMARY_API_KEY")
    _, second = crawl_twice(server, base, tmp_path, 3, *summary_settings(model, *setting))
    assert model.received == [] and all("summary" not in r for r in second.records)
    assert second.stderr.count(says) == 1


def test_a_redelivery_without_a_summary_gets_one(odd_server: tuple[OddServer, str], model: ScriptedServer,
                                                 tmp_path: Path) -> None:
    from .test_delivery import KILL_AFTER_COMMIT

    server, base = odd_server
    server.pages["/p"] = Page(html("price 10"))
    crawler = Crawler(tmp_path, [{"url": base + "/p", "key": "p"}])
    settings = summary_settings(model)
    assert crawler.run(*settings).returncode == 0
    server.pages["/p"] = Page(html("price 12"))
    assert crawler.run(*KILL_AFTER_COMMIT).returncode == -9  # committed, never exported nor summarised
    again = crawler.run(*settings)
    [record] = again.records
    assert record["redelivery"] is True and record["summary"] == SUMMARY and len(model.received) == 1
    assert logged_records(crawler.store, tmp_path)[0]["summary"] == SUMMARY
