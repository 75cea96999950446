"""The watchlist's one model (docs/watchlist.md): what a watchlist may say. The crawl validates
every watchlist with it, and the JSON Schema that editors check a watchlist with as it is typed
(``changewatch/watchlist.schema.json``, printed by ``changewatch schema``) is generated from it.

Every rule the crawl applies is also in the schema (annotations here: patterns for URLs, proxies,
header and cookie names and values, Accept-Language; "something besides whitespace" for key and
region; a jsonld.key needs a jsonld.type), except these, which only the crawl checks:

- a CSS/XPath selector (``fields``, ``entities``), ``region`` or ``ignore.selectors`` compiles, and an
  ``ignore.text`` regular expression compiles and does not match an empty line;
- a watch compared by ``jsonld``, ``fields`` or ``entities`` gives no ``include`` or ``ignore`` of
  its own (they apply to text watches; under ``defaults``, to the text watches only);
- two watches have different keys (a given key, or the canonical URL);
- a watch's `type` or `json` and the options `defaults` give it that read HTML pages (`region`,
  `fields`, `entities`, `jsonld`) go together (given in the watch itself, the schema checks it);
- no mapping names a key twice (the YAML/JSON parser refuses it, before the model);
- a mapping's names are text: a YAML name read as a boolean, null or decimal number (``yes:``,
  ``1.5:``) is refused, and any number as a header or cookie name (a whole number is a field or kind
  name: ``1:`` is "1"); JSON, and so the schema, has only text names;
- a host in brackets, in ``url`` or ``proxy``, is an IP address (``[::1]``, not ``[shop]``);
- a site watch's ``allow``, ``deny``, ``follow`` and each rule's ``match`` compile as regular
  expressions, and each rule's options merged with the watch's pass the checks above;
- a ``notify`` URL is one Apprise can send to (the schema checks only its ``scheme://`` shape), and
  its ``when`` condition (text, or ``{crossing: text}``) parses and names only fields the watch tracks.

tests/watchlist/test_watchlist_schema.py holds the crawl and the schema to this, both ways."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    StrictBool,
    StrictInt,
    StrictStr,
    WithJsonSchema,
    model_validator,
)

from ..core.durations import parse_duration
from ..core.json_paths import check_path
from ..core.render_options import BLOCKABLE
from ..core.reprs import short_repr
from ..core.selectors import SelectorError, check_selector
from ..core.text.lxml_walker import RegionError, check_region
from ..core.text.options import INCLUDE_PARTS, TextOptionsError, check_pattern
from ..core.text.options import check_selector as check_ignore_selector
from ..core.values import FIELD_KINDS
from ..core.vantage import (
    ACCEPT_LANGUAGE_PATTERN,
    COOKIE_VALUE_FORBIDDEN,
    HEADER_VALUE_FORBIDDEN,
    NAME_FORBIDDEN,
    PROXY_PATTERN,
    parse_vantage,
)

__all__ = ["HTML_OPTIONS", "CanaryModel", "CrossingModel", "EntitiesModel", "IgnoreModel", "JsonEntitiesModel",
           "JsonLdModel", "JsonModel", "NotifyModel", "RenderModel", "RuleModel", "SiteModel", "WatchModel",
           "WatchOptionsModel",
           "WatchlistModel", "html_options_conflict",
           "watchlist_schema"]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _strict(title: str) -> ConfigDict:
    # unknown keys are errors; the title is what an editor shows for the mapping
    return ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True, title=title)


_NAME = {"type": "string", "minLength": 1}
#: a string with something in it besides whitespace
_NOT_BLANK = r"\S"
#: an absolute http(s) URL with a host (a name, or an address in brackets) and no whitespace, the
#: scheme in any case (as urlsplit reads it)
URL_PATTERN = (r"^\s*[hH][tT][tT][pP][sS]?://(?:[^\s/?#\[\]]*@)?(?:\[[^\s/?#@\[\]]+\]|[^\s/?#@:\[\]]+)"
               r"(?::[^\s/?#@\[\]]*)?(?:[/?#]\S*)?\s*$")


def _selector(value: str) -> str:
    try:
        check_selector(value)
    except SelectorError as exc:
        raise ValueError(str(exc)) from None
    return value


def _region(value: str) -> str:
    try:
        check_region(value)
    except RegionError as exc:
        raise ValueError(str(exc)) from None
    return value


def _text_option(check: Callable[[str], None]) -> Callable[[str], str]:
    def validate(value: str) -> str:
        try:
            check(value)
        except TextOptionsError as exc:
            raise ValueError(str(exc).split(": ", 1)[1]) from None  # the path names the option
        return value
    return validate


def _url(value: str) -> str:
    url = value.strip()
    if any(char.isspace() for char in url):  # it would fail only when fetched, if at all
        raise ValueError(f"url must not contain spaces (encode them as %20): {short_repr(value)}")
    parts = urlsplit(url)
    # the pattern too: what the schema refuses, the crawl refuses (a ']' before a '[' in the host)
    if parts.scheme not in ("http", "https") or not parts.hostname or not re.match(URL_PATTERN, url):
        raise ValueError(f"url must be an absolute http(s) URL, not {short_repr(value)}")
    return url


def _render_selector(value: str) -> str:
    if not value.strip():
        raise ValueError("wait_for must be a CSS selector, not blank")
    try:
        check_ignore_selector(value)  # CSS only (the browser's querySelector)
    except TextOptionsError as exc:
        raise ValueError(str(exc).split(": ", 1)[1]) from None  # the path names the option
    return value.strip()


def _render_flag(value: Any) -> Any:
    # `render: true` is the default rendering, `render: false` none; a mapping says how
    if value is True:
        return {}
    return None if value is False else value


def _or_boolean(schema: dict[str, Any]) -> None:
    alternatives = schema["anyOf"]
    assert isinstance(alternatives, list)
    alternatives.insert(0, {"type": "boolean"})
#: a duration as core/durations.py reads it: a number of seconds, or numbers with units largest
#: first, each once (the crawl also refuses 0, which the second schema below spells out)
_N = r"(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)"
DURATION_PATTERN = rf"^\s*(?:{_N}|(?={_N}[dhms])(?:{_N}d)?(?:{_N}h)?(?:{_N}m)?(?:{_N}s)?)\s*$"
_EVERY_SCHEMA = {"anyOf": [{"type": "number", "exclusiveMinimum": 0},
                           {"type": "string", "pattern": DURATION_PATTERN, "not": {"pattern": "^[\\s0.dhms]*$"}}]}


def _every(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str) or (
            isinstance(value, str) and not value.isascii()):
        raise ValueError(f"every: {short_repr(value)} is not a duration (seconds, or 90s, 10m, 6h, 7d, 1h30m)")
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise ValueError(f"every: {exc}") from None


def _one_or_more(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _nothing(value: Any) -> Any:
    # Before this model (up to 0.x), an empty list, string or mapping here meant "none", as if
    # the option were left out; a watchlist that says so keeps working.
    return None if isinstance(value, str | list | dict) and not value else value


def _name(value: Any) -> Any:
    # `fields: {1: h1::text}` names the field "1", as it always did; true, 1.5 or null is refused
    # (their text depends on how YAML spelled them: put the name in quotes).
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _whole(value: Any) -> Any:
    # 3.0 is the whole number 3, as JSON (and so the schema's "integer") counts it
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _key(value: Any) -> Any:
    # A bare number is a key too (`key: 1234`, `key: 1234.0`); a bool is not.
    value = _whole(value)
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


#: a key: something besides whitespace, and no '|' (which joins a site watch's key to its pages' URLs)
_KEY_PATTERN = r"^[^|]*[^|\s][^|]*$"


def _no_separator(value: str) -> str:
    if "|" in value:
        raise ValueError(f"key must not contain '|' (it joins a site watch's key to its pages' URLs): "
                         f"{short_repr(value)}")
    return value


def _stripped(accepts: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not value.strip():
            raise ValueError(f"key must be {accepts}, not {value!r}")
        return value.strip()
    return check


def _vantage(name: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        parse_vantage({name: value})  # its ValueError names the option and what is wrong
        return value
    return check


def _kind(value: str) -> str:
    if value not in FIELD_KINDS:
        raise ValueError(f"unknown kind {value!r}; known: {', '.join(sorted(FIELD_KINDS))}")
    return value


Selector = Annotated[StrictStr, AfterValidator(_selector), Field(
    description="A CSS selector, or XPath when it starts with / or (", examples=["span.price::text", "//h1/text()"])]
_STRINGS_SCHEMA = {"anyOf": [_NAME, {"type": "array", "items": _NAME, "minItems": 1}]}
Strings = Annotated[list[Annotated[StrictStr, Field(min_length=1)]], BeforeValidator(_one_or_more),
                    Field(min_length=1),
                    WithJsonSchema(_STRINGS_SCHEMA)]
#: keep_params, drop_params, jsonld.type: as Strings, or nothing (null, "" or [])
OptionalStrings = Annotated[Strings | None, BeforeValidator(_nothing), WithJsonSchema(
    {"anyOf": [{"type": "string"}, {"type": "array", "items": _NAME}, {"type": "null"}]})]
Name = Annotated[StrictStr, BeforeValidator(_name)]
Kind = Annotated[StrictStr, AfterValidator(_kind), WithJsonSchema({"type": "string", "enum": sorted(FIELD_KINDS)})]


def _pairs_schema(forbidden: str) -> dict[str, Any]:
    # names are tokens, values strings without the *forbidden* characters, or numbers
    return {"type": "object", "propertyNames": {"minLength": 1, "not": {"pattern": NAME_FORBIDDEN}},
            "additionalProperties": {"anyOf": [{"type": "string", "not": {"pattern": forbidden}}, {"type": "number"}]}}


_HEADERS_SCHEMA, _COOKIES_SCHEMA = _pairs_schema(HEADER_VALUE_FORBIDDEN), _pairs_schema(COOKIE_VALUE_FORBIDDEN)
#: a jsonld.key (not null) needs a type that is some type (not null, "" or [])
_KEY_NEEDS_TYPE: dict[str, Any] = {"if": {"required": ["key"], "properties": {"key": {"type": "string"}}},
                                   "then": {"required": ["type"], "properties": {"type": _STRINGS_SCHEMA}}}


class JsonLdModel(BaseModel):
    """Fields from the first JSON-LD (else microdata) node of `type`; with `key`, every node of
    `type` is an entity under that key."""

    model_config = ConfigDict(**_strict("JSON-LD fields"), json_schema_extra=_KEY_NEEDS_TYPE)
    type: OptionalStrings = Field(None, description="A schema.org type or a list of them", examples=["Product"])
    fields: Strings = Field(description="Dotted paths in the node; `a|b` takes the first that matches",
                            examples=[["name", "offers.price", "offers.availability"]])
    key: Annotated[StrictStr, AfterValidator(_stripped("a dotted path such as 'sku' or 'url'")),
                   WithJsonSchema({"type": "string", "pattern": _NOT_BLANK})] | None = Field(
        None, description="A path in each node (`sku`, `url`, `@id`): every node of `type` is an entity under it",
        examples=["sku"])

    @model_validator(mode="after")
    def _key_needs_type(self) -> JsonLdModel:
        if self.key is not None and not self.type:
            raise ValueError("jsonld.key needs a jsonld.type: every node of that type is one entity")
        return self


class EntitiesModel(BaseModel):
    """An entity set: one node per entity, its key and its fields."""

    model_config = _strict("Entity set")
    selector: Selector = Field(description="Matches one node per entity", examples=["article.listing"])
    key: Selector = Field(description="Relative to the entity's node: its URL (joined and canonicalised)",
                          examples=["a.title::attr(href)"])
    fields: Annotated[dict[Name, Selector] | None, BeforeValidator(_nothing)] = Field(
        None, description="Per-entity selectors, by name",
        examples=[{"title": "h2::text", "price": "span.price::text"}])


_INCLUDE_SCHEMA = {"type": "string", "enum": list(INCLUDE_PARTS)}
Include = Annotated[list[Annotated[StrictStr, WithJsonSchema(_INCLUDE_SCHEMA)]], BeforeValidator(_one_or_more),
                    Field(min_length=1), WithJsonSchema(
                        {"anyOf": [_INCLUDE_SCHEMA, {"type": "array", "items": _INCLUDE_SCHEMA, "minItems": 1}]})]


def _include_part(value: list[str]) -> list[str]:
    for part in value:
        if part not in INCLUDE_PARTS:
            raise ValueError(f"include: unknown part {part!r}; known: {', '.join(INCLUDE_PARTS)}")
    return value


IgnoreSelector = Annotated[StrictStr, AfterValidator(_text_option(check_ignore_selector)), Field(min_length=1)]
IgnorePattern = Annotated[StrictStr, AfterValidator(_text_option(check_pattern)), Field(min_length=1)]


class IgnoreModel(BaseModel):
    """What of a text watch's page is irrelevant: elements, and lines of its text."""

    model_config = ConfigDict(**_strict("Ignored parts"), json_schema_extra={"minProperties": 1})
    selectors: Annotated[list[IgnoreSelector], BeforeValidator(_one_or_more), Field(min_length=1),
                         WithJsonSchema(_STRINGS_SCHEMA)] = Field(
        default_factory=list, description="CSS selectors: matching elements are removed before the text is taken",
        examples=[[".banner", "#cookie-notice"]])
    text: Annotated[list[IgnorePattern], BeforeValidator(_one_or_more), Field(min_length=1),
                    WithJsonSchema(_STRINGS_SCHEMA)] = Field(
        default_factory=list, description="Regular expressions (Python's re.search, case-sensitive unless (?i)): "
        "matching lines are removed", examples=[[r"^Visitors: \d+"]])

    @model_validator(mode="after")
    def _something(self) -> IgnoreModel:
        if not self.selectors and not self.text:
            raise ValueError("ignore needs selectors, text or both")
        return self


#: a JSON Pointer (~ escapes only ~0 and ~1), or dotted names, none empty
JSON_PATH_PATTERN = r"^(?:/(?:[^~]|~[01])*|[^./][^.]*(?:\.[^.]+)*)$"
JsonPath = Annotated[StrictStr, AfterValidator(check_path), WithJsonSchema(
    {"type": "string", "minLength": 1, "pattern": JSON_PATH_PATTERN}), Field(
    description="A dotted path (`product.price`, `items.0.id`) or a JSON Pointer (`/items/0/id`)",
    examples=["product.price", "/items/0/id"])]
_JSON_PATH_SCHEMA = {"type": "string", "minLength": 1, "pattern": JSON_PATH_PATTERN}
JsonPaths = Annotated[list[JsonPath], BeforeValidator(_one_or_more), Field(min_length=1), WithJsonSchema(
    {"anyOf": [_JSON_PATH_SCHEMA, {"type": "array", "items": _JSON_PATH_SCHEMA, "minItems": 1}]})]


class JsonEntitiesModel(BaseModel):
    """An entity set from a JSON array: one element per entity, keyed by a path inside it."""

    model_config = _strict("JSON entity set")
    path: JsonPath | None = Field(None, description="The array (default: the document itself)", examples=["items"])
    key: JsonPath = Field(description="A path inside each element: its identity", examples=["id"])
    fields: JsonPaths | None = Field(None, description="Paths inside each element, compared per entity "
                                                       "(default: every member of the element)",
                                     examples=[["name", "price"]])


class JsonModel(BaseModel):
    """Fields and an entity set of a JSON document, by path."""

    model_config = ConfigDict(**_strict("JSON fields"), json_schema_extra={"anyOf": [
        {"required": [name], "properties": {name: {"not": {"type": "null"}}}} for name in ("fields", "entities")]})
    fields: JsonPaths | None = Field(None, description="Paths of tracked values, each a field named as written",
                                     examples=[["product.price", "/items/0/id"]])
    entities: JsonEntitiesModel | None = Field(None, description="An entity set from an array")

    @model_validator(mode="after")
    def _something(self) -> JsonModel:
        if not self.fields and self.entities is None:
            raise ValueError("json needs fields or entities (or leave it out: the document is compared as text)")
        return self


Blockable = Literal["image", "font", "media", "stylesheet", "texttrack", "manifest"]
assert get_args(Blockable) == BLOCKABLE
_BLOCKABLE_SCHEMA = {"type": "string", "enum": list(BLOCKABLE)}


class RenderModel(BaseModel):
    """How a page is rendered in a browser before it is read."""

    model_config = _strict("Rendering")
    wait_for: Annotated[StrictStr, AfterValidator(_render_selector),
                        WithJsonSchema({"type": "string", "pattern": _NOT_BLANK})] | None = Field(
        None, description="A CSS selector: the page is read once an element matches it (else a timeout error)",
        examples=["#price"])
    timeout: Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)] | None = Field(
        None, description="Seconds the whole render may take (default: CHANGEWATCH_RENDER_TIMEOUT)", examples=[20])
    block: Annotated[list[Blockable], BeforeValidator(_one_or_more), WithJsonSchema(
        {"anyOf": [_BLOCKABLE_SCHEMA, {"type": "array", "items": _BLOCKABLE_SCHEMA}]})] | None = Field(
        None, description="Resource types not loaded (default: image, font, media; [] loads everything)",
        examples=[["image", "font", "media"]])
def _apprise_url(value: str) -> str:
    from ..core.destinations import DestinationError, destination

    try:
        destination(value)
    except DestinationError as exc:
        raise ValueError(str(exc)) from None  # it names the URL without its secrets
    return value.strip()


def _condition(value: str, where: str = "when") -> str:
    from ..core.conditions import ConditionError, parse_condition

    try:
        parse_condition(value)
    except ConditionError as exc:
        raise ValueError(f"{where}: {exc}") from None
    return value


class CrossingModel(BaseModel):
    """``when: {crossing: CONDITION}``: fire only when the condition did not hold before and does now."""

    model_config = _strict("Crossing condition")
    crossing: str


_CONDITION_SCHEMA = {"type": "string", "pattern": _NOT_BLANK}
_WHEN_SCHEMA = {"anyOf": [_CONDITION_SCHEMA, {
    "type": "object", "title": "Crossing condition", "properties": {"crossing": _CONDITION_SCHEMA},
    "required": ["crossing"], "additionalProperties": False,
    "description": "Fire only when the condition did not hold on the previous observation and holds now"}]}


def _when(value: Any) -> str | CrossingModel:
    # validated by hand, not as a union of models: one line about what is wrong, not one per form
    if isinstance(value, str):
        return _condition(value)
    if isinstance(value, dict):
        unknown = [str(k) for k in value if k != "crossing"]
        if unknown:
            raise ValueError(f"when: unknown option {unknown[0]} of a crossing condition; write "
                             "{crossing: 'offers.price < 80'} and nothing else")
        if "crossing" not in value:
            raise ValueError("when: an empty mapping; write {crossing: 'offers.price < 80'}")
        if not isinstance(value["crossing"], str):
            raise ValueError(f"when.crossing must be a condition such as 'offers.price < 80', not "
                             f"{short_repr(value['crossing'])}")
        return CrossingModel(crossing=_condition(value["crossing"], "when.crossing"))
    raise ValueError(f"when must be a condition such as 'offers.price < 80' or {{crossing: 'offers.price < 80'}}, "
                     f"not {short_repr(value)}")


def _notify_rules(value: Any) -> Any:
    # one URL, a list of URLs and rules, or one rule: always a list of rules
    if isinstance(value, str):
        return [{"urls": [value]}]
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        if value and all(isinstance(v, str) for v in value):
            return [{"urls": value}]
        return [{"urls": [v]} if isinstance(v, str) else v for v in value]
    return value


#: an Apprise URL's shape (the crawl also asks Apprise whether it can send to it)
APPRISE_URL_PATTERN = r"^\s*[A-Za-z][A-Za-z0-9+.-]*://\S*\s*$"
_APPRISE_URL_SCHEMA = {"type": "string", "pattern": APPRISE_URL_PATTERN}
_NOTIFY_KINDS = ["field", "entities", "content", "error", "moved", "recovered"]
AppriseUrl = Annotated[StrictStr, AfterValidator(_apprise_url), WithJsonSchema(_APPRISE_URL_SCHEMA)]


class NotifyModel(BaseModel):
    """Where this watch's changes are sent (Apprise URLs), which kinds, and on what condition."""

    model_config = _strict("Notification")
    urls: Annotated[list[AppriseUrl], BeforeValidator(_one_or_more), Field(min_length=1), WithJsonSchema(
        {"anyOf": [_APPRISE_URL_SCHEMA, {"type": "array", "items": _APPRISE_URL_SCHEMA, "minItems": 1}]})] = Field(
        description="Apprise URLs: mailto://, slack://, msteams://, discord://, json:// (a webhook)…",
        examples=[["mailto://alerts:password@example.com", "json://hooks.example/changewatch"]])
    when: Annotated[str | CrossingModel, PlainValidator(_when), WithJsonSchema(_WHEN_SCHEMA)] | None = Field(
        None, description="Send only changes whose field values satisfy this now (comparisons < <= > >= == != "
        "joined by and/or), or, as {crossing: …}, only those that make it true",
        examples=["offers.price < 80", "availability == InStock", {"crossing": "offers.price < 80"}])
    kinds: Annotated[list[Literal["field", "entities", "content", "error", "moved", "recovered"]],
                     BeforeValidator(_one_or_more), Field(min_length=1), WithJsonSchema(
                         {"anyOf": [{"type": "string", "enum": _NOTIFY_KINDS},
                                    {"type": "array", "items": {"type": "string", "enum": _NOTIFY_KINDS},
                                     "minItems": 1}]})] | None = Field(
        None, description="Only these kinds of change (default: every kind)", examples=[["field"]])


_NOTIFY_MODEL_SCHEMA = NotifyModel.model_json_schema()  # no models inside it: no $defs
_NOTIFY_RULE_SCHEMA = {"anyOf": [_APPRISE_URL_SCHEMA, _NOTIFY_MODEL_SCHEMA]}
Notify = Annotated[list[NotifyModel], BeforeValidator(_notify_rules), Field(min_length=1), WithJsonSchema(
    {"anyOf": [_APPRISE_URL_SCHEMA, _NOTIFY_MODEL_SCHEMA,
               {"type": "array", "items": _NOTIFY_RULE_SCHEMA, "minItems": 1}]})]


#: options that read an HTML page (selectors, structured data): not for another declared type
HTML_OPTIONS = ("region", "jsonld", "fields", "entities", "render")


def html_options_conflict(declared: str | None, has_json: bool, html_options: list[str]) -> str | None:
    """Why options that read HTML pages cannot go with the declared type or `json` (None: they can)."""
    if html_options and (declared not in (None, "html") or has_json):
        return f"{', '.join(html_options)} read HTML pages, not a {declared or 'json'} document"
    return None


# ---- canary (health): a watch the watcher is itself judged by (docs/health.md) ----
_NUMBER = r"(?:\d+(?:\.\d+)?|\.\d+)"
#: a duration as core.durations reads it: seconds, or numbers with units d, h, m, s, largest first
DURATION_PATTERN = rf"^\s*(?:{_NUMBER}|(?=\S)(?:{_NUMBER}d)?(?:{_NUMBER}h)?(?:{_NUMBER}m)?(?:{_NUMBER}s)?)\s*$"


def _duration(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"a duration (2d, 36h, 90m, or seconds), not {short_repr(value)}")
    seconds = parse_duration(value)  # its ValueError says what is wrong
    if seconds < 60:
        raise ValueError(f"within must be a minute or more, not {short_repr(value)}")
    return seconds


class CanaryModel(BaseModel):
    """The watch is a canary: the watcher warns (``health: canary: …``) when it does not behave so."""

    model_config = _strict("Canary")
    expect: Literal["change", "no_change"] = Field(
        description="change: it must change at least once within `within`; no_change: it must not change")
    within: Annotated[Any, AfterValidator(_duration), WithJsonSchema({"anyOf": [
        {"type": "number", "minimum": 60}, {"type": "string", "pattern": DURATION_PATTERN}]})] = Field(
        description="A duration: 2d, 36h, 90m (units d, h, m, s, largest first) or seconds (at least a minute)",
        examples=["2d"])
# ---- end of canary ----


def _unset_to(default: bool) -> Callable[[Any], Any]:
    # null unsets a true-or-false option: its default (a rule's null undoes the site watch's value)
    return lambda value: default if value is None else value


_FLAG_SCHEMA = WithJsonSchema({"type": ["boolean", "null"]})
FlagOff = Annotated[StrictBool, BeforeValidator(_unset_to(False)), _FLAG_SCHEMA]
FlagOn = Annotated[StrictBool, BeforeValidator(_unset_to(True)), _FLAG_SCHEMA]


class WatchOptionsModel(BaseModel):
    """Options of a watch; under `defaults`, applied to every watch (a watch's own value wins)."""

    model_config = _strict("Watch options")
    region: Annotated[StrictStr, AfterValidator(_region),
                      WithJsonSchema({"type": "string", "pattern": _NOT_BLANK})] | None = Field(
        None, description="CSS selector: compare only the text inside the matching elements", examples=["main article"])
    threshold: Annotated[Annotated[StrictInt, Field(ge=0, le=64)], BeforeValidator(_whole)] | None = Field(
        None, description="A text change of at most this many simhash bits (0-64) is noise", examples=[3])
    sort_lines: FlagOff = Field(False, description="Sort the text's lines before comparing (shuffling lists)")
    jsonld: JsonLdModel | None = Field(None, description="Fields from JSON-LD or microdata")
    fields: Annotated[dict[Name, Selector], Field(min_length=1)] | None = Field(
        None, description="Fields from CSS or XPath selectors, by name", examples=[{"stock": "p.stock::text"}])
    entities: EntitiesModel | None = Field(None, description="An entity set compared as a set (added/removed/changed)")
    keep_params: OptionalStrings = Field(None, description="Query parameters to keep in canonical URLs")
    drop_params: OptionalStrings = Field(None, description="More query parameters to strip from canonical URLs")
    kinds: Annotated[dict[Name, Kind], Field(min_length=1)] | None = Field(
        None, description="How a field compares, by field name", examples=[{"offers.price": "price"}])
    conditional: FlagOn = Field(True, description="Re-visits are conditional requests (false: never trust 304s)")
    confirm: FlagOn = Field(True, description="A change is loaded once more and reported only as both loads "
                                "show it (false: reported from one load)")
    type: Literal["html", "json", "feed", "text", "pdf", "bytes"] | None = Field(
        None, description="How to read the response (default: from its Content-Type, its first bytes, its URL)")
    # `json`, which would shadow BaseModel.json
    json_: JsonModel | None = Field(None, alias="json", description="Fields and an entity set of a JSON document, "
                                                                    "by path (implies type json)")
    proxy: Annotated[Any, AfterValidator(_vantage("proxy")),
                     WithJsonSchema({"type": "string", "pattern": PROXY_PATTERN})] | None = Field(
        None, description="Fetch through this http(s) proxy, always", examples=["http://user:pass@proxy.example:8080"])
    headers: Annotated[Any, AfterValidator(_vantage("headers")), WithJsonSchema(_HEADERS_SCHEMA)] | None = Field(
        None, description="More request headers, by name")
    cookies: Annotated[Any, AfterValidator(_vantage("cookies")), WithJsonSchema(_COOKIES_SCHEMA)] | None = Field(
        None, description="Cookies sent with the request, by name", examples=[{"currency": "CHF"}])
    accept_language: Annotated[Any, AfterValidator(_vantage("accept_language")),
                               WithJsonSchema({"type": "string", "pattern": ACCEPT_LANGUAGE_PATTERN})] | None = Field(
        None, description="The Accept-Language the site answers in", examples=["de-CH,de;q=0.9"])
    include: Annotated[Include, AfterValidator(_include_part)] | None = Field(
        None, description="Text watches: compare what the visible text leaves out too (title; meta: description, "
        "og:title, og:description, canonical link; links: a[href], img[src], form[action] targets, as a set)",
        examples=[["title", "links"]])
    ignore: IgnoreModel | None = Field(None, description="Text watches: elements and lines of text to leave out")
    render: Annotated[RenderModel | None, BeforeValidator(_render_flag)] = Field(
        None, json_schema_extra=_or_boolean, description="Render the page in a browser (JavaScript) before reading "
        "it: true, or how (docs/rendering.md); re-checked first, rendered only when it may have changed",
        examples=[True, {"wait_for": "#price", "timeout": 20}])
    notify: Notify | None = Field(None, description="Send this watch's changes after the crawl: an Apprise URL, a "
                                  "list of them, or rules with urls, when and kinds", examples=[
                                      {"urls": "mailto://alerts:password@example.com", "when": "offers.price < 80"}])
    every: Annotated[Any, AfterValidator(_every), WithJsonSchema(_EVERY_SCHEMA)] | None = Field(
        None, description="Fetch the page once this long after its last fetch, and not sooner (a duration: seconds, "
        "or 90s, 10m, 6h, 7d, 1h30m), whether or not CHANGEWATCH_SCHEDULE_ENABLED schedules the others; not bounded "
        "by CHANGEWATCH_SCHEDULE_MIN_INTERVAL, and at most CHANGEWATCH_SCHEDULE_MAX_INTERVAL", examples=["6h"])


# ---- a site watch: the pages of a site, found from its sitemap or by following its links ----
def _not_null(value: Any) -> Any:
    if value is None:
        raise ValueError("must not be null (leave it out)")
    return value


def _regex(value: str) -> str:
    try:
        re.compile(value)
    except (re.error, RecursionError, OverflowError) as exc:
        raise ValueError(f"{short_repr(value)} is not a regular expression: {exc}") from None
    return value


Regex = Annotated[StrictStr, Field(min_length=1), AfterValidator(_regex)]
Regexes = Annotated[Annotated[list[Regex], BeforeValidator(_one_or_more), Field(min_length=1)] | None,
                    BeforeValidator(_not_null), WithJsonSchema(_STRINGS_SCHEMA)]
Url = Annotated[StrictStr, AfterValidator(_url), WithJsonSchema({"type": "string", "pattern": URL_PATTERN})]
_SITE_SCHEMA: dict[str, Any] = {"oneOf": [{"required": ["sitemap"], "not": {"anyOf": [{"required": [n]} for n in (
    "start", "follow", "depth")]}}, {"required": ["start"], "not": {"required": ["sitemap"]}}]}


class SiteModel(BaseModel):
    """A whole site: its pages found from its sitemap, or by following links from start URLs."""

    model_config = ConfigDict(**_strict("Site"), json_schema_extra=_SITE_SCHEMA)
    sitemap: Annotated[Url | None, BeforeValidator(_not_null), WithJsonSchema(
        {"type": "string", "pattern": URL_PATTERN})] = Field(
        None, description="A sitemap, a sitemap index (.xml or .xml.gz), or robots.txt (its Sitemap: lines)",
        examples=["https://docs.example/sitemap.xml"])
    start: Annotated[Annotated[list[Url], BeforeValidator(_one_or_more), Field(min_length=1)] | None,
                     BeforeValidator(_not_null), WithJsonSchema({"anyOf": [
                         {"type": "string", "pattern": URL_PATTERN},
                         {"type": "array", "items": {"type": "string", "pattern": URL_PATTERN}, "minItems": 1}]})
                     ] = Field(None, description="Link mode: the URL (or URLs) whose links are followed",
                                      examples=["https://blog.example/"])
    allow: Regexes = Field(None, description="Regular expressions searched in each URL found: the pages "
                                  "watched (and, in link mode, followed); default: every page", examples=[["/guide/"]])
    deny: Regexes = Field(None, description="Regular expressions: URLs never requested",
                                 examples=[["/archive/"]])
    follow: Regexes = Field(None, description="Link mode: pages requested to find more pages, not watched",
                                   examples=[[r"/page/\d+$"]])
    depth: Annotated[Annotated[StrictInt, Field(ge=0, le=100)] | None, BeforeValidator(_whole),
                     BeforeValidator(_not_null), WithJsonSchema({"type": "integer", "minimum": 0, "maximum": 100})
                     ] = Field(None, description="Link mode: link hops from a start URL (default 3)", examples=[3])
    max_pages: Annotated[Annotated[StrictInt, Field(ge=1, le=1_000_000)] | None, BeforeValidator(_whole),
                         BeforeValidator(_not_null), WithJsonSchema(
                             {"type": "integer", "minimum": 1, "maximum": 1_000_000})] = Field(
        None, description="At most this many pages are watched, the first in a stable order (default 10000)",
        examples=[10000])
    every: Annotated[Annotated[Any, AfterValidator(_every)] | None, BeforeValidator(_not_null),
                     WithJsonSchema(_EVERY_SCHEMA)] = Field(
        None, description="How often the page set is discovered again (a duration; default: every run)",
        examples=["1d"])

    @model_validator(mode="after")
    def _one_way(self) -> SiteModel:
        if (self.sitemap is None) == (self.start is None):
            raise ValueError("site needs a sitemap or start URLs, not both" if self.sitemap
                             else "site needs a sitemap or start URLs")
        link_only = [name for name in ("follow", "depth") if getattr(self, name) is not None]
        if self.sitemap is not None and link_only:
            raise ValueError(f"site: {' and '.join(link_only)} appl{'y' if len(link_only) > 1 else 'ies'} to link "
                             "mode (start), not to a sitemap")
        return self


class RuleModel(WatchOptionsModel):
    """Page options for the pages of a site watch whose URL `match` finds (the first rule that
    matches wins); each option given replaces the site watch's, null unsets it."""

    model_config = _strict("Page rule")
    match: Regex = Field(description="A regular expression searched in the page's URL", examples=["/blog/"])


def _a_page_or_a_site_schema(schema: dict[str, Any]) -> None:
    schema["oneOf"] = [
        {"required": ["url"], "not": {"anyOf": [{"required": ["site"]}, {"required": ["rules"]}]}},
        {"required": ["site", "key"], "not": {"anyOf": [{"required": ["url"]}, {"required": ["canary"]}]}}]
    properties = schema["properties"]
    assert isinstance(properties, dict)
    for name in ("site", "rules"):  # null is refused
        given = properties[name]
        given["anyOf"] = [alternative for alternative in given["anyOf"] if alternative != {"type": "null"}]
        given.pop("default", None)
        given.pop("minLength", None)
    properties["rules"]["anyOf"][0]["minItems"] = 1
# ---- end of a site watch ----


class WatchModel(WatchOptionsModel):
    """One page to watch: its URL, an optional key and its options; or, with `site` and no
    `url`, every page of a site."""

    model_config = ConfigDict(**_strict("Watch"), json_schema_extra=_a_page_or_a_site_schema)

    @model_validator(mode="after")
    def _a_page_or_a_site(self) -> WatchModel:
        if self.site is None:
            if self.rules is not None:
                raise ValueError("rules apply to the pages of a site watch: give site, or leave rules out")
            if self.url is None:
                raise ValueError("url is required (or site, to watch a whole site)")
            return self
        if self.url is not None:
            raise ValueError("a site watch has no url: its pages are found from site.sitemap or site.start")
        if self.key is None:
            raise ValueError("a site watch needs a key: its pages' keys start with it")
        if self.canary is not None:
            raise ValueError("canary applies to a watch of one page, not to a site watch")
        return self

    @model_validator(mode="after")
    def _options_of_its_type(self) -> WatchModel:
        if self.json_ is not None and self.type not in (None, "json"):
            raise ValueError(f"json needs type json, not {self.type}")
        given = [name for name in HTML_OPTIONS if getattr(self, name)]
        if why := html_options_conflict(self.type, self.json_ is not None, given):
            raise ValueError(why)
        return self
    url: Annotated[Url | None, BeforeValidator(_not_null), WithJsonSchema(
        {"type": "string", "pattern": URL_PATTERN})] = Field(
        None, description="The page to fetch: an absolute http(s) URL, spaces encoded as %20",
        examples=["https://example.com/terms"])
    key: Annotated[StrictStr, BeforeValidator(_key), AfterValidator(_stripped("a non-empty string")),
                   AfterValidator(_no_separator),
                   WithJsonSchema({"type": ["string", "integer"], "pattern": _KEY_PATTERN})] | None = Field(
        None, description="The identity in the store (default: the canonical URL); keep it stable; no '|'",
        examples=["example-terms"])
    site: Annotated[SiteModel | None, BeforeValidator(_not_null)] = Field(
        None, description="Watch every page of a site (with a key, and no url): the page options apply to each page")
    rules: Annotated[list[RuleModel] | None, BeforeValidator(_not_null), Field(min_length=1)] = Field(
        None, description="A site watch: page options by URL pattern; the first rule whose match finds the URL wins")
    canary: CanaryModel | None = Field(
        None, description="Warn when this watch (not `defaults`) does not behave as expected: "
        "{expect: change, within: 2d} or {expect: no_change, within: 7d}")


def _or_nothing(schema: dict[str, Any]) -> None:
    # defaults: [] and defaults: "" meant no defaults before the model (see _nothing)
    alternatives = schema["anyOf"]
    assert isinstance(alternatives, list)
    alternatives.extend(({"const": []}, {"const": ""}))


class WatchlistModel(BaseModel):
    """A changewatch watchlist: the pages the generic `watch` spider compares on every run."""

    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True, title="changewatch watchlist",
                              json_schema_extra={"examples": [{"defaults": {"threshold": 3}, "watches": [
                                  {"url": "https://example.com/terms", "key": "example-terms",
                                   "region": "main article"}]}]})
    defaults: Annotated[WatchOptionsModel | None, BeforeValidator(_nothing)] = Field(
        None, description="Options applied to every watch (not url or key)",
        json_schema_extra=_or_nothing)
    watches: list[WatchModel] = Field(min_length=1, description="The pages to watch")


#: every option a watch may have, and those `defaults` may give
WATCH_OPTIONS = frozenset(info.alias or name for name, info in WatchModel.model_fields.items())
DEFAULT_OPTIONS = frozenset(info.alias or name for name, info in WatchOptionsModel.model_fields.items())


def _page_options_once(schema: dict[str, Any]) -> None:
    """The page options written once, in ``$defs/WatchOptionsModel``: ``defaults``, a watch and a
    rule refer to it and add their own members (``unevaluatedProperties`` refuses any other name,
    as ``additionalProperties`` did where every option was repeated)."""
    defs = schema["$defs"]
    options = defs["WatchOptionsModel"]
    shared = options["properties"]
    del options["additionalProperties"]  # each user of the options says what else it allows
    ref = {"$ref": "#/$defs/WatchOptionsModel"}
    for name in ("RuleModel", "WatchModel"):
        model = defs[name]
        inherited = {option: model["properties"].pop(option) for option in shared}
        assert inherited == shared, f"{name} words a page option otherwise than WatchOptionsModel"
        del model["additionalProperties"]
        defs[name] = {**ref, **model, "unevaluatedProperties": False}
    alternatives = schema["properties"]["defaults"]["anyOf"]
    alternatives[alternatives.index(ref)] = {**ref, "unevaluatedProperties": False}


def watchlist_schema() -> str:
    """The JSON Schema of a watchlist, as shipped in ``changewatch/watchlist.schema.json``."""
    schema = {"$schema": SCHEMA_DIALECT, **WatchlistModel.model_json_schema()}
    _page_options_once(schema)
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
