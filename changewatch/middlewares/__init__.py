"""Downloader and spider middlewares: the vantage point, conditional requests, rendering, redelivery,
the schedule.

The SSRF guard has its own package (:mod:`changewatch.guard`).
"""

from .calibration import CalibrationMiddleware
from .conditional import ConditionalRequestMiddleware, ConditionalSpiderMiddleware
from .delivery import RedeliveryMiddleware
from .notmodified import NotModified
from .render import RenderMiddleware
from .schedule import ScheduleMiddleware
from .vantage import Vantage, VantageMiddleware

__all__ = ["CalibrationMiddleware", "ConditionalRequestMiddleware",
           "ConditionalSpiderMiddleware", "NotModified", "RedeliveryMiddleware",
           "RenderMiddleware", "ScheduleMiddleware", "Vantage", "VantageMiddleware"]
