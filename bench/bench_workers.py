"""What handing tasks to worker processes costs the crawl process: the new WorkerPool against the
straightforward way the project used before (``concurrent.futures.ProcessPoolExecutor``, spawn
context, arguments pickled by the executor, ``loop.run_in_executor``).

Run: ``.venv/bin/python bench/bench_workers.py`` (about a minute; ``--tasks 200 --rounds 1`` for
a smoke run; ``--workers 2`` to use two worker processes instead of the default one).

For payloads of ~23 KB and ~230 KB, N tasks (default 2,000) with 16 in flight are sent from an
asyncio loop; the task is trivial (the payload's length), so what is measured is the hand-off:
sending, waking up, receiving. Payloads are bytes of real pages of ``../shared/corpus/pages``
(beside the checkout; each page of at least the size, cut to it), or generated HTML without the
corpus. Two shapes:

* ``bytes``: the payload as bytes; the executor pickles it, the pool sends it as it is.
* ``pipeline``: what the pipeline sends, ``(html: str, None, None, False)``: the executor
  pickles the arguments, the pool's caller pickles the tuple (``changewatch.runtime.tasks``).

For each it prints wall time and CPU time of the calling process (``time.process_time``: every
thread of it, so the executor's feeder and manager threads count), per task, medians of
``--rounds`` interleaved rounds, and the pool's figures as ratios to the executor's. Pools are
started before timing: start-up is not part of the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import multiprocessing
import pickle
import statistics
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from types import ModuleType

from changewatch.runtime.workers import WorkerPool

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "pages"
KB = 1024
SIZES = {"23 KB": 23 * KB, "230 KB": 230 * KB}
IN_FLIGHT = 16


def length(payload: bytes) -> bytes:
    return str(len(payload)).encode()


def length_of_args(html: str, text: str | None, region: str | None, sort_lines: bool) -> int:
    return len(html)


def length_of_pickled(payload: bytes) -> bytes:
    html, _, _, _ = pickle.loads(payload)
    return str(len(html)).encode()


def pages(size: int, count: int = 8) -> list[bytes]:
    """*count* payloads of *size* bytes: real pages cut to size, or generated HTML."""
    found = sorted(p for p in CORPUS.glob("**/*.html") if p.stat().st_size >= size) if CORPUS.is_dir() else []
    if found:
        return [found[i % len(found)].read_bytes()[:size] for i in range(count)]
    para = b"<p>Generated paragraph with some words about the subject of the page.</p>\n"
    return [(b"<html><body>" + para * (size // len(para) + 1))[:size] for _ in range(count)]


async def drive(call: Callable[[int], Awaitable[object]], tasks: int) -> None:
    """*tasks* calls, IN_FLIGHT at a time."""
    counter = iter(range(tasks))

    async def lane() -> None:
        for i in counter:
            await call(i)

    await asyncio.gather(*(lane() for _ in range(IN_FLIGHT)))


def timed(call: Callable[[int], Awaitable[object]], tasks: int) -> tuple[float, float]:
    async def main() -> tuple[float, float]:
        await drive(call, IN_FLIGHT * 2)  # warm-up: imports in the workers, first connections
        wall, cpu = time.perf_counter(), time.process_time()
        await drive(call, tasks)
        return time.perf_counter() - wall, time.process_time() - cpu

    return asyncio.run(main())


def this_module() -> ModuleType:
    """This module under an importable name: workers import task functions by name, never from
    ``__main__`` (run as a script, ``bench/`` is on ``sys.path``, which spawned workers inherit)."""
    return importlib.import_module(__spec__.name if __spec__ is not None else Path(__file__).stem)


def variants(executor: ProcessPoolExecutor, pool: WorkerPool, payloads: list[bytes]
             ) -> dict[str, dict[str, Callable[[int], Awaitable[object]]]]:
    texts = [p.decode("utf-8", "ignore") for p in payloads]
    n = len(payloads)
    tasks = this_module()
    length, length_of_args, length_of_pickled = tasks.length, tasks.length_of_args, tasks.length_of_pickled

    def executor_call(fn: Callable[..., object], *args: object) -> Awaitable[object]:
        return asyncio.get_running_loop().run_in_executor(executor, fn, *args)

    return {
        "bytes": {
            "executor": lambda i: executor_call(length, payloads[i % n]),
            "pool": lambda i: pool.run(length, payloads[i % n]),
        },
        "pipeline": {
            "executor": lambda i: executor_call(length_of_args, texts[i % n], None, None, False),
            "pool": lambda i: pool.run(length_of_pickled, pickle.dumps((texts[i % n], None, None, False),
                                                                        protocol=pickle.HIGHEST_PROTOCOL)),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    executor = ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn"))
    pool = WorkerPool(args.workers)
    pool.start()
    print(f"{args.tasks} tasks, {IN_FLIGHT} in flight, {args.workers} worker process(es); corpus: "
          f"{'yes' if CORPUS.is_dir() else 'no (generated pages)'}; medians of {args.rounds} rounds")
    print(f"{'payload':>7} {'shape':>8} {'runner':>8} {'wall s':>7} {'µs/task':>8} {'CPU s':>6} {'µs/task':>8}"
          f" {'wall ratio':>10} {'CPU ratio':>9}")
    try:
        for label, size in SIZES.items():
            payloads = pages(size)
            for shape, runners in variants(executor, pool, payloads).items():
                figures: dict[str, list[tuple[float, float]]] = {name: [] for name in runners}
                for _ in range(args.rounds):
                    for name, call in runners.items():
                        figures[name].append(timed(call, args.tasks))
                report(label, shape, figures, args.tasks)
    finally:
        pool.stop()
        executor.shutdown()


def report(label: str, shape: str, figures: dict[str, list[tuple[float, float]]], tasks: int) -> None:
    medians = {name: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
               for name, runs in figures.items()}
    ref_wall, ref_cpu = medians["executor"]
    for name, (wall, cpu) in medians.items():
        print(f"{label:>7} {shape:>8} {name:>8} {wall:7.2f} {wall / tasks * 1e6:8.0f} {cpu:6.2f} "
              f"{cpu / tasks * 1e6:8.0f} {wall / ref_wall:9.2f}x {cpu / ref_cpu:8.2f}x")


if __name__ == "__main__":
    main()
