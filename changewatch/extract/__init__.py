"""Extraction: what a spider reads from a response (selectors, JSON-LD, microdata, OpenGraph)."""

from .page import Page
from .specs import Entities, FieldSpec, FieldSpecError

__all__ = ["Entities", "FieldSpec", "FieldSpecError", "Page"]
