"""Item pipelines, in order: fields → entities → content → commit (the add-on sets the order)."""

from .commit import CommitPipeline
from .content import ContentPipeline
from .entities import EntitySetPipeline
from .fields import FieldPipeline

__all__ = ["CommitPipeline", "ContentPipeline", "EntitySetPipeline", "FieldPipeline"]
