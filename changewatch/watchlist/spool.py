"""A long watchlist read watch by watch, and kept on disk for the crawl: the crawl process's memory
does not grow with the number of watches (bounded memory).

The watchlist was parsed whole (YAML's node tree, then the data, then the models: ~1.5 KB a watch
at the peak) and its :class:`~.watch.Watch` objects held for the whole crawl (~0.5 KB a watch):
20,000 watches cost the crawl process ~25 MB that it never gave back. Here:

1. **Read and checked watch by watch** (:func:`spool_watchlist`): YAML through libyaml's events,
   one watch composed at a time (anchors, aliases and merge keys as YAML means them); JSON one
   value at a time (the standard library's decoder at each position). Each watch is validated by
   its model, merged with ``defaults`` (wherever they stand in the document), checked as
   :func:`~.loading.parse_watchlist` checks it (options only text watches take, options that
   do not go together, ``notify.when`` fields, duplicate keys: by a 64-bit digest of each key),
   and written to a spool as it is built.
2. **Kept in a spool** (:class:`Watchlist`): an unlinked temporary file (in memory when none can
   be made), one length-prefixed pickle per watch; a watch that differs from an earlier one only
   in its URL and key is written as those two and the number of that earlier one (most watches
   of a long watchlist share their options). Iterating reads it again, block by block, with its
   own offset: the crawl's start requests and the notify rules may read it at the same time.
3. **Anything unusual, or any problem, is read the way it always was**: the whole document, by
   :func:`~.loading.parse_watchlist_text`, whose messages list every problem at once. A
   watchlist with a problem is refused there; one the streaming reader cannot follow (an alias
   to an anchor it skipped, several YAML documents, a syntax error) is read whole and spooled.
   So what is refused, and what is said of it, is what it was.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import re
import struct
import tempfile
from array import array
from collections.abc import Iterator
from dataclasses import replace
from typing import IO, Any

import yaml
from pydantic import ValidationError

from .errors import WatchlistError
from .loading import (
    INLINE,
    _construct_unique_mapping,
    _unique_json,
    _watch,
    merged_problems,
    own_text_options,
    parse_watchlist_text,
)
from .model import WatchlistModel, WatchModel
from .watch import Watch

__all__ = ["Watchlist", "spool_watchlist"]

_LENGTH = struct.Struct("<I")
#: records read at once when a spool is iterated
_BLOCK = 64 * 1024
#: distinct option sets a spool shares (a watchlist whose every watch has options of its own
#: writes each watch whole past this many)
_MAX_SHARED = 256
_A_WATCH = {"url": "https://example.com/"}  # what validates the defaults alone


class _Unusual(Exception):
    """The streaming reader cannot follow this document: it is read whole instead."""


class Watchlist:
    """The watches of a watchlist, in order, read from their spool on each iteration; ``len``,
    the canaries (key → (URL, declaration)) and whether any watch is rendered are known without
    reading it."""

    def __init__(self, spool: IO[bytes], count: int, canaries: dict[str, tuple[str, dict[str, Any]]],
                 renders: bool, shared: list[Watch]):
        self._spool = spool
        self._count = count
        self.canaries = canaries
        self.renders = renders
        self._shared = shared

    @classmethod
    def of(cls, watches: list[Watch]) -> Watchlist:
        """A spool of *watches* (a watchlist read whole)."""
        writer = _SpoolWriter()
        for watch in watches:
            writer.add(watch)
        return writer.finish()

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def __iter__(self) -> Iterator[Watch]:
        shared = self._shared
        for record in _records(self._spool):
            item = pickle.loads(record)
            if isinstance(item, Watch):
                yield item
            else:
                index, url, key = item
                yield replace(shared[index], url=url, key=url if key is None else key)


def _records(spool: IO[bytes]) -> Iterator[bytes]:
    """The records of *spool*, block by block, at an offset of this iterator's own."""
    offset, pending = 0, b""
    while True:
        block = _read_at(spool, offset, _BLOCK)
        offset += len(block)
        data = pending + block if pending else block
        at = 0
        while len(data) - at >= _LENGTH.size:
            (size,) = _LENGTH.unpack_from(data, at)
            end = at + _LENGTH.size + size
            if end > len(data):
                break
            yield data[at + _LENGTH.size:end]
            at = end
        pending = data[at:]
        if not block:
            if pending:
                raise WatchlistError("the watchlist's spool is truncated")  # a full disk while it was written
            return


def _read_at(spool: IO[bytes], offset: int, size: int) -> bytes:
    if isinstance(spool, io.BytesIO):
        return spool.getbuffer()[offset:offset + size].tobytes()
    try:
        return os.pread(spool.fileno(), size, offset)
    except (AttributeError, io.UnsupportedOperation):  # no pread (Windows)
        spool.seek(offset)
        return spool.read(size)


class _SpoolWriter:
    def __init__(self) -> None:
        try:
            self.spool: IO[bytes] = tempfile.TemporaryFile(prefix="changewatch-watchlist-")
        except OSError:  # no writable temporary directory: the spool stays in memory
            self.spool = io.BytesIO()
        self.count = 0
        self.canaries: dict[str, tuple[str, dict[str, Any]]] = {}
        self.renders = False
        self.shared: list[Watch] = []
        self._shared_index: dict[bytes, int] = {}  # the pickled options → their index in shared

    def add(self, watch: Watch) -> None:
        self.count += 1
        if watch.canary is not None:
            self.canaries[watch.key] = (watch.url, {"expect": watch.canary[0], "within": watch.canary[1]})
        self.renders = self.renders or watch.render is not None or any(r.watch.render for r in watch.rules)
        options = replace(watch, url="", key="")
        try:
            pickled = pickle.dumps(options, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            raise WatchlistError(f"watch {watch.url}: its options cannot be kept for the crawl") from None
        index = self._shared_index.get(pickled)
        if index is None and len(self.shared) < _MAX_SHARED:
            index = self._shared_index[pickled] = len(self.shared)
            self.shared.append(replace(options, known_spec=options.spec()))  # one spec for all who share it
        if index is not None:
            record = pickle.dumps((index, watch.url, None if watch.key == watch.url else watch.key),
                                  protocol=pickle.HIGHEST_PROTOCOL)
        else:
            record = pickle.dumps(watch, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self.spool.write(_LENGTH.pack(len(record)))
            self.spool.write(record)
        except OSError as exc:
            raise WatchlistError(f"the watchlist cannot be kept for the crawl in a temporary file: {exc}") from None

    def finish(self) -> Watchlist:
        try:
            self.spool.flush()  # its buffer: the spool is read with os.pread
        except OSError as exc:
            raise WatchlistError(f"the watchlist cannot be kept for the crawl in a temporary file: {exc}") from None
        return Watchlist(self.spool, self.count, self.canaries, self.renders, self.shared)


# -- reading a document watch by watch ------------------------------------------------------------


# libyaml's parser, which PyYAML's wheels have (without it, a watchlist is read whole, as before)
_Parser: Any = getattr(yaml, "CParser", None) or getattr(getattr(yaml, "cyaml", None), "CParser", None)


class _YamlLoader(_Parser or object, yaml.composer.Composer,  # type: ignore[misc]
                  yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    """libyaml's events, composed one node at a time by PyYAML's composer (libyaml's own composes a
    whole document at once), constructed by the safe constructor, duplicate keys refused: what
    :func:`~.loading._load_yaml` makes of each value."""

    def __init__(self, text: str):
        _Parser.__init__(self, text)
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)

    def next_value(self) -> Any:
        return self.construct_document(self.compose_node(None, None))  # type: ignore[arg-type]


_YamlLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)

#: what a walk of a document yields: ("defaults", their data) or ("watch", a watch's data)
_Walk = Iterator[tuple[str, Any]]


def _yaml_walk(text: str, watches: bool) -> _Walk:
    """The top-level values of a YAML watchlist; with *watches* False, the watches are skipped
    (their events read, nothing composed)."""
    loader = _YamlLoader(text)
    try:
        loader.get_event()  # stream start
        if not loader.check_event(yaml.DocumentStartEvent):
            raise _Unusual("no document")
        loader.get_event()
        if not _plain(loader.get_event(), yaml.MappingStartEvent, "tag:yaml.org,2002:map"):
            raise _Unusual("the document is not a plain mapping")
        seen: set[Any] = set()
        while not loader.check_event(yaml.MappingEndEvent):
            if not _plain(loader.peek_event(), yaml.ScalarEvent, None):
                raise _Unusual("a top-level key that is not a plain scalar")
            key = loader.next_value()
            if key not in ("defaults", "watches") or key in seen:
                raise _Unusual(f"top-level key {key!r}")
            seen.add(key)
            if key == "defaults":
                yield "defaults", loader.next_value()
            elif not watches:
                _skip_yaml_value(loader)
            else:
                if not _plain(loader.get_event(), yaml.SequenceStartEvent, "tag:yaml.org,2002:seq"):
                    raise _Unusual("watches is not a plain sequence")
                while not loader.check_event(yaml.SequenceEndEvent):
                    yield "watch", loader.next_value()
                loader.get_event()
        loader.get_event()  # mapping end
        loader.get_event()  # document end
        if not loader.check_event(yaml.StreamEndEvent):
            raise _Unusual("more than one document")
    except (yaml.YAMLError, RecursionError, UnicodeError) as exc:
        raise _Unusual(str(exc)) from None
    finally:
        loader.dispose()


def _plain(event: yaml.Event, kind: type[yaml.Event], tag: str | None) -> bool:
    """*event* is of *kind*, without an anchor, and with no tag but its own."""
    return isinstance(event, kind) and getattr(event, "anchor", None) is None and getattr(event, "tag", None) in (
        None, tag)


def _skip_yaml_value(loader: _YamlLoader) -> None:
    """Read one value's events without composing it."""
    depth = 0
    while True:
        event = loader.get_event()
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            depth += 1
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1
        if depth == 0:
            return


_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def _json_walk(text: str, watches: bool, inline: bool) -> _Walk:
    """The top-level values of a JSON watchlist, each decoded where it stands by the standard
    library's decoder (duplicate keys refused, as json.loads with the same hook refuses them);
    inline, a top-level array is the watches alone."""
    decoder = json.JSONDecoder(object_pairs_hook=_unique_json)

    def space(at: int) -> int:
        found = _JSON_SPACE.match(text, at)
        assert found is not None
        return found.end()

    def array(at: int) -> Iterator[tuple[str, Any] | int]:
        if not text.startswith("[", at):
            raise _Unusual("watches is not an array")
        at = space(at + 1)
        if text.startswith("]", at):
            raise _Unusual("no watches")
        while True:
            value, at = decoder.raw_decode(text, at)
            if watches:
                yield "watch", value
            at = space(at)
            if text.startswith(",", at):
                at = space(at + 1)
            elif text.startswith("]", at):
                yield at + 1
                return
            else:
                raise _Unusual("not a JSON array")

    def values_of(items: Iterator[tuple[str, Any] | int]) -> Iterator[tuple[str, Any]]:
        for item in items:
            if isinstance(item, int):
                ends[0] = item
            else:
                yield item

    ends = [0]
    try:
        at = space(0)
        if inline and text.startswith("[", at):
            yield from values_of(array(at))
            at = ends[0]
        else:
            if not text.startswith("{", at):
                raise _Unusual("not a JSON object")
            at = space(at + 1)
            seen: set[str] = set()
            while True:
                if not text.startswith('"', at):
                    raise _Unusual("not a JSON object of names")
                key, at = decoder.raw_decode(text, at)
                at = space(at)
                if not text.startswith(":", at) or key not in ("defaults", "watches") or key in seen:
                    raise _Unusual(f"top-level key {key!r}")
                seen.add(key)
                at = space(at + 1)
                if key == "defaults":
                    value, at = decoder.raw_decode(text, at)
                    yield "defaults", value
                else:
                    yield from values_of(array(at))
                    at = ends[0]
                at = space(at)
                if text.startswith(",", at):
                    at = space(at + 1)
                elif text.startswith("}", at):
                    at += 1
                    break
                else:
                    raise _Unusual("not a JSON object")
        if space(at) != len(text):
            raise _Unusual("more after the watchlist")
    except (ValueError, RecursionError) as exc:
        raise _Unusual(str(exc)) from None


def _walk(text: str, source: str, is_json: bool, watches: bool) -> _Walk:
    if is_json:
        return _json_walk(text, watches, inline=source == INLINE)
    if _Parser is None:  # PyYAML without libyaml: read whole, as before
        raise _Unusual("no libyaml")
    return _yaml_walk(text, watches)


def spool_watchlist(text: str, source: str, *, is_json: bool) -> Watchlist:
    """A watchlist document's text, validated and spooled (see the module's docstring); *source*
    names it in errors. Raises :class:`~.watchlist.WatchlistError` (every problem at once) and
    nothing else."""
    try:
        return _streamed(text, source, is_json)
    except _Unusual:
        pass
    # unusual, or wrong: read whole, refused as it always was (or, were it fine, kept all the same)
    return Watchlist.of(parse_watchlist_text(text, source, is_json=is_json))


def _streamed(text: str, source: str, is_json: bool) -> Watchlist:
    given = [value for kind, value in _walk(text, source, is_json, watches=False) if kind == "defaults"]
    defaults = None
    if given:
        try:
            defaults = WatchlistModel.model_validate({"defaults": given[0], "watches": [_A_WATCH]}).defaults
        except (ValidationError, RecursionError):
            raise _Unusual("defaults") from None
    writer = _SpoolWriter()
    try:
        keys = array("Q")  # each key's digest: 8 bytes a watch, told apart once all are read
        for kind, raw in _walk(text, source, is_json, watches=True):
            if kind == "watch":
                watch = _checked(defaults, raw)
                keys.append(_digest(watch.key))
                writer.add(watch)
        if not writer.count:
            raise _Unusual("no watches")
        if _repeats(keys):  # a duplicate key (or, once in 2**64, two keys of one digest: read whole, which tells)
            raise _Unusual("a duplicate key")
        return writer.finish()
    except BaseException:
        writer.spool.close()
        raise


def _checked(defaults: Any, raw: Any) -> Watch:
    """The watch *raw* gives, checked as :func:`~.loading.parse_watchlist` checks it (but for
    duplicate keys); :class:`_Unusual` for any problem (said by reading the document whole)."""
    try:
        model = WatchModel.model_validate(raw)
    except (ValidationError, RecursionError):
        raise _Unusual("a watch does not validate") from None
    watch = _watch(defaults, model)
    if merged_problems(watch, own_text_options(model)):
        raise _Unusual("a problem only the merged options show")
    return watch


def _digest(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def _repeats(digests: array[int]) -> bool:
    """Whether a digest is there twice (sorted by NumPy: no Python object a watch)."""
    import numpy as np

    ordered = np.sort(np.frombuffer(digests, dtype=np.uint64))
    return bool(len(ordered) > 1 and (ordered[1:] == ordered[:-1]).any())
