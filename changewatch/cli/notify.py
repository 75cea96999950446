"""``changewatch notify``: each destination's delivery state of the changes in a store, and with
``--resend``, sending what a destination has not been sent (a crawl's notification failed, or it
was killed before it sent them); ``--discard`` ends a destination's pending deliveries (one that
was retired), recording them as discarded.

The destinations' URLs are never stored (only a digest and their form without secrets): they come
from the configuration, as a crawl's do: the project's settings (``CHANGEWATCH_NOTIFY``, with ``-s
NAME=VALUE`` over them) and, with ``--watchlist``, its watches' ``notify:``."""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, datetime
from typing import Any, Protocol

from ..core.destinations import Destination, NotifyRoutes
from ..store import ChangeLogStore, RoutingStore, Store, StoreError
from ..store.leases import new_owner
from ..store.options import uri_argument
from .common import (
    CommandError,
    UsageError,
    add_command,
    error,
    json_line,
    open_store,
    parse_since,
    project_settings,
)

__all__ = ["add_parser"]

NAME = "notify"


class _NotifyStore(Store, ChangeLogStore, RoutingStore, Protocol):
    """A store whose notifications can be listed and sent."""


def _destinations(args: argparse.Namespace, config: Any, routes: NotifyRoutes) -> dict[str, Destination]:
    from ..notify.crawl import watch_rules
    from ..notify.routing import Router

    rules: dict[str, Any] = {}
    if args.watchlist:
        from ..spiders.watch import watchlist_source
        from ..watchlist import WatchlistError, is_fetched, read_watchlist

        try:
            watches = read_watchlist(args.watchlist, watchlist_source(config))
        except WatchlistError as exc:
            raise UsageError(f"--watchlist: {exc}") from None
        holder = argparse.Namespace(watches=watches, watchlist_fetched=is_fetched(args.watchlist))
        rules = watch_rules(holder)
    return Router(routes, rules).destinations


def _state_json(state: Any, known: dict[str, Destination]) -> str:
    return json_line({"change_id": state.change_id, "spider": state.spider, "key": state.key, "kind": state.kind,
                      "observed_at": state.observed_at, "destination": state.shown, "sent_at": state.sent_at,
                      "discarded_at": state.discarded_at, "attempts": state.attempts, "last_error": state.last_error,
                      "configured": state.destination in known})


def _discard(store: _NotifyStore, args: argparse.Namespace, before: str | None) -> int:
    """End the pending deliveries ``--discard`` or ``--discard-all`` names, recorded as discarded."""
    from ..core.observation import utc_now

    destination = None if args.discard_all else args.discard
    count = store.discard_notifications(destination, utc_now(), before=before, spider=args.spider)
    if count is None:
        raise CommandError(f"--discard {destination!r}: no notification in the store goes to that destination "
                           "(give it as changewatch notify --all lists it, or as the crawl's warning names it)", 2)
    whose = "every destination" if destination is None else destination
    older = f" of changes fetched before {before}" if before else ""
    print(f"discarded {count} pending change(s){older} for {whose} (kept in the store as discarded: "
          "changewatch notify --all lists them)")
    return 0


def run(args: argparse.Namespace) -> int:
    """Exit 0: listed, discarded, or every destination sent to; 1: a destination failed; 2: a bad
    argument (an unknown destination to discard), setting or watchlist, or a store that cannot be
    opened."""
    from ..config import ChangewatchConfig, ConfigError
    from ..notify.setting import notify_routes

    now = datetime.now(UTC)
    since = parse_since(args.since, now) if args.since is not None else None
    before = parse_since(args.before, now, "--before") if args.before is not None else None
    if sum((args.resend, args.discard is not None, args.discard_all)) > 1:
        raise UsageError("--resend, --discard and --discard-all: one at a time")
    if args.discard_all and before is None:
        raise UsageError("--discard-all needs --before TIME: the pending deliveries of every destination older "
                         "than TIME (an ISO 8601 time, a date, or 30m, 12h, 1d, 2w ago)")
    if before is not None and args.discard is None and not args.discard_all:
        raise UsageError("--before goes with --discard or --discard-all")
    if (args.discard is not None or args.discard_all) and (since is not None or args.all):
        raise UsageError("--discard and --discard-all take --before, --spider and --store, not --since or --all")
    if args.discard is not None and not args.discard.strip():
        raise UsageError("--discard needs a destination, as changewatch notify lists it")
    try:
        settings = project_settings(args.set)
        config = ChangewatchConfig.from_settings(settings)
        known = _destinations(args, config, notify_routes(settings))
    except ConfigError as exc:
        raise CommandError(str(exc), 2) from None
    store: _NotifyStore = open_store(args.store or config.store, upgrade=False, protocol=RoutingStore,
                                     purpose="keep notifications")
    try:
        if args.discard is not None or args.discard_all:
            return _discard(store, args, before)
        if not args.resend:
            for state in store.notification_states(spider=args.spider, since=since, pending=not args.all):
                print(_state_json(state, known))
            return 0
        return _resend(store, config, known, args.spider, since, uri_argument(args.store or config.store))
    except StoreError as exc:
        error(NAME, str(exc))
        return 1
    finally:
        store.close()


def _resend(store: _NotifyStore, config: Any, known: dict[str, Destination], spider: str | None, since: str | None,
            shown_store: str) -> int:
    from ..notify.notifier import Notifier
    from ..notify.sender import SendPolicy

    if not known:
        raise CommandError("no destinations are configured (CHANGEWATCH_NOTIFY in the project's settings or -s, or "
                           "--watchlist)", 2)

    async def call(fn: Any, *a: Any, **k: Any) -> Any:
        return fn(*a, **k)

    policy = SendPolicy(config.notify_timeout, config.notify_retries, config.notify_retry_time, config.guard.policy)
    notifier = Notifier(store, call, known, policy, new_owner(), max_chars=config.notify_max_chars,
                        store_name=shown_store)
    report = asyncio.run(notifier.run(spider=spider, since=since))
    for shown, count in report.sent.items():
        print(f"sent {count} change(s) to {shown}")
    for shown, why in report.failed.items():
        print(f"failed: {shown}: {why} (still pending)")
    if not report.sent and not report.failed:
        print("nothing to send")
    return 0 if report.ok else 1


def add_parser(sub: Any) -> None:
    parser = add_command(sub, NAME, __doc__, "notifications' delivery state; --resend sends what was missed")
    parser.add_argument("--resend", action="store_true",
                        help="send each configured destination the changes it has not been sent, one message each")
    parser.add_argument("--discard", metavar="DESTINATION",
                        help="end the pending deliveries to DESTINATION (as listed, or its id), kept as discarded")
    parser.add_argument("--discard-all", action="store_true",
                        help="end the pending deliveries to every destination of changes fetched before --before")
    parser.add_argument("--before", metavar="TIME", help="with --discard or --discard-all: only changes fetched "
                                                         "before TIME (an ISO 8601 time, a date, or 1d, 2w ago)")
    parser.add_argument("--store", metavar="URI", help="the store (default: CHANGEWATCH_STORE of the settings)")
    parser.add_argument("--since", metavar="WHEN", help="only changes fetched at WHEN or later: an ISO 8601 time, "
                                                        "a date, or 30m, 12h, 1d, 2w ago")
    parser.add_argument("--spider", metavar="NAME", help="only this spider's changes")
    parser.add_argument("--watchlist", metavar="W", help="also the destinations of this watchlist's notify: "
                                                         "(a path, an http(s) URL or inline JSON)")
    parser.add_argument("--all", action="store_true", help="list sent notifications too (without --resend)")
    parser.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting over the project's (as scrapy crawl -s), e.g. -s CHANGEWATCH_NOTIFY=json://…")
    parser.set_defaults(func=run)
