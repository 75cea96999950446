"""Scrapy settings of the changewatch project (``scrapy.cfg`` and the Scrapyd entry point)."""

from changewatch import __version__

BOT_NAME = "changewatch"
SPIDER_MODULES = ["changewatch.spiders"]
NEWSPIDER_MODULE = "changewatch.spiders"

ADDONS = {"changewatch.Addon": 0}

# Fetch like a good citizen: say who we are, obey robots.txt, never hang.
USER_AGENT = f"changewatch/{__version__} (+https://github.com/changewatch/changewatch)"
ROBOTSTXT_OBEY = True
DOWNLOAD_TIMEOUT = 30
RETRY_TIMES = 2
CONCURRENT_REQUESTS_PER_DOMAIN = 4
DOWNLOAD_MAXSIZE = 10 * 1024 * 1024  # a page larger than this is an error record, not a memory spike
DOWNLOAD_WARNSIZE = 5 * 1024 * 1024
# A 429 asks us to come back later: the next scheduled run is later, an immediate retry is not.
RETRY_HTTP_CODES = [500, 502, 503, 504, 522, 524, 408]

# The SSRF guard (docs/security.md): every connection resolves names through a resolver that
# refuses loopback, private, link-local, metadata... answers. Process-wide: set it here or with -s.
TWISTED_DNS_RESOLVER = "changewatch.guard.GuardedResolver"

# Safe defaults for production: no code-executing control server, no telnet console.
REMOTE_CONTROL_ENABLED = False
TELNETCONSOLE_ENABLED = False

# One response yields one observation (or a few): Scrapy starts CONCURRENT_ITEMS tasks for every
# response's output whatever it holds (scrapy#5182): 39 µs a response with 4, 85 with 16, 375 with
# Scrapy's default 100. Four is the work two worker processes can hold at once.
CONCURRENT_ITEMS = 4

FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"

