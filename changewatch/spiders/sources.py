"""Where the ``watch`` spider's watchlist comes from (docs/watchlist.md): ``-a watchlist=`` is a
file path, an http(s) URL or inline JSON.

- A path: relative paths are resolved against ``CHANGEWATCH_WATCHLIST_DIR`` (default: the
  working directory, which for a Scrapyd job is Scrapyd's own).
- An ``http://`` or ``https://`` URL: fetched once, before the crawl starts, under the SSRF
  guard's policy, within ``CHANGEWATCH_WATCHLIST_TIMEOUT`` and ``CHANGEWATCH_WATCHLIST_MAXSIZE``
  and with the crawl's User-Agent. JSON when its Content-Type or path says so, else YAML.
- Text starting with ``{`` or ``[``: the watchlist itself, as JSON (``[...]``: the watches).

Every failure is a :class:`WatchlistError` naming the source: the spider logs it and the crawl
stops as it opens, with exit status 1, before anything is fetched or stored
(:meth:`~changewatch.spiders.watch.WatchSpider.from_crawler`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..core.addresses import AddressPolicy, shown_url
from ..guard.fetch import FetchError, fetch_once
from .watchlist import INLINE, Watch, WatchlistError, parse_watchlist_text, read_text
from .watchlist_spool import Watchlist, spool_watchlist

__all__ = ["WatchlistSource", "is_fetched", "open_watchlist", "read_watchlist"]

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass(frozen=True, slots=True)
class WatchlistSource:
    """How ``-a watchlist=`` is read: the settings that say where and how far."""

    policy: AddressPolicy
    directory: str | None = None  # None: the working directory
    timeout: float = 30.0
    max_bytes: int = 10 * 1024 * 1024
    user_agent: str = "changewatch"

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
    (:mod:`.watchlist_spool`): what the ``watch`` spider crawls. The same problems are refused,
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
        fetched = fetch_once(url, source.policy, timeout=source.timeout, max_bytes=source.max_bytes,
                             user_agent=source.user_agent)
    except FetchError as exc:
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
