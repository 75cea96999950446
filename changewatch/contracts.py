"""Spider contracts for per-site spiders (``scrapy check``), enabled in ``SPIDER_CONTRACTS``.

- ``@site_path /catalogue/lamps/``: the sample URL is the spider's site (``-a site=URL``)
  joined with the path, so one contract checks a local fixture server, staging or production.
- ``@observes key fields.price fields.name entities``: every observation the callback yields
  has no ``error`` and a value at each dotted member (``entities``: at least one entity).
"""

from __future__ import annotations

from typing import Any

from itemadapter import ItemAdapter
from scrapy.contracts import Contract
from scrapy.exceptions import ContractFail

from .items import as_observation

__all__ = ["ObservesContract", "SitePathContract"]


class SitePathContract(Contract):
    """``@site_path PATH``: the sample request's URL is the spider's site joined with PATH."""

    name = "site_path"

    def adjust_request_args(self, args: dict[str, Any]) -> dict[str, Any]:
        spider = getattr(args["callback"], "__self__", None)
        join = getattr(spider, "url", None)
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
