"""Item pipelines: :class:`ChangewatchPipeline`, the one comparison step."""

from .compare import ChangewatchPipeline

__all__ = ["ChangewatchPipeline"]
