"""Downloader and spider middlewares: the vantage point, conditional requests, rendering, redelivery,
the schedule, a meta refresh that reads only the head of a page, robots.txt obeyed by every
request that waited for it.

The SSRF guard has its own package (:mod:`changewatch.guard`).
"""

from ..core.vantage import Vantage
from .calibration import CalibrationMiddleware
from .conditional import ConditionalRequestMiddleware, ConditionalSpiderMiddleware
from .delivery import RedeliveryMiddleware
from .dropped import HttpCompressionMiddleware, RedirectMiddleware
from .fetches import ArrivedMiddleware, FetchFailureMiddleware, ReachedMiddleware
from .metarefresh import MetaRefreshMiddleware
from .notmodified import NotModified
from .render import RenderMiddleware
from .robots import RobotsTxtMiddleware
from .schedule import ScheduleMiddleware
from .vantage import VantageMiddleware

__all__ = ["ArrivedMiddleware", "CalibrationMiddleware", "ConditionalRequestMiddleware",
           "ConditionalSpiderMiddleware", "FetchFailureMiddleware", "HttpCompressionMiddleware",
           "MetaRefreshMiddleware", "NotModified", "ReachedMiddleware", "RedeliveryMiddleware", "RedirectMiddleware",
           "RenderMiddleware", "RobotsTxtMiddleware", "ScheduleMiddleware", "Vantage", "VantageMiddleware"]
