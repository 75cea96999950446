"""The comparison core: plain typed functions and small comparison classes, no Scrapy imports.

Usable from spiders, pipelines, worker processes, the CLI and tests alike: normalising
(:mod:`.normalise`), fingerprints (:mod:`.simhash`), diffs (:mod:`.diff`), values and URLs
(:mod:`.values`, :mod:`.fields`, :mod:`.urls`, :mod:`.entities`), the comparisons
(:mod:`.comparisons`), the per-key snapshot (:mod:`.snapshot`) and the decision
(:mod:`.classify`).
"""

from .comparisons import CompareContext, Comparison, Kind, Unobservable, load_comparisons
from .diff import DiffOptions, line_diff
from .entities import Entity, build_entities, compare_entities
from .fields import compare_fields, normalise_value
from .normalise import RegionError, VisibleText, check_region, normalise, normalise_text, visible_text
from .observation import Observation
from .simhash import distance, simhash, simhash_reference
from .snapshot import Snapshot
from .urls import TRACKING_PARAMS, canonical_url
from .verdict import Verdict, classify, digest, observe

__all__ = [
    "TRACKING_PARAMS", "CompareContext", "Comparison", "DiffOptions", "Entity", "Kind", "Observation", "RegionError",
    "Snapshot", "Unobservable", "Verdict", "VisibleText", "build_entities", "canonical_url", "check_region",
    "classify", "compare_entities", "compare_fields", "digest", "distance", "line_diff", "load_comparisons",
    "normalise", "normalise_text", "normalise_value", "observe", "simhash", "simhash_reference", "visible_text",
]
