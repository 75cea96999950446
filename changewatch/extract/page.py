"""A response as a spider sees it: selectors, structured data, and :meth:`Page.observe`, which
turns field and entity specs into an :class:`~changewatch.items.Observation` whose ``error``
names the selector or path that stopped matching (never a field that "changed to None")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from parsel import Selector
from scrapy.crawler import Crawler
from scrapy.http import Response, TextResponse
from w3lib.encoding import http_content_type_encoding

from ..core.comparisons.base import spec_digest
from ..core.selectors import SelectorError, select
from ..core.text.decoding import escape_undecodable
from ..items import Observation
from ..runtime.stats import Stats
from .observe import moved_from
from .selectors import binary_body, select_value, value_of
from .specs import Entities, FieldSpec, FieldSpecError, as_fields
from .structured import StructuredData, find_nodes, structured_data

__all__ = ["Extraction", "Page", "count_undecodable_page", "given_encoding"]


@dataclass(slots=True)
class Extraction:
    """Extracted raw values, their kinds, entities, how each was read (``field_specs``,
    ``entities_spec``: the observation's options of those names) and what went wrong (one
    message each)."""

    fields: dict[str, Any] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    entities: list[dict[str, Any]] | None = None
    errors: list[str] = field(default_factory=list)
    field_specs: dict[str, str] = field(default_factory=dict)
    entities_spec: str | None = None

    @property
    def error(self) -> str | None:
        return "; ".join(self.errors) if self.errors else None


def undecodable(response: TextResponse) -> str | None:
    """Why *response*'s text is garbage, when much of it did not decode (wrong or lying charset):
    comparing it would report a change that is only an encoding accident."""
    return _garbage(response, *decoded_text(response))


def decoded_text(response: TextResponse) -> tuple[str, int]:
    """Scrapy's ``response.text`` with each byte that did not decode a character of its own
    (changewatch.core.text.charset), not the same U+FFFD, and how many there were."""
    text = response.text
    if "\ufffd" not in text:  # every valid page: response.encoding (~0.15 ms) is not even asked
        return text, 0
    return escape_undecodable(response.body, response.encoding, text)


def _garbage(response: TextResponse, text: str, bad: int) -> str | None:
    if bad <= 16 or bad * 10 <= len(text):
        return None
    return f"unsupported: undecodable text ({bad} of {len(text)} characters are not valid {response.encoding})"


class Page:
    """Wraps a response once: parsed HTML and (lazily) its JSON-LD, microdata and OpenGraph.

    ``owner`` (e.g. ``spider 'shop'``) prefixes the errors of specs that fail at run time.
    """

    def __init__(self, response: Response, *, owner: str = ""):
        self.response = response
        self.url = response.url
        self.owner = owner
        # What can be said without decoding the body: a page compared by its text alone is
        # shipped to the worker as bytes and decoded there, off the crawl's thread.
        self.unsupported: str | None = None
        body = response.body
        if not isinstance(response, TextResponse) or binary_body(body):
            ctype = (response.headers.get(b"Content-Type") or b"").decode("latin-1")
            self.unsupported = (f"unsupported: {binary_body(body) or 'non-text response'} "
                                f"(Content-Type: {ctype or 'none'})")
        elif not body or body.isspace():
            self.unsupported = "empty: the response body is empty"
        self._text: str | None = None
        #: Bytes of the body that did not decode in its charset (known once ``text`` was read).
        self.undecodable = 0
        self._selector: Selector | None = None
        self._structured: StructuredData | None = None

    @property
    def text(self) -> str:
        """The body decoded (Scrapy's ``response.text``); on first use, a body that mostly did not
        decode (a wrong or lying charset) or is only whitespace makes the page unsupported."""
        if self._text is None:
            text = None
            if self.unsupported is None:
                assert isinstance(self.response, TextResponse)
                text, self.undecodable = decoded_text(self.response)
                if not text.strip():
                    self.unsupported = "empty: the response body is empty"
                else:
                    self.unsupported = _garbage(self.response, text, self.undecodable)
            self._text = text or "<html></html>"
        return self._text

    @property
    def selector(self) -> Selector:
        # Parsed on first use: a page compared by its text alone is parsed in the worker instead.
        if self._selector is None:
            # type="html": parsel would read a body that parses as JSON as a JSON document, which
            # CSS cannot query
            self._selector = Selector(text=self.text, base_url=self.url, type="html")
        return self._selector

    @property
    def structured(self) -> StructuredData:
        if self._structured is None:
            self._structured = structured_data(self.selector.root, self.url)
        return self._structured

    @property
    def invalid_jsonld_blocks(self) -> int:
        """JSON-LD blocks skipped as beyond repair (0 when the structured data was not needed)."""
        return self._structured.invalid_blocks if self._structured is not None else 0

    def nodes(self, *types: str) -> list[dict[str, Any]]:
        """JSON-LD then microdata nodes of one of *types*, wherever they are nested."""
        return self.structured.nodes(types)

    def node(self, *types: str) -> dict[str, Any] | None:
        found = self.nodes(*types)
        return found[0] if found else None

    # -- values -----------------------------------------------------------------------------------

    def _structured_nodes(self, spec: FieldSpec) -> list[dict[str, Any]]:
        data = self.structured
        if not spec.types:  # no type named: the top-level items
            if spec.source == "microdata" or (spec.source == "schema" and not data.jsonld):
                return [item for item in data.microdata if isinstance(item, dict)]
            return [item for item in data.jsonld if isinstance(item, dict)]
        if spec.source == "microdata":
            return find_nodes(data.microdata, spec.types)
        if spec.source == "jsonld":
            return find_nodes(data.jsonld, spec.types)
        return data.nodes(spec.types)

    def value(self, spec: FieldSpec | str, *, context: Selector | dict[str, Any] | None = None) -> Any:
        """The raw value of *spec* (None: nothing matched). *context*: the entity element or
        node that selectors and paths are relative to. Raises SelectorError on a bad selector."""
        spec = spec if isinstance(spec, FieldSpec) else FieldSpec.select(spec)
        if spec.source in ("css", "xpath"):
            sel = context if isinstance(context, Selector) else self.selector
            if spec.many:
                values = [value_of(match) for match in select(sel, spec.query)]
                return [v for v in values if v] or None
            value = select_value(sel, spec.query)
            return value if value else None
        if spec.source == "opengraph":
            return self.structured.opengraph.get(spec.query)
        # "offers.price|offers.lowPrice": the first path that matches (an AggregateOffer has no price)
        paths = [p.strip() for p in spec.query.split("|") if p.strip()]
        nodes = [context] if isinstance(context, dict) and not spec.types else self._structured_nodes(spec)
        for node in nodes:
            for path in paths:
                found = self.structured.resolve(node, path)
                if found is not None:
                    return found
        return None

    def _no_nodes(self, spec: FieldSpec) -> str:
        data = self.structured
        what = {"jsonld": "JSON-LD", "microdata": "microdata"}.get(spec.source, "JSON-LD or microdata")
        of_type = f" of type {'/'.join(spec.types)}" if spec.types else ""
        return (f"no {what} node{of_type} on the page ({len(data.jsonld)} JSON-LD items, "
                f"{data.invalid_blocks} invalid blocks, {len(data.microdata)} microdata items)")

    def extract(self, fields: Mapping[str, FieldSpec | str] | None = None, *,
                entities: Entities | None = None) -> Extraction:
        """Values of *fields* and the entity set of *entities*, with one error per spec that
        matched nothing (required fields only) or that could not run (an invalid selector)."""
        result = Extraction()
        owner = f"{self.owner}: " if self.owner else ""
        try:
            specs = as_fields(fields or {})
        except FieldSpecError as exc:
            result.errors.append(f"extraction: {owner}{exc}")
            return result
        no_nodes: dict[str, list[str]] = {}  # one message per missing node type, not one per field
        for name, spec in specs.items():
            try:
                value = self.value(spec)
            except (SelectorError, ValueError) as exc:
                result.errors.append(f"extraction: {owner}field {name!r}: {exc}")
                continue
            result.fields[name] = value
            result.field_specs[name] = spec.fingerprint()
            if spec.kind != "auto":
                result.kinds[name] = spec.kind
            if value is None and spec.required:
                if spec.structured and not self._structured_nodes(spec):
                    no_nodes.setdefault(self._no_nodes(spec), []).append(name)
                else:
                    result.errors.append(f"extraction: field {name!r} ({spec.describe()}) matched nothing")
        for why, names in no_nodes.items():
            result.errors.append(f"extraction: {why}: {', '.join(map(repr, names))} not found")
        if entities is not None:
            self._extract_entities(entities, result, owner)
        return result

    def _extract_entities(self, spec: Entities, result: Extraction, owner: str) -> None:
        contexts: list[Any]
        try:
            contexts = list(select(self.selector, spec.selector)) if spec.selector else self.nodes(*spec.types)
        except (SelectorError, ValueError) as exc:
            result.errors.append(f"extraction: {owner}entities: {exc}")
            return
        if not contexts:
            result.errors.append(f"extraction: entities {spec.describe()} matched nothing")
            return
        result.kinds.update(spec.kinds())
        result.entities_spec = spec.fingerprint()
        try:
            result.entities = [{"key": _scalar(self.value(spec.key, context=ctx)),
                                "fields": {n: self.value(f, context=ctx) for n, f in spec.fields.items()}}
                               for ctx in contexts]
        except (SelectorError, ValueError) as exc:
            result.errors.append(f"extraction: {owner}entities: {exc}")

    # -- observations -----------------------------------------------------------------------------

    def observe(self, key: str, fields: Mapping[str, FieldSpec | str] | None = None, *,
                entities: Entities | None = None, text: bool = False, region: str | None = None,
                kinds: Mapping[str, str] | None = None, options: Mapping[str, Any] | None = None) -> Observation:
        """An Observation of this page under *key*: *fields* and *entities* extracted, and with
        *text* (or a *region*) the page's text compared too. Any problem becomes ``error``."""
        obs = Observation(key=str(key), url=self.url, region=region, options=dict(options or {}),
                          moved_from=moved_from(self.response))
        if (fields or entities is not None) and self.unsupported is None:
            self.text  # noqa: B018 -- decoded for the selectors: may find the body undecodable
        if self.unsupported:
            obs.error = self.unsupported
            return obs
        extraction = self.extract(fields, entities=entities)
        if fields:
            obs.fields = extraction.fields
            # How each field was read (a kind the spider gives here overrides its spec's): a field
            # whose selector, path or kind was edited starts afresh, the others keep comparing.
            obs.options["field_specs"] = {
                name: spec_digest([spec, kinds[name]]) if kinds and name in kinds else spec
                for name, spec in extraction.field_specs.items()}
        if entities is not None:
            obs.entities = extraction.entities if extraction.entities is not None else []
            if extraction.entities_spec is not None:
                obs.options["entities_spec"] = extraction.entities_spec
        merged = {**extraction.kinds, **(kinds or {})}
        if merged:
            obs.options["kinds"] = {**obs.options.get("kinds", {}), **merged}
        if text or region:
            # The bytes and the encoding the response was given or its headers declare: decoded
            # (and checked for undecodable text) in the worker, not here on the crawl's thread.
            # Even reading response.encoding costs ~0.15 ms a page (it looks for a <meta> charset
            # in the first 4 KB, and decodes a page that declares none); the worker looks for the
            # same declarations, in the same order, and infers as Scrapy does: the same text as
            # response.text, which a page whose fields were extracted here ships as it is.
            assert isinstance(self.response, TextResponse)
            if self._text is not None:
                obs.html = self._text
            else:
                obs.html, obs.encoding = self.response.body, given_encoding(self.response)
        obs.error = extraction.error
        return obs


def count_undecodable_page(crawler: Crawler, page: Page) -> None:
    """``changewatch/charset/undecodable_pages``: a page decoded here (for its selectors) had
    bytes its charset does not have. A page compared by its text is decoded, and counted, in
    the worker (ContentComparison.counters)."""
    if page.undecodable:
        stats = Stats(crawler, "charset")
        stats.inc("undecodable_pages")


def given_encoding(response: TextResponse) -> str | None:
    """The encoding *response* was created with, or the charset of its Content-Type header."""
    given = getattr(response, "_encoding", None)  # TextResponse(encoding=...): Scrapy's own attribute
    if isinstance(given, str) and given:
        return given
    ctype = response.headers.get(b"Content-Type")
    return http_content_type_encoding(ctype.decode("latin-1")) if ctype else None


def _scalar(value: Any) -> Any:
    # An entity key found several times (an offer listing its url twice) is still one key.
    return value[0] if isinstance(value, list) and value else value
