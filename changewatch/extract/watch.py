"""Reading a watch's page: the observation a watchlist's :class:`~changewatch.watchlist.Watch`
makes of its response, by content type (HTML here, a feed here, any other document in the
worker: core/documents.py)."""

from __future__ import annotations

from scrapy.http import Response, TextResponse

from ..core.documents import json_too_large
from ..items import Observation
from ..watchlist import Watch
from .content_types import BINARY, detect_type, media_type
from .feeds import FEED_KINDS, FeedError, is_feed, parse_feed
from .page import Page, given_encoding
from .selectors import binary_body
from .specs import Entities, FieldSpec

__all__ = ["observe_document", "observe_feed", "observe_page", "observe_watch", "watch_specs"]


def watch_specs(watch: Watch) -> tuple[dict[str, FieldSpec], Entities | None]:
    """The field and entity specs of a watch: JSON-LD (then microdata) paths and selectors."""
    kinds = watch.kinds
    fields: dict[str, FieldSpec] = {}
    entities: Entities | None = None
    spec = watch.jsonld
    if spec is not None and spec.key is not None:
        # Several products on one page (a category grid, per-size offers): one entity per node.
        entities = Entities.structured(spec.types, key=spec.key, fields={
            path: FieldSpec.path(path, kind=kinds.get(path)) for path in spec.fields})
    elif spec is not None:
        fields.update({path: FieldSpec.schema(spec.types, path, kind=kinds.get(path)) for path in spec.fields})
    fields.update({name: FieldSpec.select(query, kind=kinds.get(name, "auto")) for name, query in watch.fields.items()})
    if watch.entities is not None:
        e = watch.entities
        entities = Entities.select(e.selector, key=e.key, fields={
            name: FieldSpec.select(query, kind=kinds.get(name, "auto")) for name, query in e.fields.items()})
    return fields, entities


def _content_type(response: Response) -> str | None:
    value = response.headers.get(b"Content-Type")
    return value.decode("latin-1") if value else None


def observe_feed(watch: Watch, response: Response) -> Observation:
    """*watch* observed in a feed *response*: its entries as an entity set, with no options needed.
    A body that is not a feed after all (HTML served as RSS, broken XML) is an ``error``."""
    options = {**watch.options(), "kinds": {**FEED_KINDS, **watch.kinds},
               # how the entities were read: another reading (a selector, a JSON path) starts afresh
               "entities_spec": "feed"}
    obs = Observation(key=watch.key, url=response.url, options=options)
    try:
        obs.entities = parse_feed(response.body, url=response.url, content_type=_content_type(response))
    except FeedError as exc:
        obs.error = str(exc)
    return obs


def observe_watch(watch: Watch, response: Response) -> tuple[Observation, int]:
    """The observation of *watch* in *response*, and the number of invalid JSON-LD blocks."""
    obs, page = observe_page(watch, response)
    return obs, page.invalid_jsonld_blocks if page is not None else 0


def observe_page(watch: Watch, response: Response) -> tuple[Observation, Page | None]:
    """The observation of *watch* in *response*, and the page it was read from (its invalid
    JSON-LD blocks and undecodable bytes, for stats; None for a document read in the worker
    or a feed). The response is read as its content type says (the watch's ``type``; else a
    feed when is_feed says so, else detect_type): an HTML page or a feed here, any other
    document in the worker (observe_document)."""
    declared = watch.type or ("json" if watch.json is not None else None)
    content_type = _content_type(response)
    if declared == "feed" or (declared is None and watch.compares_text and is_feed(content_type, response.body)):
        return observe_feed(watch, response), None
    if watch.reads_html:
        return _observe_page(watch, response)
    kind = declared or detect_type(content_type, response.body, response.url)
    if kind == "html":
        return _observe_page(watch, response)
    return observe_document(watch, response, kind, media_type(content_type)), None


def _observe_page(watch: Watch, response: Response) -> tuple[Observation, Page]:
    page = Page(response)
    if watch.compares_text:
        obs = page.observe(watch.key, text=True, region=watch.region, options=watch.options())
        return obs, page
    fields, entities = watch_specs(watch)
    obs = page.observe(watch.key, fields or None, entities=entities, region=watch.region,
                       options=watch.options())
    # Watches compared by fields do not compare their text: only the region's presence matters.
    obs.html = None
    return obs, page


def observe_document(watch: Watch, response: Response, kind: str, media: str) -> Observation:
    """An observation carrying the response's bytes, to be read in the worker as *kind* says
    (core/documents.py; "bytes": hashed whole, core/comparisons/bytes.py). Only what the first
    bytes and the size tell is decided here, on the crawl's thread."""
    options = {**watch.options(), "content_type": kind}
    obs = Observation(key=watch.key, url=response.url, options=options)
    body = response.body
    if kind == BINARY:
        what = binary_body(body) or "binary data"
        obs.error = (f"unsupported: {media or 'no Content-Type'} ({what}); `type: bytes` watches its hash and size")
    elif kind != "bytes" and (not body or body.isspace()):
        obs.error = "empty: the response body is empty"
    elif kind in ("json", "text") and (binary := binary_body(body)):
        obs.error = f"unsupported: {binary}, not {kind} (Content-Type: {media or 'none'})"
    elif kind == "json":
        obs.error = json_too_large(len(body))  # not even shipped to a worker
    if obs.error:
        return obs
    obs.body = body
    obs.encoding = given_encoding(response) if isinstance(response, TextResponse) else None
    if kind == "json" and watch.json is not None:
        spec = watch.json
        obs.options["json"] = spec.options()
        obs.options["kinds"] = dict(watch.kinds)
        if spec.fields:  # how each field is read: an edited path starts afresh
            obs.options["field_specs"] = {path: f"json:{path}" for path in spec.fields}
        if spec.entities is not None:
            obs.options["entities_spec"] = f"json:{spec.entities.path or ''}|{spec.entities.key}"
    return obs
