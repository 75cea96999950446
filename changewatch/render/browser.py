"""Which Chromium renders, and how it is launched so that it cannot reach the network by itself.

Every request a rendered page makes is intercepted and answered from a fetch Scrapy made (under
the SSRF guard: :mod:`changewatch.render.session`). What interception cannot see (a redirect's
next hop, DNS prefetching, preconnects, WebRTC, anything a future Chromium adds) must fail: the
browser is started with a proxy that is a port of ours nobody listens on, for every host
loopback included, and with a host resolver that resolves nothing. docs/security.md argues it.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
from pathlib import Path

__all__ = ["CHROMIUM_ARGS", "ClosedPort", "browser_args", "find_browser", "how_to_install"]

#: what this machine needs (a root user, no GPU, a closed network) and what keeps Chromium from
#: phoning home (updates, sync, field trials: connections a closed network refuses anyway)
CHROMIUM_ARGS = ("--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-default-apps", "--disable-extensions", "--mute-audio", "--no-default-browser-check",
                 "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
                 "--webrtc-ip-handling-policy=disable_non_proxied_udp")
_SYSTEM_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def how_to_install() -> str:
    return ("install Debian's chromium (apt-get install chromium) or set CHANGEWATCH_RENDER_BROWSER to a "
            "Chromium or Chrome executable")


def _playwright_browsers() -> list[str]:
    """Chromium builds Playwright installed itself (``playwright install chromium``), newest first."""
    root = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or str(Path.home() / ".cache" / "ms-playwright")
    found = glob.glob(os.path.join(root, "chromium-*", "chrome-linux*", "chrome"))
    found += glob.glob(os.path.join(root, "chromium_headless_shell-*", "chrome-linux*", "headless_shell"))
    return sorted((p for p in found if os.access(p, os.X_OK)), reverse=True)


def find_browser(configured: str | None) -> str | None:
    """The browser to launch: *configured* (CHANGEWATCH_RENDER_BROWSER, checked when settings are
    read), else Playwright's own Chromium when installed, else a system Chromium or Chrome on
    PATH (/usr/bin/chromium from Debian's package); None when there is none."""
    if configured:
        return configured
    for path in _playwright_browsers():
        return path
    for name in _SYSTEM_BROWSERS:
        if found := shutil.which(name):
            return found
    return None


class ClosedPort:
    """A loopback port bound and never listened on, held for the crawl: connecting to it is
    refused at once, and nothing else can take it. The browser's proxy."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]

    def close(self) -> None:
        self._sock.close()


def browser_args(proxy_port: int, *, as_root: bool | None = None) -> list[str]:
    """Chromium's command-line flags: :data:`CHROMIUM_ARGS`, no sandbox for root (Chromium
    refuses to start otherwise), and the closed network."""
    root = os.geteuid() == 0 if as_root is None else as_root
    return [*CHROMIUM_ARGS, *(["--no-sandbox"] if root else []),
            f"--proxy-server=http://127.0.0.1:{proxy_port}", "--proxy-bypass-list=<-loopback>",
            "--host-resolver-rules=MAP * ~NOTFOUND"]
