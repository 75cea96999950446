"""Scrapy settings of the changewatch project (``scrapy.cfg`` and the Scrapyd entry point)."""

from pathlib import Path

BOT_NAME = "changewatch"
SPIDER_MODULES = ["changewatch.spiders"]
NEWSPIDER_MODULE = "changewatch.spiders"

ADDONS = {"changewatch.Addon": 0}

# The safety defaults (size and time limits, the User-Agent, robots.txt, the SSRF guard's resolver,
# no telnet or remote control, CONCURRENT_ITEMS) come from the add-on, as in any project:
# changewatch.addon.SAFETY_DEFAULTS, their one definition (docs/settings.md).

FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"

# `scrapy genspider -t changewatch NAME DOMAIN`: a per-site spider with the conventions in place.
TEMPLATES_DIR = str(Path(__file__).resolve().parent / "templates")
# `scrapy check`: @site_path (a path on the spider's -a site=URL) and @observes contracts.
SPIDER_CONTRACTS = {"changewatch.contracts.SitePathContract": 10, "changewatch.contracts.ObservesContract": 10}
