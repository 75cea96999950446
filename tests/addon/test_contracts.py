"""The add-on brings the contracts of per-site spiders to any project, where ``scrapy check``
reads them: in the process's settings, before a crawler (and the add-on's update_settings) exists."""

from __future__ import annotations

from scrapy.addons import AddonManager
from scrapy.contracts import Contract
from scrapy.settings import Settings

from changewatch.addon import SPIDER_CONTRACT_ORDER


class Mine(Contract):
    name = "mine"


def contracts(project: dict[str, object]) -> dict[str, int | None]:
    settings = Settings()
    settings.setdict(project, priority="project")
    AddonManager.load_pre_crawler_settings(settings)  # as CrawlerProcess does, before `scrapy check` reads them
    return dict(settings.get_component_priority_dict_with_base("SPIDER_CONTRACTS"))


def test_a_project_with_only_the_addon_gets_the_contracts() -> None:
    assert set(SPIDER_CONTRACT_ORDER) == {"changewatch.contracts.SitePathContract",
                                          "changewatch.contracts.ObservesContract"}
    found = contracts({"ADDONS": {"changewatch.Addon": 0}})
    assert {path: found.get(path) for path in SPIDER_CONTRACT_ORDER} == SPIDER_CONTRACT_ORDER
    assert "scrapy.contracts.default.ReturnsContract" in found  # Scrapy's own stay
    assert not set(SPIDER_CONTRACT_ORDER) & set(contracts({}))  # and without the add-on, nothing of ours


def test_the_projects_own_contracts_stay_and_win() -> None:
    found = contracts({"ADDONS": {"changewatch.Addon": 0},
                       "SPIDER_CONTRACTS": {f"{__name__}.Mine": 5,
                                            "changewatch.contracts.ObservesContract": None}})
    assert found[f"{__name__}.Mine"] == 5
    assert found["changewatch.contracts.SitePathContract"] == 10
    assert "changewatch.contracts.ObservesContract" not in found  # turned off by the project
