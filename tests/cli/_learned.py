"""What the tests of ``explain`` and ``noise`` share: a page with an ad slot, judged as a crawl
would, and the command's exit status and output."""

from __future__ import annotations

from typing import Any

import pytest

from changewatch.cli import main
from changewatch.core.comparisons import CompareContext, load_comparisons
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.verdict import Verdict, observe
from changewatch.store import Store

Capture = pytest.CaptureFixture[str]
URL = "https://news.example/terms"


def page(ad: str, stable: str = "You may cancel at any time.") -> str:
    return f"<html><body><h1>Terms</h1><p>{stable}</p><div>{ad}</div><footer>Contact us</footer></body></html>"


def judged(html: str, old: Snapshot | None, **options: Any) -> Verdict:
    obs = Observation("terms", URL, html=html, options=dict(options))
    return observe(obs, old, load_comparisons(), context=CompareContext(options=options))


def encode(snapshot: Snapshot | None) -> bytes:
    assert snapshot is not None
    return snapshot.encode(load_comparisons())


def stored(store: Store) -> Snapshot:
    state = store.read("watch", "terms")
    assert state is not None and state.snapshot is not None
    return Snapshot.decode(state.snapshot, load_comparisons())


def run(capsys: Capture, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
