"""What a bad changewatch setting stops the crawl with: :class:`ConfigError`, one line."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = ["ConfigError", "VantageError", "error_message", "said_at_start"]

logger = logging.getLogger(__name__)

_SHOWN_CHARS = 200
_SCRAPY_CRAWLER = os.path.join("scrapy", "crawler.py")
_CRAWL_COMMAND = os.path.join("scrapy", "commands", "crawl.py")
_CREDENTIALS = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@'\"]*@")


class ConfigError(ValueError):
    """A changewatch setting has a value it cannot work with. Not ``NotConfigured``: Scrapy
    would quietly disable the component (the store, the commit step, the SSRF guard) and go on
    crawling."""


class VantageError(ConfigError):
    """CHANGEWATCH_VANTAGE is wrong: the crawl would go out from the wrong country or language."""


def _shown(raw: Any) -> str:
    """*raw* as an error message may quote it: its repr, shortened, header and cookie values
    masked (the message also drops URL credentials: a proxy's or a store's password)."""
    if isinstance(raw, Mapping) and any(k in raw for k in ("headers", "cookies")):
        raw = {k: ({n: "***" for n in v} if k in ("headers", "cookies") and isinstance(v, Mapping) else v)
               for k, v in raw.items()}
    text = repr(raw)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS - 1] + "…"


def error_message(name: str, raw: Any, accepts: str, detail: str = "") -> str:
    """The one line a bad value stops the crawl with.

    >>> error_message("CHANGEWATCH_THRESHOLD", "abc", "an integer from 0 to 64")
    "CHANGEWATCH_THRESHOLD = 'abc': expected an integer from 0 to 64"
    >>> error_message("CHANGEWATCH_STORE", "postgresql://me:secret@db/x", "a URI", "unknown scheme")
    "CHANGEWATCH_STORE = 'postgresql://***@db/x': expected a URI (unknown scheme)"
    """
    line = f"{name} = {_shown(raw)}: expected {accepts}" + (f" ({detail})" if detail else "")
    return _CREDENTIALS.sub(r"\1***@", " ".join(line.splitlines()))


@contextmanager
def said_at_start() -> Iterator[None]:
    """A ConfigError raised inside is said in the crawl's log too, before it ends the process:
    the traceback goes to stderr only, and a ``LOG_FILE`` (a Scrapyd job's log) would otherwise
    end after Scrapy's banner without saying why."""
    try:
        yield
    except ConfigError as exc:
        logger.error("changewatch cannot start: %s", exc)
        _retrieved_by_us(exc)
        raise


def _retrieved_by_us(exc: ConfigError) -> None:
    """Scrapy runs a crawl's start in an asyncio task whose exception nobody retrieves: asyncio
    would log it again as "Task exception was never retrieved" with a traceback, after the line
    above. Retrieving it when the task ends keeps the one line; Scrapy still counts the crawl as
    failed to start (exit status 1)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop: raised to a caller, or into a Deferred
        task = None
    if task is not None:
        task.add_done_callback(lambda done: done.cancelled() or done.exception())
    else:
        _retrieved_from_deferred(exc)


def _retrieved_from_deferred(exc: ConfigError) -> None:
    """On another reactor than asyncio's (a project's TWISTED_REACTOR, refused by
    :func:`~changewatch.config.model.check_reactor`) the crawl starts in the Deferred of Scrapy's
    ``CrawlerProcess._crawl``, which the ``scrapy crawl`` command drops (it reads the failure in
    ``bootstrap_failed``: exit status 1): Twisted would report it when it is collected, as
    "Unhandled error in Deferred:" and two tracebacks. Under that command only, an errback on
    that Deferred retrieves *exc*, and nothing else; a script's own ``crawl()`` keeps its failure."""
    frames = []
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    if not any(f.f_code.co_name == "run" and f.f_code.co_filename.endswith(_CRAWL_COMMAND) for f in frames):
        return
    for frame in frames:
        if frame.f_code.co_name == "_inlineCallbacks" and frame.f_globals.get("__name__") == "twisted.internet.defer":
            gen, status = frame.f_locals.get("gen"), frame.f_locals.get("status")
            code = getattr(gen, "gi_code", None)
            if (code is not None and code.co_name == "_crawl" and code.co_filename.endswith(_SCRAPY_CRAWLER)
                    and status is not None):
                status.deferred.addErrback(lambda failure: None if failure.value is exc else failure)
                return
