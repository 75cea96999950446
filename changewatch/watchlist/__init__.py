"""The watchlist of the generic ``watch`` spider (docs/watchlist.md): what it may say
(:mod:`.model`, the source of ``changewatch/watchlist.schema.json``), how it is loaded
(:mod:`.loading`, :mod:`.sources`) and kept on disk for the crawl (:mod:`.spool`), the
:class:`Watch` the crawl reads per request, and what is wrong with one, in words (:mod:`.errors`).

It depends on the core only: fetching a watchlist by URL is given to it by the spider
(:class:`WatchlistSource`'s ``fetch``)."""

from .errors import WatchlistError
from .loading import INLINE, load_watchlist, parse_watchlist, parse_watchlist_text
from .model import DEFAULT_OPTIONS, WATCH_OPTIONS, watchlist_schema
from .sources import Fetched, FetchFailed, FetchWatchlist, WatchlistSource, is_fetched, open_watchlist, read_watchlist
from .spool import Watchlist, spool_watchlist
from .watch import EntitySpec, JsonEntitiesSpec, JsonLdSpec, JsonSpec, NotifyRule, Watch

__all__ = ["DEFAULT_OPTIONS", "INLINE", "WATCH_OPTIONS", "EntitySpec", "FetchFailed", "FetchWatchlist", "Fetched",
           "JsonEntitiesSpec", "JsonLdSpec", "JsonSpec", "NotifyRule", "Watch", "Watchlist", "WatchlistError",
           "WatchlistSource", "is_fetched", "load_watchlist", "open_watchlist", "parse_watchlist",
           "parse_watchlist_text", "read_watchlist", "spool_watchlist", "watchlist_schema"]
