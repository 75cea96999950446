"""The pool of worker processes that do the CPU-bound page normalisation on the machine's other
cores."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["WorkerPool"]

logger = logging.getLogger(__name__)
T = TypeVar("T")


@contextmanager
def _main_module_hidden() -> Iterator[None]:
    """Start processes without the main module: spawned children import it again (as
    ``__mp_main__``), and a crawl script without an ``if __name__ == "__main__"`` guard (as in
    Scrapy's own "run from a script" example) would start a second crawl in every worker. The
    workers only run functions of changewatch.core, which they import by name."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved: dict[str, Any] = {name: main.__dict__[name] for name in ("__file__", "__spec__") if name in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.update(saved)
        if "__spec__" not in saved:
            del main.__spec__


def _exit_with_parent(parent: int) -> None:
    """Worker initializer: end the worker when the crawl process is gone. A crawl killed with
    SIGKILL cannot shut its pool down, and an orphaned worker would hold the crawl's stdout and
    stderr open (a scheduler waiting on them would wait for ever)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="changewatch-parent-watch", daemon=True).start()


class WorkerPool:
    """Runs CPU-bound functions in worker processes (``workers`` > 0) or inline (0)."""

    def __init__(self, workers: int):
        self.workers = workers
        self._executor: Executor | None = None

    def start(self) -> None:
        if not self.workers or self._executor is not None:
            return
        # spawn, not fork: forking a process that runs a reactor and threads is unsafe
        executor = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                       initializer=_exit_with_parent, initargs=(os.getpid(),))
        try:
            with _main_module_hidden():
                # The first call starts every worker process, while __main__ is hidden from them.
                executor.submit(int).result(timeout=120)
        except Exception as exc:  # the crawl goes on, only slower
            executor.shutdown(wait=False, cancel_futures=True)
            logger.warning("changewatch could not start its worker processes (%s); normalising in the crawl "
                           "process instead", exc)
            return
        self._executor = executor

    def stop(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        if self._executor is None:
            return fn(*args)
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)
        except BrokenProcessPool:
            # A worker died (out of memory, killed): carry on inline rather than lose the run.
            # Every call in flight lands here; the first one retires the pool and says so.
            broken, self._executor = self._executor, None
            if broken is not None:
                logger.warning("changewatch worker pool broke; normalising in the crawl process from now on")
                broken.shutdown(wait=False, cancel_futures=True)
            return fn(*args)
