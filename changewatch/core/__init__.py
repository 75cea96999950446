"""The comparison core: plain typed functions and small comparison classes, no Scrapy imports.

Usable from spiders, pipelines, worker processes, the CLI and tests alike: a page's text
(:mod:`.text`: decoding, the HTML walkers, the volatile patterns, include and ignore),
fingerprints (:mod:`.simhash`), diffs (:mod:`.diff`), values and URLs (:mod:`.values`,
:mod:`.fields`, :mod:`.urls`, :mod:`.entities`), the comparisons (:mod:`.comparisons`), the
per-key snapshot (:mod:`.snapshot`) and the decision (:mod:`.verdict`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# simhash is named as its module: imported now, so that the package's attribute is the function
# whenever the module is imported (importing a submodule sets the attribute to it).
from .simhash import distance, simhash, simhash_reference
from .text.lxml_walker import RegionError, check_region
from .text.normalise import normalise, normalise_text, visible_text
from .text.visible import VisibleText

if TYPE_CHECKING:
    from .comparisons import CompareContext, Comparison, Kind, Unobservable, load_comparisons
    from .diff import DiffOptions, line_diff
    from .entities import Entity, build_entities, compare_entities
    from .fields import compare_fields, normalise_value
    from .observation import Observation
    from .snapshot import Snapshot
    from .urls import TRACKING_PARAMS, canonical_url
    from .verdict import Verdict, classify, digest, observe

__all__ = [
    "TRACKING_PARAMS", "CompareContext", "Comparison", "DiffOptions", "Entity", "Kind", "Observation", "RegionError",
    "Snapshot", "Unobservable", "Verdict", "VisibleText", "build_entities", "canonical_url", "check_region",
    "classify", "compare_entities", "compare_fields", "digest", "distance", "line_diff", "load_comparisons",
    "normalise", "normalise_text", "normalise_value", "observe", "simhash", "simhash_reference", "visible_text",
]

# Imported on first use: a worker process imports the comparisons it runs, not every module here
# (entities, values and URLs bring w3lib and price-parser).
_LAZY = {
    **dict.fromkeys(("CompareContext", "Comparison", "Kind", "Unobservable", "load_comparisons"), "comparisons"),
    **dict.fromkeys(("DiffOptions", "line_diff"), "diff"),
    **dict.fromkeys(("Entity", "build_entities", "compare_entities"), "entities"),
    **dict.fromkeys(("compare_fields", "normalise_value"), "fields"),
    "Observation": "observation", "Snapshot": "snapshot",
    **dict.fromkeys(("TRACKING_PARAMS", "canonical_url"), "urls"),
    **dict.fromkeys(("Verdict", "classify", "digest", "observe"), "verdict"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
