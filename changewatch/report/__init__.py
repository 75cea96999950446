"""``changewatch report``'s page (docs/cli.md): one self-contained HTML file of a period's changes."""

from __future__ import annotations

from .build import ReportOptions, write_report

__all__ = ["ReportOptions", "write_report"]
