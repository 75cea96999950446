"""The summary step of a crawl (:class:`~changewatch.pipelines.ChangewatchPipeline` calls it last,
before a record leaves): the summariser built from the settings, and writing each summary into the
change log, so that notifications and redeliveries carry it. Nothing is built when summaries are
off (no CHANGEWATCH_SUMMARY_URL): the pipeline then never gets here."""

from __future__ import annotations

import dataclasses
import logging
import os
from typing import TYPE_CHECKING, Any

from scrapy.crawler import Crawler

from ..config import ConfigError, error_message
from ..core.addresses import AddressPolicy, parse_network
from ..runtime.stats import Stats
from ..store import RoutingStore, StoreError

if TYPE_CHECKING:  # the client (aiohttp) is imported only by a crawl that summarises
    from ..config import ChangewatchConfig
    from ..runtime.services import CrawlServices
    from .summariser import Summariser

__all__ = ["API_KEY_VARIABLE", "CrawlSummaries", "check_summary_url", "summary_policy"]

logger = logging.getLogger(__name__)

API_KEY_VARIABLE = "CHANGEWATCH_SUMMARY_API_KEY"
_SUMMARY_STATS = {"requested": "requested", "added": "added", "failed": "failed", "timeout": "timeout",
                  "unfunded": "unfunded", "skipped": "skipped", "over_budget": "over_budget"}


#: what CHANGEWATCH_SUMMARY_ALLOW_PRIVATE allows: loopback and private networks, never link-local
#: (cloud metadata lives there) or the other non-global ranges
_LOCAL_NETWORKS = tuple(parse_network(n) for n in ("127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
                                                    "::1/128", "fc00::/7"))


def summary_policy(config: ChangewatchConfig) -> AddressPolicy:
    """The SSRF policy of the summary endpoint: the crawl's, and with CHANGEWATCH_SUMMARY_ALLOW_PRIVATE
    also loopback and private addresses (a model server on this machine or network; ``localhost``)."""
    policy = config.guard.policy
    if not config.summary_allow_private:
        return policy
    return dataclasses.replace(policy, allowed_hosts=(*policy.allowed_hosts, "localhost"),
                               allowed_networks=(*policy.allowed_networks, *_LOCAL_NETWORKS))


def check_summary_url(config: ChangewatchConfig) -> None:
    """The summary endpoint's URL against the SSRF policy (its addresses are checked as it is
    resolved), at start: a model server on this machine or network needs
    CHANGEWATCH_SUMMARY_ALLOW_PRIVATE. Raises ConfigError."""
    if config.summary_url is None:
        return
    refusal = summary_policy(config).url_refusal(config.summary_url)
    if refusal is not None:
        raise ConfigError(error_message("CHANGEWATCH_SUMMARY_URL", config.summary_url, "a URL the SSRF policy allows",
                                        f"refused: {refusal}; a model server on this machine or network needs "
                                        "CHANGEWATCH_SUMMARY_ALLOW_PRIVATE = True"))


def _why_not(config: ChangewatchConfig, key: str) -> str | None:
    if not key:
        return (f"the environment variable {API_KEY_VARIABLE} is not set (a local server that needs no key: set it "
                "to any value)")
    if config.summary_daily_budget == 0:
        return "CHANGEWATCH_SUMMARY_DAILY_BUDGET is 0"
    return None


class CrawlSummaries:
    def __init__(self, crawler: Crawler, runtime: CrawlServices, summariser: Summariser):
        self.crawler = crawler
        self.runtime = runtime
        self.summariser = summariser

    @classmethod
    def from_crawler(cls, crawler: Crawler, runtime: CrawlServices) -> CrawlSummaries | None:
        config = runtime.config
        if not config.summaries:
            return None
        from .client import ChatClient
        from .summariser import Summariser

        assert config.summary_url is not None and config.summary_model is not None  # the config says so
        key = os.environ.get(API_KEY_VARIABLE, "").strip()
        why = _why_not(config, key)
        policy = summary_policy(config)
        client = None if why else ChatClient(config.summary_url, config.summary_model, key, config.summary_timeout,
                                             policy if policy.checks_addresses else None)
        stats = Stats(crawler, "summary")
        summariser = Summariser(client, concurrency=config.summary_concurrency, store=_routing(runtime),
                                call=runtime.runner.call, count=lambda event: stats.inc(_SUMMARY_STATS[event]),
                                budget=config.summary_daily_budget, price_per_1k=config.summary_price_per_1k,
                                why_not=why)
        return cls(crawler, runtime, summariser)

    async def summarised(self, record: dict[str, Any], change_id: int) -> dict[str, Any]:
        """*record* with its summary, written into the change log too; as it was on any failure."""
        if not self.summariser.wants(record):
            return record
        try:
            summary = await self.summariser.summarise(record)  # it counts the day's spend in the store
            if summary is None:
                return record
            await self.runtime.runner.call(self.summariser.store.record_summary, self.runtime.spider, change_id,
                                           summary)
        except StoreError as exc:  # the change is logged already: it ships, and the crawl stops
            self.runtime.fail(f"the store cannot be written: {exc}")
            return record
        return {**record, "summary": summary}

    async def close(self) -> None:
        await self.summariser.close()


def _routing(runtime: CrawlServices) -> RoutingStore:
    store: Any = runtime.runner.store  # a store without it stops the crawl as it opens (CrawlServices.open)
    return store  # type: ignore[no-any-return]

