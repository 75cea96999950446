"""Who holds a lease on undelivered changes, and which holders are certainly dead.

An owner is ``host:scope:pid:start:nonce``: the host name; the scope in which its pid means
something (this boot and pid namespace: two containers sharing a host name are two scopes); the
process id; the process's start time as the OS tells it (empty where it does not); and a random
nonce, so that two crawls of one process are two owners. A crawl judges only owners of its own
scope: their process is gone, or the pid now belongs to a process started at another time. An
owner anywhere else is never judged dead here: its leases expire.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterable
from functools import lru_cache
from hashlib import blake2b
from pathlib import Path

__all__ = ["dead_owners", "new_owner"]


def new_owner() -> str:
    """A fresh owner for this process's leases."""
    pid = os.getpid()
    return ":".join([_host(), _scope(), str(pid), _start_time(pid) or "", secrets.token_hex(6)])


def dead_owners(owners: Iterable[str]) -> set[str]:
    """The owners among *owners* that ran in this scope and whose process is no longer running."""
    host, scope = _host(), _scope()
    dead = set()
    for owner in owners:
        parts = owner.rsplit(":", 4)
        if len(parts) != 5 or parts[0] != host or parts[1] != scope or not parts[2].isdigit():
            continue
        if not _running(int(parts[2]), parts[3]):
            dead.add(owner)
    return dead


def _running(pid: int, start: str) -> bool:
    if pid == os.getpid():
        return True
    now = _start_time(pid)
    if now is not None:
        return not start or now == start
    if Path("/proc/self/stat").exists():
        return False  # the OS tells start times and has none for this pid: no such process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, as another user
    return True


def _start_time(pid: int) -> str | None:
    """When process *pid* started, in clock ticks since boot (Linux); None where the OS does not
    say or there is no such (living) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: count fields after its last ')'
    fields = stat[stat.rfind(")") + 2:].split()
    if len(fields) < 20 or fields[0] in ("Z", "X"):  # a zombie has finished: its leases are free
        return None
    return fields[19]


@lru_cache(maxsize=1)
def _host() -> str:
    return socket.gethostname().replace(":", "_") or "localhost"


@lru_cache(maxsize=1)
def _scope() -> str:
    """This boot and pid namespace, hashed short; "-" where the OS tells neither."""
    parts = []
    for source in ("/proc/sys/kernel/random/boot_id", "/proc/self/ns/pid"):
        try:
            parts.append(os.readlink(source) if source.endswith("/pid") else Path(source).read_text().strip())
        except OSError:
            parts.append("")
    if not any(parts):
        return "-"
    return blake2b("|".join(parts).encode(), digest_size=4).hexdigest()
