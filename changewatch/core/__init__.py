"""The comparison core: plain typed functions, no Scrapy imports.

Usable from spiders, pipelines, the CLI and tests alike.
"""

from .compare import (
    DiffOptions,
    Kind,
    Snapshot,
    Verdict,
    check_observable,
    classify,
    page_digest,
    page_snapshot,
    text_snapshot,
)
from .diff import line_diff
from .entities import Entity, build_entities, compare_entities
from .fields import compare_fields, normalise_value
from .normalise import RegionError, VisibleText, check_region, normalise, normalise_text, visible_text
from .simhash import distance, simhash, simhash_reference
from .urls import TRACKING_PARAMS, canonical_url

__all__ = [
    "TRACKING_PARAMS", "DiffOptions", "Entity", "Kind", "RegionError", "Snapshot", "Verdict", "VisibleText",
    "build_entities", "canonical_url", "check_observable", "check_region", "classify",
    "compare_entities", "compare_fields", "distance", "line_diff", "normalise", "normalise_text",
    "normalise_value", "page_digest", "page_snapshot", "simhash", "simhash_reference", "text_snapshot",
    "visible_text",
]
