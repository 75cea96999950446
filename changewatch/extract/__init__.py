"""Extraction: what a spider reads from a response (selectors, JSON-LD, microdata, OpenGraph)."""

from .._deprecated import module_getattr
from .page import Page
from .specs import Entities, FieldSpec, FieldSpecError

__all__ = ["Entities", "FieldSpec", "FieldSpecError", "Page"]

# ``changewatch.extract`` was one module (the selector helpers): its names still resolve.
__getattr__ = module_getattr(__name__)
