"""The SSRF guard: a URL policy, a guarded name resolver and a downloader middleware.

Importing this package does not import Twisted's reactor; ``changewatch.guard.policy`` imports
neither Scrapy nor Twisted.
"""

from .middleware import RefusedRequest, SSRFGuardMiddleware, reports_refusals
from .policy import AddressPolicy, Refusal
from .resolver import GuardedResolver

__all__ = ["AddressPolicy", "GuardedResolver", "Refusal", "RefusedRequest", "SSRFGuardMiddleware",
           "reports_refusals"]
