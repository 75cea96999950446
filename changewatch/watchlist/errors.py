"""What is wrong with a watchlist, in words: the model's validation errors (pydantic's) as one
line per problem, each naming the watch, the option's path and what it accepts, with no links
and no library jargon."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from ..core.render_options import BLOCKABLE
from ..core.reprs import short_repr
from ..core.values import FIELD_KINDS
from .model import (
    DEFAULT_OPTIONS,
    WATCH_OPTIONS,
    CanaryModel,
    EntitiesModel,
    IgnoreModel,
    JsonEntitiesModel,
    JsonLdModel,
    JsonModel,
    NotifyModel,
    RenderModel,
    RuleModel,
    SiteModel,
)

__all__ = ["MAX_PROBLEMS", "WatchlistError", "describe_watch", "problems"]


class WatchlistError(ValueError):
    """The watchlist cannot be used; the message names the file, the watch and the problem."""

#: at most this many problems are listed; the rest are counted
MAX_PROBLEMS = 20

_SELECTOR = "a CSS or XPath selector string"
_STRINGS = "a string or a non-empty list of strings"
_STRINGS_OR_NONE = "a string or a list of strings"
_PAIRS = "a mapping of name: value"
#: what each option accepts, by its path in a watch ("*": any name in a mapping, "[]": any item)
ACCEPTS = {
    "url": "an absolute http(s) URL", "key": "a non-empty string", "region": "a CSS selector string",
    "threshold": "a whole number of bits from 0 to 64", "sort_lines": "true or false", "conditional": "true or false",
    "confirm": "true or false",
    "jsonld": "a mapping with 'type', 'fields' and optionally 'key'", "jsonld.type": _STRINGS_OR_NONE,
    "jsonld.fields": _STRINGS, "jsonld.key": "a dotted path such as 'sku' or 'url'",
    "fields": "a mapping of name: selector (at least one)", "fields.*": _SELECTOR,
    "entities": "a mapping with selector, key and fields", "entities.selector": _SELECTOR, "entities.key": _SELECTOR,
    "entities.fields": "a mapping of name: selector", "entities.fields.*": _SELECTOR,
    "keep_params": _STRINGS_OR_NONE, "drop_params": _STRINGS_OR_NONE,
    "kinds": "a mapping of field name: kind (at least one)", "kinds.*": f"one of {', '.join(sorted(FIELD_KINDS))}",
    "proxy": "an http(s) URL such as http://user:pass@proxy.example:8080", "headers": _PAIRS, "cookies": _PAIRS,
    "accept_language": "an Accept-Language value such as 'de-CH,de;q=0.9'",
    "include": "title, meta or links, or a non-empty list of them",
    "ignore": "a mapping with selectors, text or both",
    "ignore.selectors": "a CSS selector or a non-empty list of them",
    "ignore.text": "a regular expression or a non-empty list of them",
    "type": "one of html, json, feed, text, pdf, bytes", "json": "a mapping with fields and/or entities",
    "json.fields": "a path or a non-empty list of paths (dotted, or a JSON Pointer starting with /)",
    "json.entities": "a mapping with key and optionally path and fields",
    "canary": "a mapping {expect: change or no_change, within: a duration such as 2d}",
    "canary.expect": "change or no_change",
    "render": "true, false or a mapping with wait_for, timeout and block",
    "render.wait_for": "a CSS selector", "render.timeout": "a number of seconds above 0",
    "render.block": f"a resource type or a list of them ({', '.join(BLOCKABLE)})",
    "render.block.[]": f"one of {', '.join(BLOCKABLE)}",
    "notify": "an Apprise URL, a list of them, or a mapping with urls, when and kinds",
    "notify.[]": "an Apprise URL or a mapping with urls, when and kinds",
    "notify.[].urls": "an Apprise URL or a non-empty list of them", "notify.[].urls.[]": "an Apprise URL",
    "notify.[].when": "a condition such as 'offers.price < 80', or {crossing: 'offers.price < 80'}",
    "notify.[].kinds": "field, entities, content, error, moved or recovered, or a list of them",
    "notify.[].kinds.[]": "one of field, entities, content, error, moved, recovered",
    "site": "a mapping with sitemap or start, and optionally allow, deny, follow, depth, max_pages and every",
    "site.sitemap": "an absolute http(s) URL", "site.start": "an absolute http(s) URL or a non-empty list of them",
    "site.start.[]": "an absolute http(s) URL",
    **{f"site.{name}": "a regular expression or a non-empty list of them" for name in ("allow", "deny", "follow")},
    "site.depth": "a whole number of link hops from 0 to 100",
    "site.max_pages": "a whole number of pages from 1 to 1000000",
    "rules": "a non-empty list of mappings, each with match and page options",
    "rules.[]": "a mapping with match and page options", "rules.[].match": "a regular expression",
}
_MAPPINGS = frozenset({"fields", "kinds", "headers", "cookies", "entities.fields"})
_KNOWN = {"": sorted(WATCH_OPTIONS), "jsonld": sorted(JsonLdModel.model_fields),
          "entities": sorted(EntitiesModel.model_fields), "ignore": sorted(IgnoreModel.model_fields),
          "json": sorted(JsonModel.model_fields), "json.entities": sorted(JsonEntitiesModel.model_fields),
          "canary": sorted(CanaryModel.model_fields), "render": sorted(RenderModel.model_fields),
          "notify": sorted(NotifyModel.model_fields), "site": sorted(SiteModel.model_fields),
          "rules": sorted(info.alias or name for name, info in RuleModel.model_fields.items())}


def describe_watch(index: int, raw: Any) -> str:
    """``watch #3 (its key or URL)``: how a message names the watch at *index*."""
    labels = [raw.get("key"), raw.get("url")] if isinstance(raw, Mapping) else []
    # a key that is no key (true, a list) does not name the watch: its URL does
    label = next((str(v).strip() for v in labels if isinstance(v, str | int) and not isinstance(v, bool)
                  and str(v).strip()), None)
    return f"watch #{index + 1}" + (f" ({short_repr(label)[1:-1]})" if label else "")


def problems(error: ValidationError, data: Any) -> list[str]:
    """One line per problem in *error*, raised validating the watchlist document *data*; at most
    :data:`MAX_PROBLEMS`, and a last line counting the rest."""
    lines = [_problem(e["loc"], e["type"], e["input"], e.get("ctx") or {}, data)
             for e in error.errors(include_url=False)]
    lines = list(dict.fromkeys(lines))  # a value wrong in several ways the same way is one problem
    if len(lines) > MAX_PROBLEMS:
        lines[MAX_PROBLEMS:] = [f"… and {len(lines) - MAX_PROBLEMS} more problems"]
    return lines


def _problem(loc: Sequence[int | str], kind: str, value: Any, ctx: Mapping[str, Any], data: Any) -> str:
    if not loc:
        hint = " (a list of watches goes under 'watches:')" if isinstance(value, list) else ""
        return f"a watchlist must be a mapping with a 'watches' list, not {type(value).__name__}{hint}"
    top, rest = loc[0], list(loc[1:])
    if top == "watches" and rest and isinstance(rest[0], int):
        watches = data.get("watches") if isinstance(data, Mapping) else None
        raw = watches[rest[0]] if isinstance(watches, list) and rest[0] < len(watches) else None
        where, rest, scope = describe_watch(rest[0], raw) + ": ", rest[1:], "watch"
        if not rest and kind == "value_error" and "error" in ctx:  # options that do not go together
            return where + str(ctx["error"])
        if not rest:
            return f"{where}must be a mapping, not {type(value).__name__}"
    elif top == "defaults" and rest:
        where, scope = "defaults: ", "defaults"
    else:
        return _top_level(str(top), kind, value)
    path, schematic = _paths(rest)
    if kind == "extra_forbidden":
        return where + _unknown(path, scope)
    if kind == "missing":
        return f"{where}{path} is required"
    if kind in ("value_error", "assertion_error") and "error" in ctx:
        return where + _worded(path, str(ctx["error"]))
    if rest[-1] == "[key]":
        quoted = "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
        return (f"{where}{_paths(rest[:-2])[0]}: a name must be a string or a whole number, not "
                f"{short_repr(value)}; put the name in quotes as you mean it ('{quoted}': …)")
    accepts = ACCEPTS.get(schematic) or ACCEPTS.get(schematic.removesuffix(".[]")) or "something else"
    if schematic.endswith(".[]") and accepts in (_STRINGS, _STRINGS_OR_NONE):
        accepts = "a non-empty string"
    return f"{where}{path} must be {accepts}, not {short_repr(value)}"


def _top_level(name: str, kind: str, value: Any) -> str:
    if name == "watches":
        given = "none given" if kind == "missing" else f"not {short_repr(value)}"
        return f"'watches' must be a non-empty list of watches ({given})"
    if name == "defaults":
        return f"defaults must be a mapping of watch options other than url and key, not {short_repr(value)}"
    return f"unknown top-level option {name}{_did_you_mean(name, ['defaults', 'watches'])}; known: defaults, watches"


def _paths(rest: Sequence[int | str]) -> tuple[str, str]:
    """The dotted path of an option (``fields.price``, ``jsonld.fields.2``) and its schematic
    path, the key of :data:`ACCEPTS` (``fields.*``, ``jsonld.fields.[]``)."""
    if len(rest) > 2 and rest[0] == "rules" and isinstance(rest[1], int):  # a rule's page option: as a watch's
        path, schematic_path = _paths(rest[2:])
        return f"rules.{rest[1]}.{path}", "rules.[].match" if schematic_path == "match" else schematic_path
    shown: list[str] = []
    schematic: list[str] = []
    for part in rest:
        if ".".join(schematic) in _MAPPINGS:
            schematic.append("*")
        elif isinstance(part, int):
            schematic.append("[]")
        else:
            schematic.append(str(part))
        shown.append(str(part))
    return ".".join(shown), ".".join(schematic)


def _unknown(path: str, scope: str) -> str:
    parent, _, name = path.rpartition(".")
    if scope == "defaults" and not parent and name in WATCH_OPTIONS:
        return f"{name} is given per watch, not here"
    schematic = re.sub(r"\.\d+(?=\.|$)", "", parent)  # notify.0: a rule of notify
    if schematic.startswith("rules."):  # a rule's page option
        schematic = schematic.removeprefix("rules.")
    known = (sorted(DEFAULT_OPTIONS) if scope == "defaults" and not parent
             else _KNOWN.get(schematic, []))
    where = f"{parent}: " if parent else ""
    return f"{where}unknown option {name}{_did_you_mean(name, known)}; known: {', '.join(known)}"


def _did_you_mean(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _worded(path: str, message: str) -> str:
    """*message* (a validator's) about the option at *path*: as it is when it names the option
    itself (``headers: 'a b' is not a valid name``), else after the path."""
    parent, _, name = path.rpartition(".")
    if message.startswith((f"{name} ", f"{name}.", f"{name}:")):
        return f"{parent}.{message}" if parent else message
    return f"{path}: {message}"
