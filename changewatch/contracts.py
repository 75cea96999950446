"""Spider contracts for per-site spiders (``scrapy check``), enabled in ``SPIDER_CONTRACTS``.

- ``@site_path /catalogue/lamps/``: the sample URL is the spider's site (``-a site=URL``)
  joined with the path, so one contract checks a local fixture server, staging or production.
  Without ``-a site=``, a spider that names a ``fixture_site`` (the example spiders) is checked
  against that fixture site, served on 127.0.0.1 on a free port for the run: bare
  ``scrapy check`` runs every example contract.
- ``@observes key fields.price fields.name entities``: every observation the callback yields
  has no ``error`` and a value at each dotted member (``entities``: at least one entity).
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

from itemadapter import ItemAdapter
from scrapy.contracts import Contract
from scrapy.exceptions import ContractFail

from .items import as_observation

__all__ = ["ObservesContract", "SitePathContract"]


_SERVED: dict[str, str] = {}
_SERVING = threading.Lock()


def _fixture_base(name: str) -> str:
    """The base URL of fixture site *name*, served from this process until it exits."""
    with _SERVING:
        if name not in _SERVED:
            from .examples.site import FixtureSite

            site = FixtureSite(name)
            _SERVED[name] = site.start()
            atexit.register(site.stop)
        return _SERVED[name]


def _serve_fixture(spider: Any) -> None:
    """Point *spider* at its own fixture site, and let this crawl's SSRF guard through to that
    one origin on 127.0.0.1 (only there: everything else stays refused)."""
    spider.site = _fixture_base(spider.fixture_site)
    crawler = getattr(spider, "crawler", None)
    if crawler is not None:
        from .addon import ChangewatchRuntime

        runtime = crawler.get_extension(ChangewatchRuntime)
        if runtime is not None:
            runtime.trust_origin(spider.site)


class SitePathContract(Contract):
    """``@site_path PATH``: the sample request's URL is the spider's site joined with PATH (its
    own fixture site when it has one and no ``-a site=`` was given)."""

    name = "site_path"

    def adjust_request_args(self, args: dict[str, Any]) -> dict[str, Any]:
        spider = getattr(args["callback"], "__self__", None)
        join = getattr(spider, "url", None)
        if spider is not None and getattr(spider, "site", None) is None and getattr(spider, "fixture_site", None):
            _serve_fixture(spider)
        if spider is None or not callable(join) or getattr(spider, "site", None) is None:
            name = getattr(spider, "name", "?")
            raise ContractFail(f"@site_path needs a ChangewatchSpider with a site: scrapy check {name} -a site=URL")
        args["url"] = join(self.args[0])
        return args


def _member(obs: Any, dotted: str) -> Any:
    adapter = ItemAdapter(obs)
    head, _, rest = dotted.partition(".")
    value = adapter.get(head)
    if rest:
        value = value.get(rest) if isinstance(value, dict) else None
    return value


class ObservesContract(Contract):
    """``@observes MEMBER…``: the callback yields at least one observation, none of them an
    error, and each has a non-empty value at every MEMBER (``key``, ``fields.price``…)."""

    name = "observes"

    def post_process(self, output: list[Any]) -> None:
        observations = [item for item in output if as_observation(item) is not None]
        if not observations:
            raise ContractFail(f"no observation among the {len(output)} results")
        for item in observations:
            obs = as_observation(item)
            assert obs is not None
            if obs.error:
                raise ContractFail(f"observation {obs.key!r} is an error: {obs.error}")
            for member in self.args:
                if member and _member(item, member) in (None, "", [], {}):
                    raise ContractFail(f"observation {obs.key!r} has no {member}")
