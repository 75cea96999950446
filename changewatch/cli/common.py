"""What the commands share: the one-line failure (``changewatch COMMAND: …`` on stderr, an exit
status), the project's settings (inside a Scrapy project, a command reads its store and judges
with its comparisons as a crawl there would), opening a store that must already exist, the options
several commands take, ``--since`` and ``--kind`` values, a change as a JSON line, and help texts
without markup."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from ..core import Kind
from ..store import DEFAULT_STORE_URI, LogEntry, OlderSchema, Store, StoreError, store_from_uri
from ..store.options import redact
from ..store.semantics import format_time

__all__ = ["LOGGED_KINDS", "CommandError", "UsageError", "add_change_id", "add_command", "add_kind_option",
           "add_site_watch_option", "add_spider_option", "add_store_option", "add_upgrade_option", "build_store",
           "entry_json", "error", "json_line", "open_store", "parse_kinds", "parse_since", "plain",
           "project_comparisons", "project_config", "project_settings", "resolve_store", "silence_stdout",
           "valid_change_id"]

#: the kinds the change log holds (the others are never logged)
LOGGED_KINDS = tuple(kind.value for kind in Kind if kind.reported)
_DURATION = re.compile(r"(\d{1,9})\s*([smhdw])", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


class CommandError(Exception):
    """A failure the command ends with: its message is the whole line ``main`` prints after
    ``changewatch COMMAND:``, *code* the exit status."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class UsageError(CommandError):
    """A bad argument value (exit 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 2)


def error(command: str, message: str) -> None:
    """One line on stderr, for a failure met while a store is open. Raised instead, a CommandError
    would keep the failing frames, and the store's suspended reads in them, alive until after the
    store is closed: their cleanup would then fail with a traceback on stderr."""
    print(f"changewatch {command}: {message}", file=sys.stderr)


def silence_stdout() -> None:
    """After a failed write to stdout: point it at /dev/null, so that Python's own flush at exit
    does not fail again with a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def json_line(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False)


def parse_since(text: str, now: datetime, option: str = "--since") -> str:
    """*text* as the time the store compares fetch times with: an ISO 8601 time (UTC without a
    zone), a date (its midnight, UTC), or a duration back from *now* (``30m``, ``12h``, ``7d``, ``2w``).

    >>> now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    >>> [parse_since(t, now) for t in ("7d", "90 m", "2026-11-01")]
    ['2026-11-23T12:00:00Z', '2026-11-30T10:30:00Z', '2026-11-01T00:00:00Z']
    >>> [parse_since(t, now) for t in ("2026-11-30T13:00:00+01:00", "2026-11-30T11:00:00.2")]
    ['2026-11-30T12:00:00Z', '2026-11-30T11:00:01Z']
    """
    value = text.strip()
    try:
        if match := _DURATION.fullmatch(value):
            return format_time(now - timedelta(**{_UNITS[match[2].lower()]: int(match[1])}))
        moment = datetime.fromisoformat(value)
    except (ValueError, OverflowError):
        raise UsageError(f"{option} {text!r} is not a time: expected an ISO 8601 time (2026-11-30T12:00:00Z), a date "
                         "(2026-11-30) or a duration back from now (30s, 30m, 12h, 7d, 2w)") from None
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
    if moment.microsecond:  # the store keeps whole seconds: 11:00:00.2 is after 11:00:00
        moment = moment.replace(microsecond=0) + timedelta(seconds=1)
    return format_time(moment)


def parse_kinds(values: Iterable[str]) -> tuple[str, ...]:
    """The kinds named by ``--kind`` options (each may list several, comma-separated)."""
    kinds: list[str] = []
    for value in values:
        for name in (part.strip().lower() for part in value.split(",")):
            if not name:
                continue
            if name not in LOGGED_KINDS:
                never = f" (a {name!r} observation is never logged)" if name in {k.value for k in Kind} else ""
                raise UsageError(f"--kind {name!r} is not a kind of change{never}: expected one of "
                                 f"{', '.join(LOGGED_KINDS)}")
            if name not in kinds:
                kinds.append(name)
    return tuple(kinds)


def valid_change_id(args: argparse.Namespace) -> int:
    if args.change_id < 1:
        raise UsageError(f"CHANGE_ID must be a change's id (1 or more), not {args.change_id}")
    return int(args.change_id)


def project_settings(pairs: Iterable[str] = ()) -> Any:
    """The settings a crawl started here would have (Scrapy's ``Settings``): the project's,
    found as ``scrapy`` finds them (``scrapy.cfg`` in this directory or above it, or
    ``SCRAPY_SETTINGS_MODULE``), with *pairs* (``NAME=VALUE``, as ``scrapy crawl -s``) over them;
    outside a project, the defaults."""
    from scrapy.utils.project import get_project_settings

    was = os.environ.get("SCRAPY_SETTINGS_MODULE")
    try:
        settings = get_project_settings()
    except Exception as exc:  # a settings module that does not import
        raise CommandError(f"cannot read the project's settings: {type(exc).__name__}: {exc}", 2) from None
    finally:  # Scrapy's init_env sets it for the process: a caller of main() (a test) keeps its own
        if was is None:
            os.environ.pop("SCRAPY_SETTINGS_MODULE", None)
        else:
            os.environ["SCRAPY_SETTINGS_MODULE"] = was
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"-s {pair!r}: expected NAME=VALUE")
        settings.set(name.strip(), value, priority="cmdline")
    return settings


def project_config(pairs: Iterable[str] = (), settings: Any = None) -> Any:
    """The changewatch settings (a ``ChangewatchConfig``) of :func:`project_settings` (or of
    *settings*). A bad setting fails the command (exit 2) in one line."""
    from ..config import ChangewatchConfig, ConfigError

    try:
        return ChangewatchConfig.from_settings(project_settings(pairs) if settings is None else settings)
    except ConfigError as exc:
        raise CommandError(f"the project's settings: {exc}", 2) from None


def project_comparisons(config: Any = None) -> tuple[Any, ...]:
    """The comparisons a crawl here judges with (the project's ``CHANGEWATCH_COMPARISONS`` over
    the built-in ones) of *config* or :func:`project_config`: a command that reads or writes a
    stored snapshot, or compares, does so as the crawl does. One that cannot be loaded fails the
    command (exit 2) in one line, as it stops a crawl."""
    from ..core import load_comparisons
    from ..core.comparisons import ComparisonError

    config = project_config() if config is None else config
    try:
        return load_comparisons(config.comparisons, merge=False)
    except ComparisonError as exc:
        raise CommandError(f"the project's settings: CHANGEWATCH_COMPARISONS: {exc}", 2) from None


def resolve_store(args: argparse.Namespace) -> None:
    """``args.store`` as the project's ``CHANGEWATCH_STORE`` when the command reads a store and
    ``--store`` was not given (outside a project: the default store)."""
    if getattr(args, "store", "") is None and getattr(args, "reads_project_store", False):
        args.store = project_config().store


def build_store(uri: str) -> Store:
    """The store *uri* names, built with the project's store schemes and options, as a crawl here would."""
    config = project_config()
    return store_from_uri(uri, config.store_schemes, {"synchronous": config.store_synchronous,
                                                      "timeout": config.store_timeout,
                                                      "retry_time": config.store_retry_time})


def open_store(uri: str, *, upgrade: bool, protocol: type[Any], purpose: str, role: str = "") -> Any:
    """The store *uri* names, opened only if it exists (nothing is created); the command fails
    (exit 2) when it cannot be, or when its backend lacks *protocol* (needed for *purpose*).
    *role* names the store in the message when a command opens two."""
    prefix = f"{role}: " if role else ""
    try:
        store = build_store(uri)
        if not isinstance(store, protocol):
            raise StoreError(f"store {redact(uri)} ({type(store).__module__}.{type(store).__qualname__}) cannot "
                             f"{purpose}: its backend does not implement changewatch.store.{protocol.__name__}")
        store.open_existing(upgrade=upgrade)
    except OlderSchema as exc:
        raise CommandError(f"{prefix}{exc}, or add --upgrade to upgrade it now", 2) from exc
    except StoreError as exc:
        raise CommandError(f"{prefix}{exc}", 2) from exc
    return store


def entry_json(entry: LogEntry) -> dict[str, Any]:
    """A change as ``changes`` prints it; ``record`` is the change record as a feed exported it."""
    return {"id": entry.id, "spider": entry.spider, "key": entry.key, "kind": entry.kind,
            "observed_at": entry.observed_at, "delivered": entry.delivered_at is not None,
            "delivered_at": entry.delivered_at, "record": {**entry.record, "change_id": entry.id}}


def add_store_option(parser: argparse.ArgumentParser, what: str = "read") -> None:
    parser.add_argument("--store", metavar="URI", default=None,
                        help=f"the store to {what} (default: CHANGEWATCH_STORE of the Scrapy project here, else "
                             f"{DEFAULT_STORE_URI}); never created")
    parser.set_defaults(reads_project_store=True)


def plain(text: str) -> str:
    """A docstring as help prints it: without reStructuredText's literal markup.

    >>> plain("``changewatch changes`` reads ``--store``")
    'changewatch changes reads --store'
    """
    return text.replace("``", "")


def add_command(sub: Any, name: str, doc: str | None, help: str) -> argparse.ArgumentParser:
    """A command's parser: *help* is its line in ``changewatch --help``, the first paragraph of
    *doc* (its module's docstring) its own description."""
    description = plain((doc or help).split("\n\n")[0])
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help, description=description)
    return parser


def add_upgrade_option(parser: argparse.ArgumentParser, what: str = "a store") -> None:
    parser.add_argument("--upgrade", action="store_true",
                        help=f"upgrade {what} of an older schema in place first (as a crawl would)")


def add_kind_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kind", action="append", default=[], metavar="KIND",
                        help=f"only these kinds ({', '.join(LOGGED_KINDS)}); repeat or separate with commas")


def add_spider_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spider", action="append", default=[], metavar="NAME",
                        help="only this spider's (repeatable)")


def add_change_id(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("change_id", type=int, metavar="CHANGE_ID", help="the change's id (its record's change_id)")


def add_site_watch_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--site-watch", action="append", default=[], metavar="KEY",
                        help=f"only the {what} of this site watch: its page set's and its pages' (repeatable)")
