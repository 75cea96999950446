"""The real-page source of ``bench_crawl.py --real``: the corpus pages, read in place, served by nginx.

URL ``/p/<i>/<kind>/<name>.html`` is the corpus file ``<kind>/<name>.html``: nginx's ``alias``
maps every copy to the one file, so N distinct URLs cycle through the 79 pages (URL i is page
i mod 79) without a byte of them written anywhere. The corpus pages are copies of real sites and
must never be copied into the repository (``/work/shared/corpus/README.md``).

Validators are off (``etag off``, ``if_modified_since off``): nginx never answers 304, so a second
crawl downloads every page in full and measures changewatch's comparisons. nginx still sends
``Last-Modified`` (it has no directive to drop it short of filtering every body): changewatch's
conditional middleware sends it back as ``If-Modified-Since``, and nginx answers 200 regardless.
Bytes go out as stored, ``Content-Type: text/html`` without a charset: the pages say their own
(one is ISO-8859-1).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

CORPUS = Path("/work/shared/corpus/pages")
KINDS = ("articles", "structured", "listings")

_CONF = """
worker_processes 1;
daemon off;
pid {work}/nginx.pid;
error_log {work}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    {temps}
    types {{ text/html html; }}
    default_type application/octet-stream;
    access_log off;
    etag off;
    if_modified_since off;
    sendfile on;
    keepalive_requests 1000000;
    server {{
        listen 127.0.0.1:{port};
        location ~ "^/p/\\d+/((?:{kinds})/[^/]+\\.html)$" {{ alias {root}/$1; }}
        location / {{ return 404; }}
    }}
}}
"""


def corpus_pages(root: Path) -> list[Path]:
    """The corpus pages relative to *root*, in a fixed order; exits when there are none."""
    if not root.is_dir():
        raise SystemExit(f"real-page mode: the corpus directory {root} does not exist (see "
                         "/work/shared/corpus/README.md, or pass --corpus DIR); not falling back to synthetic pages")
    pages = sorted(p.relative_to(root) for kind in KINDS for p in (root / kind).glob("*.html"))
    if not pages:
        raise SystemExit(f"real-page mode: no {'/ '.join(KINDS)} *.html pages under {root}")
    return pages


def find_nginx() -> str:
    found = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx")
                                           if os.access(p, os.X_OK)), None)
    if found is None:
        raise SystemExit("real-page mode needs nginx (Debian package nginx)")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[Any], log: Path, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            said = log.read_text(encoding="utf-8", errors="replace")[-2000:] if log.exists() else ""
            raise SystemExit(f"nginx exited with {proc.returncode}:\n{said}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nginx did not listen on port {port} within {timeout} s")


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CorpusServer:
    """nginx on a free port serving the corpus under *root* in place; its own files (configuration,
    pid, logs) go to *workdir* (0755). nginx's workers run as another user (nobody) when started by
    root: they must be able to read *root*, which :meth:`_check` proves page by page."""

    def __init__(self, root: Path, workdir: Path):
        self.root = root.resolve()
        self.pages = corpus_pages(self.root)
        self.workdir = workdir
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.headers: dict[str, str] = {}
        self._proc: subprocess.Popen[bytes] | None = None
        try:
            self._start(find_nginx())
            self._check()
        except BaseException:
            self.stop()
            raise

    def _start(self, binary: str) -> None:
        w = self.workdir
        w.mkdir(parents=True, exist_ok=True)
        w.chmod(0o755)
        temps = " ".join(f"{name}_temp_path {w / name};" for name in ("client_body", "proxy", "fastcgi", "uwsgi",
                                                                       "scgi"))
        conf = w / "nginx.conf"
        conf.write_text(_CONF.format(work=w, temps=temps, port=self.port, kinds="|".join(KINDS), root=self.root),
                        encoding="utf-8")
        with (w / "stderr.log").open("wb") as stderr:  # a pipe nobody reads could fill up and block nginx
            self._proc = subprocess.Popen([binary, "-c", str(conf), "-p", str(w), "-e", str(w / "error.log")],
                                          stdout=subprocess.DEVNULL, stderr=stderr)
        _wait_for_port(self.port, self._proc, w / "stderr.log")

    def _check(self) -> None:
        """Every page once: 200, its exact bytes, and a 200 still when asked If-Modified-Since."""
        for i, page in enumerate(self.pages):
            body, headers = self._fetch(f"{self.base}/p/{i}/{page}")
            if body != (self.root / page).read_bytes():
                raise SystemExit(f"nginx served other bytes than {self.root / page}")
            self.headers = self.headers or headers
        lm = self.headers.get("Last-Modified")
        if lm is not None:
            self._fetch(f"{self.base}/p/0/{self.pages[0]}", {"If-Modified-Since": lm})
        if "ETag" in self.headers:
            raise SystemExit(f"nginx still sends an ETag: {self.headers}")

    def _fetch(self, url: str, headers: dict[str, str] | None = None) -> tuple[bytes, dict[str, str]]:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as resp:
                if resp.status != 200:
                    raise SystemExit(f"{url}: HTTP {resp.status}, expected 200")
                return resp.read(), dict(resp.headers.items())
        except urllib.error.HTTPError as exc:
            hint = " (can nginx's worker user read the corpus?)" if exc.code == 403 else ""
            raise SystemExit(f"{url}: HTTP {exc.code}, expected 200{hint}\n{self.error_log()}") from None

    def error_log(self) -> str:
        log = self.workdir / "error.log"
        return log.read_text(encoding="utf-8", errors="replace")[-2000:] if log.exists() else ""

    def urls(self, count: int) -> list[str]:
        return [f"{self.base}/p/{i}/{self.pages[i % len(self.pages)]}" for i in range(count)]

    def sizes(self, count: int) -> list[int]:
        sizes = [(self.root / page).stat().st_size for page in self.pages]
        return [sizes[i % len(sizes)] for i in range(count)]

    def describe(self, count: int) -> str:
        sizes = self.sizes(count)
        shown = ", ".join(f"{k}: {v}" for k, v in self.headers.items() if k in ("Content-Type", "Last-Modified",
                                                                                "ETag", "Server"))
        return (f"nginx: {self.base}, {count} URLs over {len(self.pages)} corpus pages read in place from {self.root}, "
                f"{min(sizes) // 1024}-{max(sizes) // 1024} KB (mean {sum(sizes) / len(sizes) / 1024:.1f} KB); "
                f"validators off, response headers {shown}")

    def cpu_seconds(self) -> float:
        """CPU time of the master and its worker(s)."""
        if self._proc is None:
            return 0.0
        pid = self._proc.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return _proc_cpu(pid) + sum(_proc_cpu(int(c)) for c in children)

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None
