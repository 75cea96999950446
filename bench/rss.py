"""Peak RSS of a crawl process and of its children, for ``bench_crawl.py --memory``.

``ru_maxrss`` is not enough on Linux. A child starts with its parent's high-water mark: fork
copies it, vfork shares the parent's memory, and ``execve`` keeps the larger value. So the
``RUSAGE_CHILDREN`` figure of a changewatch worker (started with multiprocessing's ``spawn``,
i.e. fork + exec) is at least the crawl process's RSS at the time it started, however small the
worker stays. The same goes for the ``uname -p`` that ``platform`` runs. A process's own peak is
``VmHWM`` in ``/proc/PID/status``: the high-water mark of the memory it has had since its exec.
:class:`ChildPeaks` samples it for every child while the crawl runs; the last sample comes at
most *interval* seconds before a child exits.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import TracebackType


def _status_kb(pid: int | str, name: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{name}:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def vm_hwm_kb(pid: int | str = "self") -> int:
    """Peak RSS in KB of process *pid* since its exec; 0 if it is gone."""
    return _status_kb(pid, "VmHWM")


def vm_rss_kb(pid: int | str = "self") -> int:
    """RSS in KB of process *pid* now; 0 if it is gone."""
    return _status_kb(pid, "VmRSS")


def child_pids() -> list[int]:
    """This process's children, whichever of its threads started them."""
    me = os.getpid()
    pids: list[int] = []
    for task in Path(f"/proc/{me}/task").iterdir():
        try:
            pids.extend(int(pid) for pid in (task / "children").read_text().split())
        except OSError:  # a thread that just ended
            continue
    return pids


def _label(pid: int) -> str:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"
    if "spawn_main" in cmdline:
        return "worker"
    if "resource_tracker" in cmdline:
        return "resource tracker"
    return cmdline.split(" ", 1)[0].rsplit("/", 1)[-1] or "?"


class ChildPeaks:
    """A thread that samples every child's VmHWM each *interval* seconds: ``peaks`` maps a pid
    to (what it is: worker, resource tracker..., peak KB)."""

    def __init__(self, interval: float = 0.1):
        self.interval = interval
        self.peaks: dict[int, tuple[str, int]] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-child-rss", daemon=True)

    def __enter__(self) -> ChildPeaks:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._done.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._done.wait(self.interval):
            for pid in child_pids():
                kb = vm_hwm_kb(pid)
                label, peak = self.peaks.get(pid, ("", 0))
                if kb > peak:
                    self.peaks[pid] = (label or _label(pid), kb)
