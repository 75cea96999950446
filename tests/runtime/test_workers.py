"""The worker pool: real processes, real signals, real threads."""

from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing import spawn
from pathlib import Path
from typing import Any

import pytest

from changewatch.runtime.processes import State
from changewatch.runtime.workers import WorkerCrashed, WorkerError, WorkerPool, WorkerTaskError, WorkerTimeout

from ..polling import until, wait_until
from . import tasks

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
LOGGER = "changewatch.runtime.workers"


def running(pid: int) -> bool:
    """Whether process *pid* runs; a zombie (ended, not reaped yet) does not."""
    if Path("/proc/self/stat").exists():
        try:
            return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
        except OSError:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def make_pool() -> Iterator[Callable[..., WorkerPool]]:
    pools: list[WorkerPool] = []

    def make(workers: int, **options: Any) -> WorkerPool:
        pool = WorkerPool(workers, **options)
        pools.append(pool)
        pool.start()
        return pool

    yield make
    for pool in pools:
        pool.stop()


@contextmanager
def workers_that_exit_at_once() -> Iterator[None]:
    """Worker processes run ``false`` instead of Python: they exit with code 1 before ready."""
    python = spawn.get_executable()
    multiprocessing.set_executable(shutil.which("false") or "/bin/false")
    try:
        yield
    finally:
        multiprocessing.set_executable(python)


async def kill_mid_task(pool: WorkerPool, marker: Path) -> tuple[int, BaseException]:
    """Start a task that hangs, SIGKILL its worker: (the worker's pid, what the task raised)."""
    task = asyncio.ensure_future(pool.run(tasks.hang_after_writing_pid, str(marker).encode()))
    async with asyncio.timeout(10):
        while not (marker.exists() and marker.read_text()):
            await asyncio.sleep(0.01)
    victim = int(marker.read_text())
    os.kill(victim, signal.SIGKILL)
    results = await asyncio.gather(task, return_exceptions=True)
    assert isinstance(results[0], BaseException)
    return victim, results[0]


def test_a_task_runs_in_another_process_and_returns_its_bytes(make_pool: Any) -> None:
    pool = make_pool(1)

    async def main() -> tuple[bytes, bytes]:
        return await pool.run(tasks.pid, b""), await pool.run(tasks.echo, b"abc")

    worker, echoed = asyncio.run(main())
    assert int(worker) != os.getpid() and pool.processes == [int(worker)]
    assert echoed == b"abc"


def test_two_workers_run_two_tasks_at_once(make_pool: Any, tmp_path: Path) -> None:
    pool = make_pool(2)
    met = str(tmp_path / "met.txt").encode()

    async def main() -> list[bytes]:
        return await asyncio.gather(pool.run(tasks.meet, met), pool.run(tasks.meet, met))

    assert {int(pid) for pid in asyncio.run(main())} == set(pool.processes)


@pytest.mark.parametrize("workers", [0, 1])
def test_the_event_loop_runs_on_while_a_task_does(make_pool: Any, workers: int) -> None:
    pool = make_pool(workers)

    async def main() -> int:
        ticks = 0
        task = asyncio.ensure_future(pool.run(tasks.sleep, b"0.3"))
        while not task.done():
            await asyncio.sleep(0.01)
            ticks += 1
        await task
        return ticks

    assert asyncio.run(main()) >= 5


@pytest.mark.parametrize("workers", [0, 1])
def test_a_task_that_raises_fails_alone_and_its_worker_carries_on(make_pool: Any, workers: int) -> None:
    pool = make_pool(workers)

    async def main() -> tuple[bytes, WorkerTaskError, WorkerTaskError, bytes]:
        before = await pool.run(tasks.pid, b"")
        with pytest.raises(WorkerTaskError) as raised:
            await pool.run(tasks.fail, b"no such page")
        with pytest.raises(WorkerTaskError) as wrong_type:
            await pool.run(tasks.not_bytes, b"")
        return before, raised.value, wrong_type.value, await pool.run(tasks.pid, b"")

    before, error, wrong_type, after = asyncio.run(main())
    assert before == after
    assert (error.type_name, error.text) == ("ValueError", "no such page")
    assert str(error).startswith("ValueError: no such page") and "in fail" in str(error)
    assert wrong_type.type_name == "TypeError" and "returned int, not bytes" in wrong_type.text


def test_a_task_past_its_timeout_gets_its_worker_killed_and_replaced(make_pool: Any,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    pool = make_pool(1, task_timeout=60)

    async def main() -> tuple[int, float, int]:
        old = int(await pool.run(tasks.pid, b""))
        started = time.monotonic()
        with pytest.raises(WorkerTimeout, match=f"longer than 0.5 s; worker process {old} was killed"):
            await pool.run(tasks.sleep, b"30", timeout=0.5)
        return old, time.monotonic() - started, int(await pool.run(tasks.pid, b""))

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        old, took, new = asyncio.run(main())
    assert took < 3
    assert new != old and new in pool.processes and wait_until(lambda: not running(old))
    assert (pool.stats["timeouts"], pool.stats["replaced"], pool.stats["crashes"]) == (1, 1, 0)
    [warning] = caplog.records
    assert str(old) in warning.getMessage() and "timeout" in warning.getMessage()


def test_a_worker_killed_mid_task_fails_that_task_and_is_replaced(make_pool: Any, tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    pool = make_pool(1)

    async def main() -> tuple[int, BaseException, int]:
        victim, error = await kill_mid_task(pool, tmp_path / "pid")
        return victim, error, int(await pool.run(tasks.pid, b""))

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        victim, error, replacement = asyncio.run(main())
    assert isinstance(error, WorkerCrashed)
    assert f"worker process {victim} killed by signal SIGKILL" in str(error)
    assert replacement != victim and pool.processes == [replacement]
    assert (pool.stats["crashes"], pool.stats["replaced"]) == (1, 1)
    [warning] = caplog.records
    assert str(victim) in warning.getMessage() and "SIGKILL" in warning.getMessage()


def test_a_task_given_to_a_worker_that_died_idle_runs_on_another(make_pool: Any) -> None:
    """A worker killed while idle (the OOM killer, an operator) has not been noticed yet when the
    next task comes: that task never started, it must not fail as if its page had killed it."""
    pool = make_pool(1)

    async def main() -> tuple[int, bytes, int]:
        [worker] = pool._workers
        victim = worker.pid
        os.kill(victim, signal.SIGKILL)
        worker.process.join(5)  # blocking, all its threads gone: the event loop has not seen the EOF yet
        return victim, await pool.run(tasks.echo, b"innocent"), int(await pool.run(tasks.pid, b""))

    victim, reply, replacement = asyncio.run(main())
    assert reply == b"innocent"
    assert replacement != victim and pool.processes == [replacement]


CRAWL_PROCESS = """
import time
from changewatch.runtime.workers import WorkerPool
pool = WorkerPool(2)
pool.start()
print(*pool.processes, flush=True)
time.sleep(60)
"""


def test_workers_exit_when_the_crawl_process_dies() -> None:
    crawl = subprocess.Popen([sys.executable, "-c", CRAWL_PROCESS], stdout=subprocess.PIPE, env=ENV, text=True)
    try:
        assert crawl.stdout is not None
        pids = [int(pid) for pid in crawl.stdout.readline().split()]
        assert len(pids) == 2 and all(running(pid) for pid in pids)
        crawl.kill()
        crawl.wait()
        assert wait_until(lambda: not any(running(pid) for pid in pids)), "a worker outlived the crawl process"
    finally:
        crawl.kill()
        crawl.wait()


def _pipes_open(pid: int) -> dict[int, list[int]]:
    """Inode of every pipe process *pid* has open → the access mode (O_RDONLY…) of each fd on it."""
    pipes: dict[int, list[int]] = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        target = os.readlink(f"/proc/{pid}/fd/{fd}")
        if target.startswith("pipe:["):
            flags = Path(f"/proc/{pid}/fdinfo/{fd}").read_text().split("flags:")[1].split()[0]
            pipes.setdefault(int(target[6:-1]), []).append(int(flags, 8) & os.O_ACCMODE)
    return pipes


@pytest.mark.skipif(not Path("/proc/self/fdinfo").exists(), reason="reads /proc")
def test_only_the_crawl_process_holds_the_write_end_of_a_lifeline(make_pool: Any) -> None:
    pool = make_pool(3)
    workers = pool._workers  # the lifelines are the pool's business; this checks who else holds them
    lifelines = {w.pid: os.fstat(w.lifeline.fileno()).st_ino for w in workers}
    for worker in workers:
        held = _pipes_open(worker.pid)
        for pid, inode in lifelines.items():
            assert held.get(inode, []) == ([os.O_RDONLY] if pid == worker.pid else []), (worker.pid, pid)


UNGUARDED_SCRIPT = """
import asyncio
import json
import os

from changewatch.runtime.workers import WorkerPool
from tests.runtime import tasks
from tests.runtime.test_workers import kill_mid_task
from pathlib import Path

with open("runs.txt", "a") as f:  # one line each time this module body runs
    f.write(f"{os.getpid()}\\n")

async def kill_one_then_use_both(pool):
    victim, error = await kill_mid_task(pool, Path("victim.txt"))
    # until the replacement is ready, the other worker would take both tasks (one queued)
    while len(pool.processes) < 2 or any(w.state.name == "STARTING" for w in pool._workers):
        await asyncio.sleep(0.05)
    after = await asyncio.gather(pool.run(tasks.meet, b"met.txt"), pool.run(tasks.meet, b"met.txt"))
    return victim, type(error).__name__, [int(pid) for pid in after]

pool = WorkerPool(2)
pool.start()
before = pool.processes
victim, error, after = asyncio.run(kill_one_then_use_both(pool))
pool.stop()
print(json.dumps({"before": before, "victim": victim, "error": error, "after": after, "stats": pool.stats}))
"""


def test_an_unguarded_script_runs_once_though_a_worker_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "run.py").write_text(UNGUARDED_SCRIPT)
    proc = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, env=ENV, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len((tmp_path / "runs.txt").read_text().splitlines()) == 1, "a worker process re-ran the script"
    out = json.loads(proc.stdout)
    assert out["error"] == "WorkerCrashed" and out["victim"] in out["before"]
    assert len(set(out["after"]) - set(out["before"])) == 1 and out["stats"]["replaced"] == 1


def test_no_workers_run_tasks_in_a_thread_that_a_timeout_abandons(make_pool: Any) -> None:
    pool = make_pool(0, task_timeout=0.3)

    async def main() -> tuple[bytes, bytes]:
        thread = await pool.run(tasks.thread_id, b"")
        with pytest.raises(WorkerTimeout):
            await pool.run(tasks.sleep, b"2")
        return thread, await pool.run(tasks.pid, b"")

    thread, pid = asyncio.run(main())
    assert int(thread) != threading.get_ident() and int(pid) == os.getpid()
    assert pool.processes == [] and (pool.stats["inline"], pool.stats["timeouts"]) == (3, 1)


def test_workers_that_cannot_start_leave_tasks_to_a_thread(caplog: pytest.LogCaptureFixture) -> None:
    pool = WorkerPool(2)
    try:
        with workers_that_exit_at_once(), caplog.at_level(logging.WARNING, logger=LOGGER):
            pool.start()
        [warning] = caplog.records
        assert "could not start its worker processes" in warning.getMessage()
        assert "exited with code 1 before it was ready" in warning.getMessage()
        assert int(asyncio.run(pool.run(tasks.thread_id, b""))) != threading.get_ident()
        assert pool.processes == [] and pool.stats["inline"] == 1
    finally:
        pool.stop()


def test_a_pool_started_without_waiting_runs_tasks_once_its_workers_are_ready() -> None:
    pool = WorkerPool(2)
    try:
        pool.start(wait=False)  # returns at once: the workers boot while the crawl goes on
        assert len(pool._workers) == 2 and all(w.state is State.STARTING for w in pool._workers)

        async def main() -> list[bytes]:
            return await asyncio.gather(*(pool.run(tasks.pid, b"") for _ in range(6)))

        assert {int(pid) for pid in asyncio.run(main())} <= set(pool.processes)
        assert pool.stats["inline"] == 0
    finally:
        pool.stop()


def test_workers_that_cannot_start_without_waiting_leave_tasks_to_a_thread(
        caplog: pytest.LogCaptureFixture) -> None:
    pool = WorkerPool(1)
    try:
        with workers_that_exit_at_once(), caplog.at_level(logging.WARNING, logger=LOGGER):
            pool.start(wait=False)
            assert int(asyncio.run(pool.run(tasks.thread_id, b""))) != threading.get_ident()
        [warning] = caplog.records
        assert "could not start a worker process 3 times in a row" in warning.getMessage()
        assert pool.processes == [] and pool.stats["inline"] == 1
    finally:
        pool.stop()


def test_replacements_that_never_start_leave_tasks_to_a_thread(make_pool: Any, tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    pool = make_pool(1)

    async def main() -> tuple[BaseException, bytes]:
        _, error = await kill_mid_task(pool, tmp_path / "pid")
        return error, await pool.run(tasks.pid, b"")

    with workers_that_exit_at_once(), caplog.at_level(logging.WARNING, logger=LOGGER):
        error, pid = asyncio.run(main())
    assert isinstance(error, WorkerCrashed) and int(pid) == os.getpid()
    # two warnings, in either order: the crash is reported once its process is reaped, which
    # may be after the failed replacements
    assert sum("SIGKILL" in r.getMessage() for r in caplog.records) == 1
    [fallback] = [r.getMessage() for r in caplog.records if "3 times in a row" in r.getMessage()]
    assert len(caplog.records) == 2
    assert "could not start a worker process 3 times in a row" in fallback
    assert "exited with code 1 before it was ready" in fallback
    assert pool.processes == [] and pool.stats["inline"] == 1


def test_stop_ends_running_and_waiting_tasks_and_is_final(make_pool: Any) -> None:
    never_started = WorkerPool(1)
    never_started.stop()
    pool = make_pool(1)
    [pid] = pool.processes

    async def main() -> tuple[list[BaseException], float]:
        running_task = asyncio.ensure_future(pool.run(tasks.sleep, b"30"))
        waiting_task = asyncio.ensure_future(pool.run(tasks.pid, b""))
        assert await until(lambda: pool._workers[0].load == 2)  # both handed to the worker
        started = time.monotonic()
        pool.stop()
        took = time.monotonic() - started
        return await asyncio.gather(running_task, waiting_task, return_exceptions=True), took

    errors, took = asyncio.run(main())
    assert [str(e) for e in errors] == ["pool stopped"] * 2 and all(isinstance(e, WorkerError) for e in errors)
    assert took < 3 and not running(pid)
    pool.stop()
    with pytest.raises(WorkerError, match="pool stopped"):
        asyncio.run(pool.run(tasks.pid, b""))


def test_a_pool_outlives_an_event_loop(make_pool: Any) -> None:
    pool = make_pool(1)
    with pytest.raises(WorkerTimeout):  # the replacement is still starting when this loop closes
        asyncio.run(pool.run(tasks.sleep, b"30", timeout=0.3))
    assert int(asyncio.run(pool.run(tasks.pid, b""))) in pool.processes


def test_a_10_mb_payload_round_trips_intact(make_pool: Any) -> None:
    pool = make_pool(1)
    payload = os.urandom(10 * 1024 * 1024)
    assert asyncio.run(pool.run(tasks.echo, payload)) == payload


def test_handing_a_busy_worker_a_large_page_never_blocks_the_event_loop(make_pool: Any) -> None:
    """The worker reads its next task in a thread that waits for the GIL its busy main thread
    holds; a blocking write of a page larger than the socket buffer stalled the crawl until
    then. The rest is written when the socket takes it."""
    pool = make_pool(1)
    payload = os.urandom(8 * 1024 * 1024)

    async def main() -> tuple[float, bytes]:
        busy = asyncio.ensure_future(pool.run(tasks.spin, b"0.8"))
        await asyncio.sleep(0.2)  # the worker is spinning now
        loop = asyncio.get_running_loop()
        began = loop.time()
        echoed = asyncio.ensure_future(pool.run(tasks.echo, payload))
        await asyncio.sleep(0)  # the hand-over happens here: it must return at once
        handed_in = loop.time() - began
        await busy
        return handed_in, await echoed

    handed_in, echoed = asyncio.run(main())
    assert echoed == payload
    assert handed_in < 0.15, f"handing over 8 MB blocked the event loop for {handed_in:.3f} s"


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="no /dev/shm: payloads go over the socket")
def test_payloads_cross_in_shared_memory_intact_and_leave_no_file(make_pool: Any) -> None:
    """Payloads up to a slot are copied into the worker's arena; its file is unlinked as soon as
    the worker mapped it. Many tasks of mixed sizes, some larger than a slot (the socket), all
    come back intact: a slot is reused only after its task replied."""
    from changewatch.runtime.processes import ARENA_SLOT

    # this process's arena files only: other test processes (pytest-xdist workers) make their own
    mine = f"changewatch-worker-{os.getpid()}-*"
    before = set(Path("/dev/shm").glob(mine))
    pool = make_pool(2)
    sizes = [0, 1, 1000, 230_000, ARENA_SLOT, ARENA_SLOT + 1, 3 * ARENA_SLOT] * 6
    payloads = [os.urandom(n) for n in sizes]

    async def main() -> list[bytes]:
        return await asyncio.gather(*(pool.run(tasks.echo, p) for p in payloads))

    assert asyncio.run(main()) == payloads
    assert all(w.arena is not None for w in pool._workers)
    assert set(Path("/dev/shm").glob(mine)) == before
    pool.stop()
    assert set(Path("/dev/shm").glob(mine)) == before


def test_functions_a_worker_cannot_import_are_refused(make_pool: Any) -> None:
    pool = make_pool(0)

    def local(payload: bytes) -> bytes:
        return payload

    for fn in (lambda payload: payload, local, b"".join, Path("bound").write_bytes):
        with pytest.raises(ValueError, match="cannot run in a worker process"):
            asyncio.run(pool.run(fn, b""))  # type: ignore[arg-type]


def test_a_task_waiting_behind_one_that_kills_its_worker_runs_on_another(make_pool: Any, tmp_path: Path) -> None:
    """A worker holds a second task in its pipe while it runs the first: when the first kills
    it, the second was never started and must not fail with it."""
    pool = make_pool(1)

    async def main() -> tuple[BaseException | bytes, ...]:
        doomed = asyncio.ensure_future(pool.run(tasks.die, b""))
        await asyncio.sleep(0)  # handed over first
        waiting = asyncio.ensure_future(pool.run(tasks.pid, b""))
        return tuple(await asyncio.gather(doomed, waiting, return_exceptions=True))

    died, pid = asyncio.run(main())
    assert isinstance(died, WorkerCrashed)
    assert isinstance(pid, bytes) and int(pid) in pool.processes  # ran on the replacement


def test_a_worker_is_handed_the_next_task_before_it_finishes_the_first(make_pool: Any) -> None:
    pool = make_pool(1)

    async def main() -> list[int]:
        slow = asyncio.ensure_future(pool.run(tasks.sleep, b"0.3"))
        await asyncio.sleep(0.05)
        queued = asyncio.ensure_future(pool.run(tasks.pid, b""))
        await asyncio.sleep(0.05)
        loads = [w.load for w in pool._workers]
        await asyncio.gather(slow, queued)
        return loads

    assert asyncio.run(main()) == [2]


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="no /dev/shm: payloads go over the socket")
def test_arena_files_of_a_crawl_that_is_gone_are_swept(make_pool: Any) -> None:
    """A crawl killed while its workers start leaves their (empty) arena files: the next pool
    removes those of processes that no longer exist, and never a live process's."""
    from changewatch.runtime import processes

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    stale = Path("/dev/shm") / f"changewatch-worker-{dead}-test"
    live = Path("/dev/shm") / f"changewatch-worker-{os.getpid()}-test"
    stale.write_bytes(b"")
    live.write_bytes(b"")
    try:
        processes._swept = False
        make_pool(1)
        assert not stale.exists() and live.exists()
    finally:
        for path in (stale, live):
            path.unlink(missing_ok=True)


def _serve_in_child(conn: Any, lifeline: Any) -> None:
    from changewatch.runtime.worker_main import serve

    serve(conn, lifeline)


def test_a_worker_whose_crawl_closed_its_end_before_ready_exits_quietly(capfd: pytest.CaptureFixture[str]) -> None:
    """A crawl that stops while its workers start (a store refused at once) closes their
    connections: the worker's READY finds no reader, and that is no traceback on the crawl's stderr."""
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    lifeline_read, lifeline_write = context.Pipe(duplex=False)
    ours.close()  # the crawl is gone before the worker says it is ready
    child = context.Process(target=_serve_in_child, args=(theirs, lifeline_read))
    child.start()
    theirs.close()
    lifeline_read.close()
    child.join(30)
    lifeline_write.close()
    assert child.exitcode == 0
    assert "Traceback" not in capfd.readouterr().err
