"""Where the ``watch`` spider's watchlist comes from (docs/watchlist.md): ``-a watchlist=`` is a
file path, an http(s) URL or inline JSON.

- A path: relative paths are resolved against ``CHANGEWATCH_WATCHLIST_DIR`` (default: the
  working directory, which for a Scrapyd job is Scrapyd's own).
- An ``http://`` or ``https://`` URL: fetched once, before the crawl starts, by the source's
  :data:`FetchWatchlist` (the spider's: under the SSRF guard's policy, within
  ``CHANGEWATCH_WATCHLIST_TIMEOUT`` and ``CHANGEWATCH_WATCHLIST_MAXSIZE`` and with the crawl's
  User-Agent, :func:`changewatch.spiders.watch.watchlist_source`). JSON when its Content-Type or
  path says so, else YAML.
- Text starting with ``{`` or ``[``: the watchlist itself, as JSON (``[...]``: the watches).

Every failure is a :class:`WatchlistError` naming the source: the spider logs it and the crawl
stops as it opens, with exit status 1, before anything is fetched or stored
(:meth:`~changewatch.spiders.watch.WatchSpider.from_crawler`). The fetching is given to this
module, so that the watchlist depends on nothing of the crawl.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..core.urls import shown_url
from .errors import WatchlistError
from .loading import INLINE, parse_watchlist_text, read_text
from .spool import Watchlist, spool_watchlist
from .watch import Watch

__all__ = ["FetchFailed", "FetchWatchlist", "Fetched", "WatchlistSource", "is_fetched", "open_watchlist",
           "read_watchlist"]

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


class FetchFailed(Exception):
    """A watchlist URL could not be fetched; ``str()`` starts with its class, as error records do
    (``refused:``, ``timeout:``, ``too large:``, ``http:``, ``network:``, ``redirects:``)."""


@dataclass(frozen=True, slots=True)
class Fetched:
    url: str  # after redirects
    body: bytes
    content_type: str


#: GET an http(s) URL; raises :class:`FetchFailed` and nothing else
FetchWatchlist = Callable[[str], Fetched]


def _not_fetched(url: str) -> Fetched:
    raise FetchFailed("refused: watchlist URLs are not fetched here")


@dataclass(frozen=True, slots=True)
class WatchlistSource:
    """How ``-a watchlist=`` is read: where a relative path is, and how a URL is fetched."""

    directory: str | None = None  # None: the working directory
    fetch: FetchWatchlist = _not_fetched

    def path(self, argument: str) -> Path:
        path = Path(argument)
        return path if path.is_absolute() else Path(self.directory or os.getcwd()) / path


def is_fetched(argument: str) -> bool:
    """Whether ``-a watchlist=`` names a watchlist fetched by URL: its ``notify:`` destinations
    are reached only as the SSRF policy allows."""
    text = argument.strip()
    return not text.startswith(("{", "[")) and bool(_URL.match(text))


def read_watchlist(argument: str, source: WatchlistSource) -> list[Watch]:
    """The watches *argument* names (a path, an http(s) URL or inline JSON). Raises
    :class:`WatchlistError` and nothing else."""
    text, shown, is_json = _document(argument, source)
    return parse_watchlist_text(text, shown, is_json=is_json)


def open_watchlist(argument: str, source: WatchlistSource) -> Watchlist:
    """:func:`read_watchlist`'s watches, read watch by watch and kept on disk for the crawl
    (:mod:`.spool`): what the ``watch`` spider crawls. The same problems are refused,
    in the same words."""
    text, shown, is_json = _document(argument, source)
    return spool_watchlist(text, shown, is_json=is_json)


def _document(argument: str, source: WatchlistSource) -> tuple[str, str, bool]:
    """The watchlist's text, how errors name it, and whether it is JSON."""
    text = argument.strip()
    if text.startswith(("{", "[")):
        return text, INLINE, True
    if _URL.match(text):
        return _fetched(text, source)
    path = source.path(argument)
    if not Path(argument).is_absolute() and not path.exists():
        where = (f"CHANGEWATCH_WATCHLIST_DIR = {source.directory!r}" if source.directory
                 else f"the working directory ({os.getcwd()}), unless CHANGEWATCH_WATCHLIST_DIR is set")
        raise WatchlistError(f"cannot read watchlist {path}: no such file (a relative path is read from {where}; "
                             "or give an absolute path, an http(s) URL or inline JSON)")
    return read_text(path), str(path), path.suffix.lower() == ".json"


def _fetched(url: str, source: WatchlistSource) -> tuple[str, str, bool]:
    shown = shown_url(url)
    if urlsplit(url).scheme.lower() not in ("http", "https"):
        raise WatchlistError(f"watchlist {shown}: only http and https watchlist URLs are fetched "
                             "(a file is a path: -a watchlist=/path/to/watchlist.yaml)")
    try:
        fetched = source.fetch(url)
    except FetchFailed as exc:
        hint = (" (a watchlist on this machine or network needs CHANGEWATCH_ALLOW_PRIVATE=True or "
                "CHANGEWATCH_SSRF_ALLOWED_HOSTS / CHANGEWATCH_SSRF_ALLOWED_NETWORKS)") if str(exc).startswith(
            "refused:") else ""
        raise WatchlistError(f"cannot fetch watchlist {shown}: {exc}{hint}") from None
    try:
        text = fetched.body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise WatchlistError(f"watchlist {shown} is not UTF-8 text: {exc}") from None
    ctype = fetched.content_type.split(";", 1)[0].strip().lower()
    is_json = ctype.endswith(("/json", "+json")) or urlsplit(fetched.url).path.lower().endswith(".json")
    return text, shown, is_json
