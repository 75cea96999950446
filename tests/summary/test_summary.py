"""The summary's parts on their own: how answers are read, what a prompt carries, and the settings
that only make sense together (the crawls are in tests/e2e/test_summary.py)."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.settings import Settings

from changewatch.config import ChangewatchConfig, ConfigError
from changewatch.summary.client import Answer, Failed, Unfunded, _answer
from changewatch.summary.crawl import check_summary_url
from changewatch.summary.summariser import PROMPT_CHARS, Summariser, prompt_for

from ..notify.servers import QUOTA, completion


@pytest.mark.parametrize(("status", "body", "kind"), [
    (200, completion("  The price fell.\n\nMore text."), Answer),
    (402, b"{}", Unfunded),
    (429, QUOTA, Unfunded),
    (400, b'{"error": {"message": "Your credit balance is too low"}}', Unfunded),
    (401, b'{"error": "invalid api key"}', Unfunded),
    (403, b"forbidden", Unfunded),
    (429, b'{"error": "rate limited, slow down"}', Failed),  # a rate limit passes: not unfunded
    (500, b"oops", Failed),
    (503, b"", Failed),
    (200, b"<html>not json</html>", Failed),
    (200, b'{"choices": []}', Failed),
    (200, b'{"choices": [{"message": {"content": null}}]}', Failed),
    (200, b'[1, 2]', Failed),
])
def test_answers_are_read_as_what_they_are(status: int, body: bytes, kind: type) -> None:
    result = _answer(status, body.decode())
    assert isinstance(result, kind), result
    if isinstance(result, Answer):
        assert result.text == "The price fell." and result.tokens == 60


def test_a_prompt_is_redacted_capped_and_without_the_query() -> None:
    record = {"key": "k", "url": "https://shop.example/p?session=a1b2c3&u=jane@example.com", "kind": "content",
              "diff": "+ Call +44 20 7946 0958 or mail jane@example.com\n" + "+ line\n" * 3000}
    prompt = prompt_for(record)
    assert "Page: https://shop.example/p\n" in prompt and "session" not in prompt
    assert "jane@example.com" not in prompt and "7946" not in prompt and "[email]" in prompt
    assert len(prompt) <= PROMPT_CHARS + 100 and "[the rest of the diff was cut]" in prompt
    fields = prompt_for({"kind": "field", "url": "https://s.example/",
                         "changes": {"price": {"old": "89", "new": "79"}}})
    assert "- price: '89' → '79'" in fields


@pytest.mark.parametrize(("record", "wanted"), [
    ({"kind": "content", "diff": "- a\n+ b"}, True),
    ({"kind": "field", "changes": {"p": {"old": 1, "new": 2}}}, True),
    ({"kind": "content", "diff": "- a\n+ b", "summary": "done"}, False),  # a redelivery already summarised
    ({"kind": "content", "changes": {"sha256": {"old": "a", "new": "b"}}}, True),
    ({"kind": "content"}, False),
    ({"kind": "entities", "added": [{"key": "x"}]}, False),
    ({"kind": "error", "error": "blocked: 403"}, False),
])
def test_which_records_are_summarised(record: dict[str, Any], wanted: bool) -> None:
    assert Summariser.wants(record) is wanted


@pytest.mark.parametrize(("settings", "says"), [
    ({"CHANGEWATCH_SUMMARY_URL": "http://127.0.0.1:11434/v1", "CHANGEWATCH_SUMMARY_MODEL": "m"},
     "refused: loopback: 127.0.0.1; a model server on this machine or network needs "
     "CHANGEWATCH_SUMMARY_ALLOW_PRIVATE = True"),
    ({"CHANGEWATCH_SUMMARY_URL": "http://169.254.169.254/v1", "CHANGEWATCH_SUMMARY_MODEL": "m",
      "CHANGEWATCH_SUMMARY_ALLOW_PRIVATE": True}, "refused: metadata"),
    ({"CHANGEWATCH_SUMMARY_URL": "https://api.example/v1"}, "CHANGEWATCH_SUMMARY_MODEL = None"),
    ({"CHANGEWATCH_SUMMARY_URL": "https://api.example/v1", "CHANGEWATCH_SUMMARY_MODEL": "m",
      "CHANGEWATCH_SUMMARY_DAILY_BUDGET": "2"}, "CHANGEWATCH_SUMMARY_PRICE_PER_1K = 0.0: expected a price > 0"),
])
def test_settings_that_only_make_sense_together(settings: dict[str, Any], says: str) -> None:
    with pytest.raises(ConfigError, match=None) as caught:  # the endpoint's address: the summary's own check
        check_summary_url(ChangewatchConfig.from_settings(Settings(settings)))
    assert says in str(caught.value)


def test_a_local_model_server_is_allowed_for_the_summary_alone() -> None:
    config = ChangewatchConfig.from_settings(Settings({
        "CHANGEWATCH_SUMMARY_URL": "http://127.0.0.1:11434/v1/", "CHANGEWATCH_SUMMARY_MODEL": "llama3.2",
        "CHANGEWATCH_SUMMARY_ALLOW_PRIVATE": True}))
    assert config.summaries and config.summary_url == "http://127.0.0.1:11434/v1"
    assert config.guard.policy.url_refusal("http://127.0.0.1/page") is not None  # pages are still refused
    local = ChangewatchConfig.from_settings(Settings({
        "CHANGEWATCH_SUMMARY_URL": "http://localhost:8080/v1", "CHANGEWATCH_SUMMARY_MODEL": "m",
        "CHANGEWATCH_SUMMARY_ALLOW_PRIVATE": True}))
    assert local.summaries
    off = ChangewatchConfig.from_settings(Settings({"CHANGEWATCH_SUMMARY_URL": "", "CHANGEWATCH_SUMMARY_MODEL": "m"}))
    assert not off.summaries
