"""A watch as the crawl reads it per request: plain frozen dataclasses (attribute access stays
cheap on the hot path), built from the watchlist's model by :mod:`.loading`."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.conditions import Condition
from ..core.destinations import Destination
from ..core.render_options import RenderOptions
from ..core.text.normalise import NORMALISER_VERSION
from ..core.vantage import Vantage

if TYPE_CHECKING:
    from .site import PageRule, SiteSpec

__all__ = ["EntitySpec", "JsonEntitiesSpec", "JsonLdSpec", "JsonSpec", "NotifyRule", "Watch"]

@dataclass(frozen=True, slots=True)
class JsonLdSpec:
    types: tuple[str, ...]
    fields: tuple[str, ...]
    #: a path in each node: every node of the types is an entity under this key
    key: str | None = None


@dataclass(frozen=True, slots=True)
class EntitySpec:
    selector: str
    key: str
    fields: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class JsonEntitiesSpec:
    key: str
    #: the array's path (None: the document itself)
    path: str | None = None
    #: paths in each element (None: every member of the element)
    fields: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class JsonSpec:
    """The `json` option: fields and an entity set of a JSON document, by path."""

    fields: tuple[str, ...] = ()
    entities: JsonEntitiesSpec | None = None

    def options(self) -> dict[str, Any]:
        """As the observation's ``options["json"]`` (read in the worker, core/documents.py)."""
        e = self.entities
        return {"fields": list(self.fields), "entities": None if e is None else {
            "path": e.path, "key": e.key, "fields": None if e.fields is None else list(e.fields)}}


@dataclass(frozen=True, slots=True)
class NotifyRule:
    """One ``notify:`` entry of a watch: *destinations* are sent its changes of *kinds* (None:
    every kind) for which *when* holds (None: always; a condition makes a change without the
    field values it names not match)."""

    destinations: tuple[Destination, ...]
    when: Condition | None = None
    kinds: frozenset[str] | None = None

    def guarded(self) -> NotifyRule:
        """The rule with its destinations under the SSRF policy (a watchlist fetched by URL)."""
        return dataclasses.replace(self, destinations=tuple(dataclasses.replace(d, guarded=True)
                                                            for d in self.destinations))


@dataclass(frozen=True, slots=True)
class Watch:
    url: str
    key: str
    region: str | None = None
    threshold: int | None = None
    sort_lines: bool = False
    jsonld: JsonLdSpec | None = None
    fields: dict[str, str] = field(default_factory=dict)
    entities: EntitySpec | None = None
    keep_params: tuple[str, ...] = ()
    drop_params: tuple[str, ...] = ()
    kinds: dict[str, str] = field(default_factory=dict)
    vantage: Vantage = field(default_factory=Vantage)
    conditional: bool = True
    #: a change is loaded once more and reported only as both loads show it (CHANGEWATCH_CONFIRM_CHANGES);
    #: not part of the spec: it reads nothing
    confirm: bool = True
    #: text watches: what the text leaves out, compared too (title, meta, links)
    include: tuple[str, ...] = ()
    #: text watches: elements (CSS selectors) and lines (regular expressions) left out
    ignore_selectors: tuple[str, ...] = ()
    ignore_text: tuple[str, ...] = ()
    #: the declared content type (None: from the response, extract/content_types.py)
    type: str | None = None
    json: JsonSpec | None = None
    #: fetched once this many seconds after its last fetch, not sooner (None: whenever crawled, or
    #: when the adaptive schedule says); not part of the spec: it does not change how a page is read
    every: float | None = None
    #: a canary: (expect, within in seconds) (docs/health.md); how the page is read does not depend on it
    canary: tuple[str, float] | None = None
    #: rendered in a browser before it is read (None: fetched as it is)
    render: RenderOptions | None = None
    #: where its changes are sent after the crawl (not part of :meth:`spec`: it reads nothing)
    notify: tuple[NotifyRule, ...] = ()
    #: :meth:`spec`, when it is known already (a watch read from a spool shares its options', which
    #: do not depend on the URL or the key); not part of the watch
    known_spec: str | None = field(default=None, compare=False, repr=False)
    #: a site watch: how its pages are found (its ``url`` is the sitemap or the first start URL;
    #: its page options apply to every page, :func:`.site.page_watch`)
    site: SiteSpec | None = None
    #: a site watch: page options by URL pattern, the first that matches wins
    rules: tuple[PageRule, ...] = ()
    #: a site page's watch: the site watch's key
    site_watch: str | None = None

    @property
    def tracked_fields(self) -> frozenset[str]:
        """The fields its changes carry (a ``when:`` condition may name them)."""
        names = set(self.fields) | set(self.json.fields if self.json is not None else ())
        if self.jsonld is not None and self.jsonld.key is None:
            names |= set(self.jsonld.fields)
        return frozenset(names)

    def spec(self) -> str:
        """A digest of how this watch fetches and reads its page: when it changes (a new field,
        another region, another vantage point), an unchanged page must still be fetched in full
        once, not answered with a 304. So must the first run of a version that reads pages
        differently (NORMALISER_VERSION): its first comparison must see the page, not a 304."""
        if self.known_spec is not None:
            return self.known_spec
        parts: tuple[Any, ...] = (
            NORMALISER_VERSION, self.region, self.sort_lines, self.jsonld, sorted(self.fields.items()),
            self.entities, self.keep_params, self.drop_params, sorted(self.kinds.items()), self.vantage)
        # options added later join only when set: the spec of every other watch stays as it was
        if self.include or self.ignore_selectors or self.ignore_text:
            parts += (self.include, self.ignore_selectors, self.ignore_text)
        if self.type is not None or self.json is not None:
            parts += (self.type, self.json)
        if self.render is not None:
            parts += (self.render.fingerprint(),)
        return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:16]

    @property
    def compares_text(self) -> bool:
        """A watch with jsonld, fields, entities or json is compared by those; otherwise by its text."""
        return self.jsonld is None and not self.fields and self.entities is None and self.json is None

    @property
    def reads_html(self) -> bool:
        """Whether the watch's options read an HTML page (selectors, structured data, a region):
        its response is read as one whatever its type, as before content types."""
        return self.type in (None, "html") and self.json is None and (not self.compares_text or bool(self.region))

    def options(self) -> dict[str, Any]:
        # "type": the declared type, None when automatic (how an edit of it is told from another)
        options: dict[str, Any] = {"threshold": self.threshold, "sort_lines": self.sort_lines, "type": self.type,
                                   "keep_params": list(self.keep_params), "drop_params": list(self.drop_params)}
        if self.include:
            options["include"] = list(self.include)
        if self.ignore_selectors or self.ignore_text:
            options["ignore"] = {"selectors": list(self.ignore_selectors), "text": list(self.ignore_text)}
        if self.canary is not None:
            options["canary"] = {"expect": self.canary[0], "within": self.canary[1]}
        if self.render is not None:  # a page read rendered is read another way: its text starts afresh
            options["rendered"] = True
        return options
