"""Failures that say their own error class (docs/architecture.md, the ``error`` kind)."""

from __future__ import annotations

__all__ = ["ClassifiedFailure"]


class ClassifiedFailure(Exception):
    """A fetch failed and ``str()`` is the error record's text as it stands, starting with its
    class (``timeout: …``, ``too large: …``, ``render: …``): a downloader component below the
    extraction code (a render handler) raises a subclass, which the errback reports as is."""
