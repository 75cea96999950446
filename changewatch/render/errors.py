"""Why a render failed: ``str()`` starts with the class an ``error`` record starts with."""

from __future__ import annotations

from ..core.failures import ClassifiedFailure

__all__ = ["BrowserMissing", "RenderError"]


class RenderError(ClassifiedFailure):
    """A page could not be rendered: ``timeout: …``, ``too large: …``, ``render: …``."""


class BrowserMissing(RenderError):
    """A watch needs rendering and there is no browser to render it with: the crawl stops."""
