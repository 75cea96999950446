"""Scrapy's RobotsTxtMiddleware, with every request that waits for a host's robots.txt judged by it.

The first request for a host downloads its robots.txt; the others that arrive meanwhile wait on
one shared ``Deferred``. Scrapy 2.19 awaits it through ``Deferred.asFuture``, which consumes the
result: the first waiter gets the rules, every later one ``None``, which the middleware reads as
"no robots.txt, everything allowed". Those pages were fetched although robots.txt disallowed them,
on every run, for every host with more than two watches. Here each waiter has a ``Deferred`` of
its own, fed from the shared one by a callback that passes the rules on to the next.
:class:`changewatch.Addon` puts it in the place of Scrapy's unless the project's
``DOWNLOADER_MIDDLEWARES`` names Scrapy's own.
"""

from __future__ import annotations

from scrapy import Request
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as ScrapyRobotsTxtMiddleware
from scrapy.robotstxt import RobotParser
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

__all__ = ["RobotsTxtMiddleware"]


class RobotsTxtMiddleware(ScrapyRobotsTxtMiddleware):
    """Scrapy's RobotsTxtMiddleware (same settings, same parser, same stats and log lines)."""

    async def robot_parser(self, request: Request) -> RobotParser | None:
        # Scrapy's own bookkeeping: a host's parser, or the Deferred of its robots.txt on the way
        pending = self._parsers.get(urlparse_cached(request).netloc)
        if not isinstance(pending, Deferred):
            return await super().robot_parser(request)  # the first request for the host, or known rules
        mine: Deferred[RobotParser | None] = Deferred()

        def pass_on(parser: RobotParser | None) -> RobotParser | None:
            mine.callback(parser)  # ignored if this waiter was cancelled meanwhile (Twisted's rule)
            return parser  # for the next waiter

        pending.addCallback(pass_on)
        return await maybe_deferred_to_future(mine)
