"""The SSRF guard: a URL policy, a guarded name resolver and a downloader middleware.

Importing this package does not import Twisted's reactor; ``changewatch.core.addresses`` imports
neither Scrapy nor Twisted.
"""

from ..core.addresses import AddressPolicy, Refusal
from .middleware import RefusedRequest, SSRFGuardMiddleware, reports_refusals
from .resolver import GuardedResolver

__all__ = ["AddressPolicy", "GuardedResolver", "Refusal", "RefusedRequest", "SSRFGuardMiddleware",
           "reports_refusals"]
