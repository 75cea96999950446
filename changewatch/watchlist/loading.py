"""Loading a watchlist (docs/watchlist.md): its text read as YAML or JSON, validated with its
model (:mod:`.model`) and built into the :class:`~.watch.Watch` objects the crawl reads."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..core.conditions import Condition, parse_condition
from ..core.destinations import destination
from ..core.render_options import RenderOptions, parse_render
from ..core.text.options import INCLUDE_PARTS
from ..core.urls import canonical_url
from ..core.vantage import parse_vantage
from .errors import WatchlistError, describe_watch, problems
from .model import (
    HTML_OPTIONS,
    CanaryModel,
    CrossingModel,
    EntitiesModel,
    IgnoreModel,
    JsonLdModel,
    JsonModel,
    NotifyModel,
    RenderModel,
    SiteModel,
    WatchlistModel,
    WatchModel,
    WatchOptionsModel,
    html_options_conflict,
)
from .site import DEFAULT_DEPTH, DEFAULT_MAX_PAGES, PageRule, SiteSpec
from .watch import EntitySpec, JsonEntitiesSpec, JsonLdSpec, JsonSpec, NotifyRule, Watch

__all__ = ["INLINE", "load_watchlist", "merged_problems", "own_text_options", "parse_watchlist",
           "parse_watchlist_text", "read_text"]

#: how errors name a watchlist given inline (``-a watchlist='{"watches": [...]}'``)
INLINE = "(inline JSON)"


def _json_spec(model: JsonModel | None) -> JsonSpec | None:
    if model is None:
        return None
    e = model.entities
    entities = None if e is None else JsonEntitiesSpec(e.key, e.path, None if e.fields is None else tuple(e.fields))
    return JsonSpec(tuple(model.fields or ()), entities)


def _options(defaults: WatchOptionsModel | None, model: WatchOptionsModel) -> dict[str, Any]:
    # The options a watch gives, over those its defaults give (each as given, null included).
    given = {name: getattr(defaults, name) for name in defaults.model_fields_set} if defaults else {}
    given.update((name, getattr(model, name)) for name in model.model_fields_set)
    return given


def _watch(defaults: WatchOptionsModel | None, model: WatchModel) -> Watch:
    o = _options(defaults, model)
    if model.site is None:
        assert model.url is not None  # the model's own check
        return _built(o, model.url, _key(model, tuple(o.get("keep_params") or ()), tuple(o.get("drop_params") or ())),
                      model.canary)
    site = _site_spec(model.site)
    watch = _built(o, site.url, model.key or "", None)
    rules = tuple(PageRule(r.match, tuple(sorted(n for n in r.model_fields_set if n != "match")),
                           _page_options({**o, **_options(None, r)}),
                           own_text_options(r))
                  for r in model.rules or ())
    return dataclasses.replace(watch, site=site, rules=rules)


def _page_options(o: dict[str, Any]) -> Watch:
    options = _built(o, "", "", None)
    return dataclasses.replace(options, known_spec=options.spec())  # one spec for every page the rule matches


def _site_spec(model: SiteModel) -> SiteSpec:
    return SiteSpec(sitemap=model.sitemap, start=tuple(model.start or ()), allow=tuple(model.allow or ()),
                    deny=tuple(model.deny or ()), follow=tuple(model.follow or ()),
                    depth=DEFAULT_DEPTH if model.depth is None else model.depth,
                    max_pages=DEFAULT_MAX_PAGES if model.max_pages is None else model.max_pages, every=model.every)


def _built(o: dict[str, Any], url: str, key: str, canary: CanaryModel | None) -> Watch:
    """The watch of merged options *o* (each as given, null included)."""
    keep, drop = tuple(o.get("keep_params") or ()), tuple(o.get("drop_params") or ())
    jsonld: JsonLdModel | None = o.get("jsonld")
    entities: EntitiesModel | None = o.get("entities")
    # include and ignore read a text watch's page: a watch compared by its fields takes none from
    # its defaults (one it gives itself is refused, in parse_watchlist)
    text = not (jsonld or o.get("fields") or entities)
    ignore: IgnoreModel | None = o.get("ignore") if text else None
    include = tuple(part for part in INCLUDE_PARTS if part in (o.get("include") or ())) if text else ()
    return Watch(
        url=url, key=key,
        region=o.get("region"), threshold=o.get("threshold"), sort_lines=o.get("sort_lines", False),
        jsonld=JsonLdSpec(tuple(jsonld.type or ()), tuple(jsonld.fields), jsonld.key) if jsonld else None,
        fields=dict(o.get("fields") or {}),
        entities=EntitySpec(entities.selector, entities.key, dict(entities.fields or {})) if entities else None,
        keep_params=keep, drop_params=drop, kinds=dict(o.get("kinds") or {}), vantage=parse_vantage(o),
        conditional=o.get("conditional", True), confirm=o.get("confirm", True), include=include,
        ignore_selectors=tuple(ignore.selectors or ()) if ignore else (),
        ignore_text=tuple(ignore.text or ()) if ignore else (),
        type=o.get("type"), json=_json_spec(o.get("json_")), render=_render(o.get("render")),
        canary=(canary.expect, canary.within) if canary is not None else None,
        notify=_notify_rules(o.get("notify")), every=o.get("every"),
    )


def _key(model: WatchModel, keep: tuple[str, ...], drop: tuple[str, ...]) -> str:
    """The watch's key: given, or its canonical URL (the URL's own string when they are the same,
    as they mostly are: one string a watch, not two)."""
    if model.key is not None:
        return model.key
    assert model.url is not None
    key = canonical_url(model.url, keep=keep, drop=drop)
    return model.url if key == model.url else key


def _render(model: RenderModel | bool | None) -> RenderOptions | None:
    if isinstance(model, RenderModel):
        return parse_render(model.model_dump(exclude_none=True))
    return parse_render(model)


def _notify_rules(models: list[NotifyModel] | None) -> tuple[NotifyRule, ...]:
    return tuple(NotifyRule(tuple({d.id: d for d in (destination(u) for u in m.urls)}.values()),
                            _condition(m.when),
                            frozenset(m.kinds) if m.kinds is not None else None)
                 for m in models or ())


def _condition(when: str | CrossingModel | None) -> Condition | None:
    if isinstance(when, CrossingModel):
        return parse_condition(when.crossing, crossing=True)
    return parse_condition(when) if when is not None else None


def _quoted(when: Condition) -> str:
    return f"{{crossing: {str(when)!r}}}" if when.crossing else repr(str(when))


def _unknown_fields(watch: Watch) -> str | None:
    """Why a ``when:`` of *watch* cannot be told (it names a field the watch does not track)."""
    tracked = watch.tracked_fields
    for rule in watch.notify:
        missing = [f for f in (rule.when.fields if rule.when is not None else ()) if f not in tracked]
        if missing and rule.when is not None:
            has = (f"its fields: {', '.join(sorted(tracked))}" if tracked
                   else "it has none: a condition compares fields of jsonld, fields or json")
            return (f"notify.when {_quoted(rule.when)} names {', '.join(map(repr, missing))}, which this watch does "
                    f"not track ({has})")
    return None


def own_text_options(model: WatchOptionsModel) -> tuple[str, ...]:
    """The text options (include, ignore) a watch (or a rule) gives itself a value, not through
    its defaults; a ``null`` gives none (it unsets the option)."""
    return tuple(o for o in ("include", "ignore") if getattr(model, o) is not None)


def merged_problems(watch: Watch, own: tuple[str, ...]) -> list[str]:
    """What is wrong with *watch* that only its options merged with the defaults show (*own*: the
    text options it gives itself); duplicate keys aside. Both readers of a watchlist ask this:
    :func:`parse_watchlist` and the spider's, watch by watch (:mod:`.spool`)."""
    found = _page_problems(watch, own)
    for n, rule in enumerate(watch.rules):
        found.extend(f"rules.{n}: {why}" for why in _page_problems(rule.watch, rule.text_options))
    return found


def _page_problems(watch: Watch, own: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    if not watch.compares_text and own:
        found.append(f"{' and '.join(own)} appl{'y' if len(own) > 1 else 'ies'} to text watches; this one is "
                     "compared by jsonld, fields, entities or json")
    html_given = [name for name in HTML_OPTIONS if getattr(watch, name)]
    if why := html_options_conflict(watch.type, watch.json is not None, html_given):  # with the defaults' options
        return [*found, why]
    if why := _unknown_fields(watch):
        found.append(why)
    return found


def parse_watchlist(data: Any, source: str = "watchlist") -> list[Watch]:
    """Validate a loaded watchlist document (any value) into watches with the watchlist's model
    (:class:`~changewatch.watchlist.model.WatchlistModel`). Raises
    :class:`WatchlistError` listing every problem, one a line, and nothing else."""
    try:
        document = WatchlistModel.model_validate(data)
    except ValidationError as exc:
        raise WatchlistError("\n".join(f"{source}: {line}" for line in problems(exc, data))) from None
    except RecursionError:
        raise WatchlistError(f"{source}: nested too deeply to be a watchlist") from None
    # Each watch's model is let go as soon as its Watch is built: a long watchlist is held once
    # more, not twice, at the peak (models ~1.1 KB a watch, watches ~0.6 KB).
    defaults, models = document.defaults, list(document.watches)
    del document
    models.reverse()
    watches: list[Watch] = []
    own: list[tuple[str, ...]] = []  # the text options each watch gives itself
    while models:
        model = models.pop()
        watches.append(_watch(defaults, model))
        own.append(own_text_options(model))
    seen: dict[str, int] = {}
    found: list[str] = []  # problems only the merged options show, and duplicate keys
    for i, watch in enumerate(watches):
        found.extend(f"{source}: {describe_watch(i, data['watches'][i])}: {why}"
                     for why in merged_problems(watch, own[i]))
        if watch.key in seen:
            found.append(f"{source}: {describe_watch(i, data['watches'][i])}: duplicate key {watch.key!r} "
                         f"(also watch #{seen[watch.key] + 1}); give one of them its own key")
        seen.setdefault(watch.key, i)
    if found:
        raise WatchlistError("\n".join(found))
    return watches


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a mapping that names a key twice: the last one silently won
    (a watch's second `fields:` replaced its first)."""


#: the same with libyaml's parser, where PyYAML has it (its wheels do): a 20,000-watch list loads
#: in ~2.6 s, not ~4.5, and ~12 MB smaller at its peak; the constructor, Python in both, is the
#: same safe one. A document it refuses is read again by PyYAML's own parser, whose message
#: quotes the line and names what it found (libyaml's gives a line and column only), and which
#: refuses nesting as deep as before (libyaml stops at 1,000 levels).
_FastUniqueKeyLoader: type[yaml.CSafeLoader] | None = None
if hasattr(yaml, "CSafeLoader"):
    class _CUniqueKeyLoader(yaml.CSafeLoader):
        __doc__ = _UniqueKeyLoader.__doc__
    _FastUniqueKeyLoader = _CUniqueKeyLoader


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # "<<: *defaults": keys given next to it override merged ones, as YAML means
        key = loader.construct_object(key_node, deep=deep)
        try:
            duplicate = key in seen
        except TypeError:  # an unhashable key: the constructor below says so
            duplicate = False
        if duplicate:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark, f"found duplicate key {key!r}", key_node.start_mark)
        if not isinstance(key, list | dict):
            seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)
if _FastUniqueKeyLoader is not None:
    _FastUniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


def _load_yaml(text: str) -> Any:
    """*text* as YAML, duplicate keys refused: libyaml's parser first, PyYAML's for its message."""
    if _FastUniqueKeyLoader is not None:
        try:
            return yaml.load(text, Loader=_FastUniqueKeyLoader)
        except (yaml.YAMLError, UnicodeError, RecursionError):
            pass  # read again below: what PyYAML says of it is what the user is told
    return yaml.load(text, Loader=_UniqueKeyLoader)


def _unique_json(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def load_watchlist(path: str | Path) -> list[Watch]:
    """Read a YAML or JSON watchlist file (JSON when its name ends in ``.json``). Raises
    :class:`WatchlistError` (unreadable, not YAML/JSON, nested too deeply, or invalid) and
    nothing else."""
    p = Path(path)
    return parse_watchlist_text(read_text(p), str(p), is_json=p.suffix.lower() == ".json")


def read_text(path: Path) -> str:
    """A watchlist file's text; :class:`WatchlistError` when it cannot be read as UTF-8."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WatchlistError(f"cannot read watchlist {path}: {exc}") from exc


def parse_watchlist_text(text: str, source: str, *, is_json: bool) -> list[Watch]:
    """A watchlist document's text, JSON or YAML, validated; *source* names it in errors.
    Raises :class:`WatchlistError` and nothing else."""
    try:
        data = (json.loads(text, object_pairs_hook=_unique_json) if is_json
                else _load_yaml(text))
    except (ValueError, yaml.YAMLError) as exc:
        raise WatchlistError(f"watchlist {source} is not valid {'JSON' if is_json else 'YAML'}: {exc}") from exc
    except RecursionError:
        raise WatchlistError(f"watchlist {source} is nested too deeply to be a watchlist") from None
    if is_json and isinstance(data, list) and source == INLINE:
        data = {"watches": data}  # -a watchlist='[{"url": ...}]': the watches alone
    return parse_watchlist(data, source)
