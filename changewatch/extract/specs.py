"""What to extract: :class:`FieldSpec` (one value) and :class:`Entities` (a set of things on a page).

A spec is checked when it is built, so a typo in a selector stops a spider at start with the
field's name instead of turning into a quiet "matched nothing" on every page.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from ..core.comparisons.base import spec_digest
from ..core.selectors import SelectorError, check_selector, is_xpath
from ..core.values import FIELD_KINDS, infer_kind

__all__ = ["SOURCES", "Entities", "FieldSpec", "FieldSpecError", "as_field", "as_fields"]

#: where a value comes from: selectors, or structured data through extruct
SOURCES = ("css", "xpath", "jsonld", "microdata", "schema", "opengraph")
_STRUCTURED = ("jsonld", "microdata", "schema")
_LABELS = {"jsonld": "JSON-LD", "microdata": "microdata", "schema": "JSON-LD/microdata"}


class FieldSpecError(ValueError):
    """A field or entity spec cannot be used (invalid selector, unknown kind…)."""


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One tracked value.

    ``source``: ``css``/``xpath`` (a selector; an element gives its visible text), ``jsonld``,
    ``microdata`` or ``schema`` (JSON-LD, then microdata: a dotted ``query`` path in the first
    node of one of ``types``), ``opengraph`` (a property such as ``product:price:amount``).
    ``kind`` says how values compare (:data:`~changewatch.core.values.FIELD_KINDS`); structured
    paths get theirs from the schema.org property (``offers.price`` is a price). ``required``:
    matching nothing is an error (a redesign, a blocked page), never a change to None.
    ``many``: selectors give every match as a list instead of the first.
    """

    source: str
    query: str
    types: tuple[str, ...] = ()
    kind: str = "auto"
    required: bool = True
    many: bool = False

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise FieldSpecError(f"unknown field source {self.source!r}; known: {', '.join(SOURCES)}")
        if self.kind not in FIELD_KINDS:
            raise FieldSpecError(f"unknown field kind {self.kind!r}; known: {', '.join(sorted(FIELD_KINDS))}")
        if not isinstance(self.query, str) or not self.query.strip():
            raise FieldSpecError(f"a {self.source} field needs a non-empty query, not {self.query!r}")
        if self.source in ("css", "xpath"):
            try:
                check_selector(self.query)
            except SelectorError as exc:
                raise FieldSpecError(str(exc)) from None
            if is_xpath(self.query) != (self.source == "xpath"):
                raise FieldSpecError(f"{self.query!r} is not a {self.source.upper()} selector")

    @classmethod
    def select(cls, query: str, *, kind: str = "auto", required: bool = True, many: bool = False) -> FieldSpec:
        """A CSS selector, or XPath when *query* starts with ``/`` or ``(`` (as in watchlists)."""
        return cls("xpath" if is_xpath(query) else "css", query, kind=kind, required=required, many=many)

    @classmethod
    def css(cls, query: str, *, kind: str = "auto", required: bool = True, many: bool = False) -> FieldSpec:
        return cls("css", query, kind=kind, required=required, many=many)

    @classmethod
    def xpath(cls, query: str, *, kind: str = "auto", required: bool = True, many: bool = False) -> FieldSpec:
        return cls("xpath", query, kind=kind, required=required, many=many)

    @classmethod
    def jsonld(cls, types: str | tuple[str, ...] | list[str], path: str, *, kind: str | None = None,
               required: bool = True) -> FieldSpec:
        return cls._structured("jsonld", types, path, kind, required)

    @classmethod
    def microdata(cls, types: str | tuple[str, ...] | list[str], path: str, *, kind: str | None = None,
                  required: bool = True) -> FieldSpec:
        return cls._structured("microdata", types, path, kind, required)

    @classmethod
    def schema(cls, types: str | tuple[str, ...] | list[str], path: str, *, kind: str | None = None,
               required: bool = True) -> FieldSpec:
        """JSON-LD first, microdata when the page has no JSON-LD node of *types*."""
        return cls._structured("schema", types, path, kind, required)

    @classmethod
    def path(cls, path: str, *, kind: str | None = None, required: bool = True) -> FieldSpec:
        """A dotted path relative to the node at hand (for the fields of structured entities)."""
        return cls._structured("schema", (), path, kind, required)

    @classmethod
    def opengraph(cls, prop: str, *, kind: str = "auto", required: bool = True) -> FieldSpec:
        return cls("opengraph", prop, kind=kind, required=required)

    @classmethod
    def _structured(cls, source: str, types: str | tuple[str, ...] | list[str], path: str, kind: str | None,
                    required: bool) -> FieldSpec:
        names = (types,) if isinstance(types, str) else tuple(types)
        return cls(source, path, names, kind or infer_kind(path), required)

    @property
    def structured(self) -> bool:
        return self.source in _STRUCTURED

    def describe(self) -> str:
        """How the field is found, for error messages: ``p.stock``, ``JSON-LD Product offers.price``."""
        if self.source in ("css", "xpath"):
            return self.query
        if self.source == "opengraph":
            return f"OpenGraph {self.query}"
        return " ".join(filter(None, (_LABELS[self.source], "/".join(self.types), self.query)))

    def fingerprint(self, kind: str | None = None) -> str:
        """How the field is read (source, types, query, kind, many), as a short stable digest: an
        observation says it per field (``options["field_specs"]``), so a field whose selector or
        path was edited starts afresh instead of "changing". *kind*: the kind it is compared as,
        when the spider overrides this spec's."""
        return _fingerprint(self, kind or self.kind)


@lru_cache(maxsize=4096)
def _fingerprint(spec: FieldSpec, kind: str) -> str:
    # once per spec, not once per page: a watch's specs are the same on every run
    return spec_digest([spec.source, list(spec.types), spec.query, kind, spec.many])


def as_field(spec: FieldSpec | str, *, structured: bool = False) -> FieldSpec:
    """*spec* as a FieldSpec: a string is a selector, or with *structured* a path in the node at hand."""
    if isinstance(spec, FieldSpec):
        return spec
    if isinstance(spec, str):
        return FieldSpec.path(spec) if structured else FieldSpec.select(spec)
    raise FieldSpecError(f"a field is a FieldSpec or a selector string, not {spec!r}")


def as_fields(specs: Mapping[str, FieldSpec | str], *, structured: bool = False,
              owner: str = "") -> dict[str, FieldSpec]:
    """Every spec as a FieldSpec; an error names the field (and *owner*, e.g. ``spider 'shop'``)."""
    out: dict[str, FieldSpec] = {}
    for name, spec in specs.items():
        try:
            out[str(name)] = as_field(spec, structured=structured)
        except FieldSpecError as exc:
            raise FieldSpecError(f"{owner + ': ' if owner else ''}field {name!r}: {exc}") from None
    return out


@dataclass(frozen=True, slots=True)
class Entities:
    """A set of things on a page, compared per entity (added, removed, changed).

    :meth:`select`: one element per entity, ``key`` and ``fields`` are selectors relative to it.
    :meth:`structured`: one JSON-LD/microdata node of ``types`` per entity (the products of a
    category page, the per-size offers of a product), ``key`` and ``fields`` are paths in it.
    Keys that are URLs are joined with the page URL and canonicalised; other keys (a SKU) are
    kept as they are.
    """

    key: FieldSpec
    fields: dict[str, FieldSpec] = field(default_factory=dict)
    selector: str | None = None
    types: tuple[str, ...] = ()

    @classmethod
    def select(cls, selector: str, *, key: FieldSpec | str,
               fields: Mapping[str, FieldSpec | str] | None = None) -> Entities:
        try:
            check_selector(selector)
            key_field = as_field(key)
        except (SelectorError, FieldSpecError) as exc:
            raise FieldSpecError(f"entities: {exc}") from None
        return cls(key_field, as_fields(fields or {}), selector=selector)

    @classmethod
    def structured(cls, types: str | tuple[str, ...] | list[str], *, key: FieldSpec | str,
                   fields: Mapping[str, FieldSpec | str] | None = None) -> Entities:
        names = (types,) if isinstance(types, str) else tuple(types)
        if not names:
            raise FieldSpecError("entities: structured entities need a type")
        return cls(as_field(key, structured=True), as_fields(fields or {}, structured=True), types=names)

    def describe(self) -> str:
        return f"selector {self.selector!r}" if self.selector else f"JSON-LD/microdata type {'/'.join(self.types)}"

    def kinds(self) -> dict[str, str]:
        return {name: f.kind for name, f in self.fields.items() if f.kind != "auto"}

    def fingerprint(self) -> str:
        """How the set is read (selector or types, key, fields), as a short stable digest: an
        observation says it (``options["entities_spec"]``), so an edited entity set starts afresh."""
        return spec_digest([self.selector, list(self.types), self.key.fingerprint(),
                            {name: f.fingerprint() for name, f in self.fields.items()}])
