"""Lease owners, and which of them a crawl may judge dead: real processes, killed for real."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from changewatch.store import Lease, open_store
from changewatch.store.leases import dead_owners, new_owner

_HOLD = """
import sys
from changewatch.store.leases import new_owner
print(new_owner(), flush=True)
sys.stdin.read()
"""

_COMMIT_AND_EXIT = """
import sys
from changewatch.core.comparisons import Kind
from changewatch.store import Lease, Outcome, open_store
from changewatch.store.leases import new_owner
owner = new_owner()
store = open_store(sys.argv[1])
store.commit("spider", "k", None, Outcome(Kind.FIELD, "u", "2024-01-01T00:00:00Z", record={"kind": "field"}),
             lease=Lease(owner, 3600))
store.close()
print(owner)
"""


def _holder() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-c", _HOLD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def test_an_owner_names_host_process_and_a_nonce() -> None:
    owner = new_owner()
    host, scope, pid, start, nonce = owner.split(":")
    assert host == socket.gethostname() and pid == str(os.getpid()) and scope and nonce
    if Path("/proc/self/stat").exists():
        assert start.isdigit()
    assert new_owner() != owner  # two crawls of one process are two owners
    assert dead_owners([owner]) == set()  # this process is alive


def test_a_process_that_is_gone_is_dead() -> None:
    proc, owner = _holder()
    try:
        assert dead_owners([owner]) == set()
    finally:
        proc.kill()
        proc.wait()
    assert dead_owners([owner]) == {owner}


def test_a_killed_process_not_yet_reaped_is_dead() -> None:
    if not Path("/proc/self/stat").exists():
        pytest.skip("zombies are told apart through /proc")
    proc, owner = _holder()
    try:
        os.kill(proc.pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while dead_owners([owner]) != {owner} and time.monotonic() < deadline:
            time.sleep(0.01)
        assert dead_owners([owner]) == {owner}
        assert Path(f"/proc/{proc.pid}").exists()  # a zombie until reaped below
    finally:
        proc.wait()


def test_a_pid_that_belongs_to_a_later_process_is_dead() -> None:
    if not Path("/proc/self/stat").exists():
        pytest.skip("start times come from /proc")
    proc, owner = _holder()
    try:
        host, scope, pid, start, nonce = owner.split(":")
        reused = ":".join([host, scope, pid, str(int(start) + 1), nonce])  # same pid, another process
        assert dead_owners([owner, reused]) == {reused}
    finally:
        proc.kill()
        proc.wait()


def test_owners_elsewhere_are_never_judged() -> None:
    proc, owner = _holder()
    proc.kill()
    proc.wait()
    host, scope, pid, start, nonce = owner.split(":")
    elsewhere = [":".join(["other-host", scope, pid, start, nonce]),  # another machine: its leases expire
                 ":".join([host, "another-scope", pid, start, nonce]),  # a container sharing the host name
                 "garbage", "a:b:c:d:e", ""]
    assert dead_owners(elsewhere) == set()
    assert dead_owners([*elsewhere, owner]) == {owner}


def test_a_dead_crawls_leases_are_claimed_at_once(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path}/state.db"
    done = subprocess.run([sys.executable, "-c", _COMMIT_AND_EXIT, uri], capture_output=True, text=True, check=True)
    owner = done.stdout.strip()
    store = open_store(uri)
    try:
        assert store.lease_owners("spider") == {owner}  # an hour's lease, still running
        me = new_owner()
        assert store.claim_undelivered("spider", Lease(me, 60)) == []
        dead = dead_owners(store.lease_owners("spider"))
        assert dead == {owner}
        [claimed] = store.claim_undelivered("spider", Lease(me, 60), dead_owners=dead)
        assert claimed.record == {"kind": "field"} and claimed.lease_owner == me
    finally:
        store.close()
