"""Scrapy settings of the changewatch project (``scrapy.cfg`` and the Scrapyd entry point)."""

BOT_NAME = "changewatch"
SPIDER_MODULES = ["changewatch.spiders"]
NEWSPIDER_MODULE = "changewatch.spiders"

ADDONS = {"changewatch.Addon": 0}

# The safety defaults (size and time limits, the User-Agent, robots.txt, the SSRF guard's resolver,
# no telnet or remote control, CONCURRENT_ITEMS) come from the add-on, as in any project:
# changewatch.addon.SAFETY_DEFAULTS, their one definition (docs/settings.md).

FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"

