"""Fixtures: nginx serving a temporary directory, the odd-case server, Twisted's static server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ...services import find_nginx, require
from .servers import Nginx, TwistedStatic


@pytest.fixture
def nginx(tmp_path: Path) -> Iterator[Nginx]:
    binary = find_nginx()
    require(binary is not None, "nginx", "apt-get install nginx (Debian package nginx); .ci/run installs it")
    assert binary is not None
    root = tmp_path / "www"
    root.mkdir()
    work = tmp_path / "nginx"
    work.mkdir()
    server = Nginx(binary, root, work)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def twisted_static(tmp_path: Path) -> Iterator[tuple[TwistedStatic, Path, str]]:
    root = tmp_path / "static"
    root.mkdir()
    server = TwistedStatic(root)
    base = server.start()
    try:
        yield server, root, base
    finally:
        server.stop()
