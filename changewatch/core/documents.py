"""Documents that are not HTML pages (JSON, plain text, PDF), read into what the comparisons
compare: text kept line by line, or fields and entities found by JSON paths.

An observation of such a document carries the response's ``body`` and, in
``options["content_type"]``, how to read it; :func:`read_document` reads it in the worker
process (docs/architecture.md, "Reading a page in the worker"), never on the crawl's thread: a 50 MB JSON array
takes a second and some 600 MB to parse. What cannot be read is :class:`Unobservable`: an
``error`` record (``unsupported: …``, ``extraction: …``), never a change and never a baseline.
"""

from __future__ import annotations

import dataclasses
import io
import json
import time
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from .comparisons.base import Unobservable
from .comparisons.fields import FIELD_TYPES, MISSING_FIELDS
from .json_paths import MISSING, canonical_json, resolve, scalar
from .observation import Observation
from .text.decoding import decode_page

__all__ = ["DOCUMENT_TYPES", "JSON_MAX_BYTES", "PDF_MAX_PAGES", "PDF_MAX_SECONDS", "JsonExtraction", "decode_text",
           "json_document", "json_extraction", "json_too_large", "json_type", "pdf_text", "read_document"]

#: the content types read here; ``bytes`` is hashed whole (comparisons/bytes.py), html parsed as a page
DOCUMENT_TYPES = frozenset({"json", "text", "pdf"})
#: a larger JSON document is an error, not a memory spike. Measured on this project's 2-core
#: machine: 54 MB of small objects take 1.0 s and ~400 MB to parse, their canonical text 2.6 s and
#: ~700 MB more; at this limit (7.9 MB) a baseline takes 6-12 s and ~310-370 MB of a worker
#: (json.dumps with indent is pure Python, and every line of the text view holds a ':' the volatile
#: patterns must look at), well inside CHANGEWATCH_WORKER_TIMEOUT.
JSON_MAX_BYTES = 8 * 1024 * 1024
#: the pages of a PDF whose text is read; a longer one says so in its text's last line
PDF_MAX_PAGES = 300
#: reading a PDF's text stops with an error past this time (a hostile or pathological file)
PDF_MAX_SECONDS = 20.0


def decode_text(body: bytes, encoding: str | None) -> str:
    """*body* as text: its BOM first, then *encoding*, then UTF-8 if valid, else windows-1252.
    No BOM is left in the text."""
    return decode_page(body, encoding).lstrip("\ufeff")


def json_too_large(size: int) -> str | None:
    """Why a JSON document of *size* bytes is not parsed (None: it is)."""
    if size > JSON_MAX_BYTES:
        return f"unsupported: a JSON document of {size} bytes, over the {JSON_MAX_BYTES} bytes changewatch parses"
    return None


def json_document(body: bytes, encoding: str | None) -> Any:
    """*body* parsed as JSON. Raises :class:`Unobservable` (``unsupported: …``) for a body that is
    not JSON, naming where it stopped parsing, or that is too large to parse."""
    if why := json_too_large(len(body)):
        raise Unobservable(why)
    try:
        return json.loads(decode_text(body, encoding))
    except json.JSONDecodeError as exc:
        looks = " (it looks like HTML)" if body.lstrip()[:1] == b"<" else ""
        raise Unobservable(f"unsupported: not JSON{looks}: {exc.msg} at line {exc.lineno} column {exc.colno}") \
            from None
    except RecursionError:
        raise Unobservable("unsupported: JSON nested too deeply to read") from None


def _entity(element: Any, key_path: str, field_paths: list[str] | None) -> dict[str, Any]:
    key = resolve(element, key_path)
    if field_paths is None:  # every member of an object (an array's items by index)
        pairs = element.items() if isinstance(element, dict) else enumerate(element if isinstance(element, list)
                                                                               else [element])
        fields = {str(name): scalar(value) for name, value in pairs}
    else:
        fields = {path: scalar(value) for path in field_paths if (value := resolve(element, path)) is not MISSING}
    return {"key": None if key is MISSING or key is None else str(scalar(key)), "fields": fields}


def json_type(value: Any) -> str:
    """The JSON type of a parsed value: ``string``, ``number``, ``boolean``, ``null``, ``object``
    or ``array``.

    >>> [json_type(v) for v in ("10", 10, 1.5, True, None, {}, [])]
    ['string', 'number', 'number', 'boolean', 'null', 'object', 'array']
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "string"


@dataclass(frozen=True, slots=True)
class JsonExtraction:
    """What a ``json`` option read from a document: the fields (by path, named as written), their
    JSON types, the paths that matched nothing (path → why) and the entity set."""

    fields: dict[str, Any] | None = None
    types: dict[str, str] = dataclass_field(default_factory=dict)
    missing: dict[str, str] = dataclass_field(default_factory=dict)
    entities: list[dict[str, Any]] | None = None


def _missing(data: Any, path: str) -> str:
    top = json_type(data)
    article = "an" if top[0] in "aeiou" else "a"
    return f"json field {path!r} matched nothing" + ("" if top == "object" else f" (the document is {article} {top})")


def json_extraction(data: Any, spec: dict[str, Any]) -> JsonExtraction:
    """The fields and the entity set *spec* names in *data* (``{"fields": [...], "entities":
    {"path", "key", "fields"}}``). A field path that matches nothing is named in ``missing``
    (the fields comparison says it, and still compares the others); an entity set that cannot be
    read raises :class:`Unobservable` (``extraction: …``)."""
    fields: dict[str, Any] | None = None
    types: dict[str, str] = {}
    missing: dict[str, str] = {}
    if spec.get("fields"):
        fields = {}
        for path in spec["fields"]:
            value = resolve(data, path)
            if value is MISSING:
                missing[path] = _missing(data, path)
            else:
                fields[path] = scalar(value)
                types[path] = json_type(value)
    entities: list[dict[str, Any]] | None = None
    if (es := spec.get("entities")) is not None:
        path = es.get("path")
        array = data if path is None else resolve(data, path)
        if not isinstance(array, list):
            what = "matched nothing" if array is MISSING else f"is not an array (a {type(array).__name__})"
            raise Unobservable(f"extraction: json entities path {path or '(the document)'!r} {what}")
        entities = [_entity(element, es["key"], es.get("fields")) for element in array]
    return JsonExtraction(fields, types, missing, entities)


def pdf_text(body: bytes) -> str:
    """The text of a PDF, page by page (at most PDF_MAX_PAGES pages, for at most PDF_MAX_SECONDS).
    Raises :class:`Unobservable` (``unsupported: …``) for an encrypted, broken or textless PDF."""
    import pypdf  # in the workers only, and only for PDFs
    from pypdf.errors import PyPdfError

    started = time.monotonic()
    try:
        reader = pypdf.PdfReader(io.BytesIO(body), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unobservable("unsupported: PDF: encrypted (it needs a password)")
        pages = reader.pages
        count = len(pages)
        texts: list[str] = []
        for number in range(min(count, PDF_MAX_PAGES)):
            texts.append(pages[number].extract_text() or "")
            if time.monotonic() - started > PDF_MAX_SECONDS:
                raise Unobservable(f"unsupported: PDF: reading its text took over {PDF_MAX_SECONDS:g} s "
                                   f"(page {number + 1} of {count})")
    except Unobservable:
        raise
    except (PyPdfError, ValueError, TypeError, KeyError, IndexError, AttributeError, OSError, RecursionError,
            NotImplementedError, AssertionError, ZeroDivisionError) as exc:
        # pypdf raises many kinds of errors on broken files, not only its own
        raise Unobservable(f"unsupported: PDF: unreadable ({type(exc).__name__}: {str(exc)[:120]})") from None
    if count > PDF_MAX_PAGES:
        texts.append(f"[changewatch read the first {PDF_MAX_PAGES} of {count} pages]")
    text = "\n".join(texts)
    if not text.strip():
        raise Unobservable(f"unsupported: PDF: no text in {count} page{'s' * (count != 1)} (scanned images?)")
    return text


def read_document(obs: Observation) -> Observation:
    """*obs* with its document's ``body`` read into ``text``, ``fields`` or ``entities`` as its
    ``options["content_type"]`` says (*obs* itself when it has no such document). Raises
    :class:`Unobservable`."""
    kind = obs.options.get("content_type")
    if obs.body is None or kind not in DOCUMENT_TYPES:
        return obs
    body = obs.body
    if kind == "text":
        return dataclasses.replace(obs, body=None, html=None, text=decode_text(body, obs.encoding))
    if kind == "pdf":
        return dataclasses.replace(obs, body=None, html=None, text=pdf_text(body))
    data = json_document(body, obs.encoding)
    if spec := obs.options.get("json"):
        read = json_extraction(data, spec)
        options = dict(obs.options)
        if read.fields is not None:
            options[FIELD_TYPES], options[MISSING_FIELDS] = read.types, read.missing
        return dataclasses.replace(obs, body=None, html=None, text=None, fields=read.fields, entities=read.entities,
                                   options=options)
    return dataclasses.replace(obs, body=None, html=None, text=canonical_json(data))
