"""``changewatch preview URL`` (or ``--watchlist FILE --key KEY``): what a watch of a page would
compare, before it is added: the page is fetched once under the crawl's SSRF policy and read as a
crawl reads it (the same extraction and comparisons), and the fields (raw and normalised), the
entities and the stable text are printed, with what would be ignored marked: volatile fragments
[~like this~], and with --store, the lines learned as noise of that key. Nothing is stored."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..store import ChangeLogStore, StoreError
from .common import (
    CommandError,
    UsageError,
    add_command,
    json_line,
    open_store,
    project_comparisons,
    project_config,
    project_settings,
)

__all__ = ["add_parser"]

NAME = "preview"

#: what a page is asked for: what a browser asks
_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
_SHOWN = 50  # entities listed; the rest counted


@dataclass
class Preview:
    """What a crawl would compare of one watch's page."""

    watch: Any
    url: str  # after redirects
    content_type: str
    size: int | None  # None: rendered
    snapshot: Any
    learned: Any = None  # the key's learned noise, with --store


def _watch(args: argparse.Namespace, source: Any) -> tuple[Any, str]:
    """The watch to preview, and the watchlist it is in (as ``-a watchlist=`` takes it)."""
    from ..watchlist import WatchlistError, read_watchlist

    if args.watchlist is not None:
        if args.url is not None or args.watch is not None:
            raise UsageError("give a URL (with --watch) or --watchlist with --key, not both")
        if args.key is None:
            raise UsageError("--watchlist needs --key KEY: the watch to preview")
        try:
            watches = read_watchlist(args.watchlist, source)
        except WatchlistError as exc:
            raise UsageError(f"--watchlist: {exc}") from None
        found = [w for w in watches if args.key in (w.key, w.url)] or _site_page(watches, args.key)
        if not found:
            raise UsageError(f"--watchlist has no watch of key {args.key!r} ({len(watches)} watches)")
        return found[0], args.watchlist
    if args.url is None:
        raise UsageError("give a URL, or --watchlist FILE --key KEY")
    if args.key is not None:  # else --store would look up the URL as the key, and mark nothing
        raise UsageError("--key names a watch of --watchlist; a URL's key goes in --watch '{\"key\": \"KEY\"}'")
    try:
        options = json.loads(args.watch) if args.watch is not None else {}
    except ValueError as exc:
        raise UsageError(f"--watch is not JSON: {exc}") from None
    if not isinstance(options, dict):
        raise UsageError("--watch must be a JSON object: a watch's options, as a watchlist writes them")
    watchlist = json.dumps({"watches": [{**options, "url": args.url}]})
    try:
        return read_watchlist(watchlist, source)[0], watchlist
    except WatchlistError as exc:
        raise UsageError(f"--watch: {exc}") from None


def _site_page(watches: Any, key: str) -> list[Any]:
    """A page of a site watch, by its key (``KEY|URL``): its own watch (none: not a site's page)."""
    from ..watchlist.site import page_watch

    site_key, separator, url = key.partition("|")
    sites = [w for w in watches if separator and w.site is not None and w.key == site_key]
    return [page_watch(sites[0], url)] if sites else []


def _fetch_and_read(watch: Any, settings: Any, config: Any) -> tuple[Any, str, str, int]:
    """The page fetched once and observed as a crawl observes it: the observation, the URL after
    redirects, the Content-Type, the size. CommandError (exit 1) when it cannot be fetched."""
    from scrapy.http import Headers
    from scrapy.responsetypes import responsetypes

    from ..extract.watch import observe_page
    from ..guard.fetch import FetchError, fetch_once

    maxsize = settings.getint("DOWNLOAD_MAXSIZE") or 1 << 30
    try:
        fetched = fetch_once(watch.url, config.guard.policy, timeout=settings.getfloat("DOWNLOAD_TIMEOUT") or 180,
                             max_bytes=maxsize, user_agent=settings.get("USER_AGENT") or "changewatch",
                             accept=_ACCEPT, size_setting="DOWNLOAD_MAXSIZE")
    except FetchError as exc:
        raise CommandError(str(exc), 1) from None
    headers = Headers({"Content-Type": fetched.content_type} if fetched.content_type else {})
    cls = responsetypes.from_args(headers=headers, url=fetched.url, body=fetched.body)
    response = cls(url=fetched.url, status=200, headers=headers, body=fetched.body)
    obs, _ = observe_page(watch, response)
    return obs, fetched.url, fetched.content_type, len(fetched.body)


def _read(obs: Any, watch: Any, config: Any) -> Any:
    """The snapshot a crawl would keep of *obs*; CommandError (exit 1) for what a crawl would
    record as an error instead, saying why as its error record would."""
    from ..core import Unobservable, classify, digest
    from ..core.documents import read_document

    comparisons = project_comparisons(config)
    try:
        if obs.error:
            raise Unobservable(obs.error)
        snapshot = digest(read_document(obs), comparisons)
    except Unobservable as exc:
        raise CommandError(f"{watch.url}: {exc} (a crawl would record this error and compare nothing)", 1) from None
    verdict = classify(None, snapshot, comparisons)
    if verdict.error:  # a block page, a region that matches nothing: what a baseline refuses
        raise CommandError(f"{watch.url}: {verdict.error} (a crawl would record this error and compare nothing)", 1)
    return snapshot


def _learned(args: argparse.Namespace, key: str, config: Any) -> Any:
    """What the store has learned of *key*'s noise (None: nothing, or no text stored)."""
    from ..core.snapshot import Snapshot, SnapshotError

    store: Any = open_store(args.store, upgrade=False, protocol=ChangeLogStore, purpose="say what is learned")
    try:
        state = store.read(args.spider, key)
    except StoreError as exc:
        raise CommandError(str(exc), 1) from None
    finally:
        store.close()
    if state is None or state.snapshot is None:
        return None
    try:
        part = Snapshot.decode(state.snapshot, project_comparisons(config)).part("content")
    except SnapshotError:
        return None
    return None if part is None else part.learned


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def text_lines(raw: str, learned: Any, clock: Any = None) -> Iterator[tuple[str, str, str]]:
    """Each line of the raw text as (mark, line shown, state): volatile fragments that the stable
    text leaves out shown [~so~] (state ``volatile``; ``ignored`` when nothing is left of the
    line), lines learned as noise marked ``~`` (state ``learned``), others as they are. *clock*:
    when the page was fetched (core/text/clock_times.py), so that a time tracking it is marked.

    >>> [m + s for m, s, _ in text_lines("Terms of sale\\nUpdated: 10:32 today, just now\\n3 minutes ago", None)]
    ['  Terms of sale', '  Updated: 10:32 today[~, just now~]', '~ [~3 minutes ago~]']
    """
    from ..core.learned import signature
    from ..core.text.volatile import stable_lines
    from ..report.words import word_diff

    volatile = learned.lines if learned is not None else ()
    for line in raw.split("\n"):
        if not line.strip():
            continue
        stable = "\n".join(stable_lines(line, clock))
        if not stable:
            yield "~ ", f"[~{line}~]", "ignored"
            continue
        shown = line
        state = "compared"
        if stable != line:
            old, _ = word_diff(line, stable)
            shown = "".join(f"[~{s.text}~]" if s.changed else s.text for s in old)
            state = "volatile"
        if signature(stable) in volatile:
            yield "~ ", shown, "learned"
        else:
            yield "  ", shown, state


def _print(preview: Preview) -> Iterator[str]:
    watch, snapshot = preview.watch, preview.snapshot
    kinds = ", ".join(name for name in snapshot) or "nothing"
    moved = f" (redirected to {preview.url})" if preview.url != watch.url else ""
    size = f", {preview.size} bytes" if preview.size is not None else ""
    yield (f"{watch.url}{moved}: key {watch.key}; {preview.content_type or 'no Content-Type'}{size}; "
           f"compared by {kinds}; nothing stored")
    fields = snapshot.part("fields")
    if fields is not None:
        yield f"fields ({len(fields.raw)}): raw → normalised"
        for name, raw in fields.raw.items():
            yield f"  {name}: {_value(raw)} → {_value(fields.norm.get(name))}"
    entities = snapshot.part("entities")
    if entities is not None:
        yield f"entities ({len(entities.entities)}):"
        for key, entity in list(entities.entities.items())[:_SHOWN]:
            shown = "  ".join(f"{k}: {_value(v)}" for k, v in entity.fields.items())
            yield f"  {key}" + (f"  {shown}" if shown else "")
        if len(entities.entities) > _SHOWN:
            yield f"  … and {len(entities.entities) - _SHOWN} more"
    content = snapshot.part("content")
    if content is not None:
        lines = list(text_lines(content.raw, preview.learned, content.clock))
        count = {state: sum(1 for _, _, s in lines if s == state) for state in ("volatile", "ignored", "learned")}
        yield (f"text ({len(lines)} lines): {count['volatile']} with volatile fragments left out [~so~], "
               f"{count['ignored']} left out whole, {count['learned']} learned as noise (~)")
        yield from (mark + line for mark, line, _ in lines)


def _json(preview: Preview) -> str:
    snapshot = preview.snapshot
    fields, entities, content = snapshot.part("fields"), snapshot.part("entities"), snapshot.part("content")
    return json_line({
        "url": preview.watch.url, "final_url": preview.url, "key": preview.watch.key,
        "content_type": preview.content_type, "size": preview.size, "compared_by": list(snapshot),
        "fields": None if fields is None else {n: {"raw": v, "normalised": fields.norm.get(n)}
                                               for n, v in fields.raw.items()},
        "entities": None if entities is None else [{"key": k, "fields": e.fields, "normalised": e.norm}
                                                   for k, e in entities.entities.items()],
        "text": None if content is None else [{"line": line, "state": state}
                                              for _, line, state in text_lines(content.raw, preview.learned,
                                                                                               content.clock)],
    })


def run(args: argparse.Namespace) -> int:
    """Exit 0: previewed; 1: the page could not be fetched (refused by the SSRF policy, failed,
    not 200) or observed (what a crawl would record as an error); 2: a bad argument or setting,
    or a store that cannot be opened."""
    from ..spiders.watch import watchlist_source

    settings = project_settings(args.set)
    config = project_config(settings=settings)
    watch, watchlist = _watch(args, watchlist_source(config))
    if watch.site is not None:
        return _preview_site(args, watch, settings, config)
    learned = _learned(args, watch.key, config) if args.store is not None else None
    if watch.render is not None:
        from .rendered import rendered_observation

        obs = rendered_observation(watchlist, watch.key, settings)
        url, content_type, size = obs.url, "rendered in Chromium", None
    else:
        obs, url, content_type, size = _fetch_and_read(watch, settings, config)
    preview = Preview(watch, url, content_type, size, _read(obs, watch, config), learned)
    if args.json:
        print(_json(preview))
    else:
        sys.stdout.write("\n".join(_print(preview)) + "\n")
    return 0


def _preview_site(args: argparse.Namespace, watch: Any, settings: Any, config: Any) -> int:
    from .preview_site import preview_site, site_json, site_lines

    if args.store is not None:
        raise UsageError(f"--store marks the noise learned of one page: preview a page of site watch {watch.key} "
                         f"by its key ({watch.key}|URL)")
    preview = preview_site(watch, settings, config)
    sys.stdout.write((site_json(preview) if args.json else "\n".join(site_lines(preview))) + "\n")
    return 0


def add_parser(sub: Any) -> None:
    parser = add_command(sub, NAME, __doc__, "what a watch of a URL would compare, before adding it")
    parser.add_argument("url", nargs="?", metavar="URL", help="the page to preview")
    parser.add_argument("--watch", metavar="JSON", help="the watch's options, as a watchlist writes them "
                                                        "(e.g. '{\"region\": \"main\"}'); its url is URL")
    parser.add_argument("--watchlist", metavar="W", help="preview a watch of this watchlist (a path, an http(s) URL "
                                                         "or inline JSON) instead, with --key")
    parser.add_argument("--key", metavar="KEY", help="the watch of --watchlist to preview (its key or URL; a site "
                                                     "watch's key lists its pages, KEY|URL previews one of them)")
    parser.add_argument("--store", metavar="URI", help="mark the lines this store learned as noise of the key "
                                                       "(default: none are marked); never created")
    parser.add_argument("--spider", metavar="NAME", default="watch", help="the key's spider in --store (default watch)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting over the project's, e.g. -s CHANGEWATCH_ALLOW_PRIVATE=True")
    parser.set_defaults(func=run)
