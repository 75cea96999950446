"""Learned slots: the worker CPU of a noise-only observation of a calibrated busy page, as a
ratio to that of the same observation of an uncalibrated one (nothing learned).

Run: ``.venv/bin/python bench/bench_slots.py`` (about a minute; ``--pages 4`` for a smoke run).
Needs the real-page corpus (../shared/corpus, or CHANGEWATCH_CORPUS).

Each page is a corpus article made busy as tests/core/_busy.py makes it (a trending box, a
sponsored line, a reshuffled related list, hashed class names). Its baseline is load 0; the
calibrated key learned from five calibration loads. Then loads 6… are observed against each
(the whole pure-core judgement, text extraction included: ``core.verdict.observe``), each
observation timed in CPU seconds (``time.process_time``), best of three. The issue's target:
the calibrated observation within 2x of the uncalibrated one.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from changewatch.core.comparisons import CompareContext, load_comparisons  # noqa: E402
from changewatch.core.comparisons.noise import CALIBRATION  # noqa: E402
from changewatch.core.observation import Observation  # noqa: E402
from changewatch.core.snapshot import Snapshot  # noqa: E402
from changewatch.core.text.decoding import decode_page  # noqa: E402
from changewatch.core.verdict import Verdict, observe  # noqa: E402
from tests.core._busy import BusyPage  # noqa: E402
from tests.core._support import corpus_files  # noqa: E402


def _observe(html: str, old: Snapshot | None, calibration: bool = False) -> Verdict:
    options = {CALIBRATION: True} if calibration else {}
    obs = Observation("k", "https://example.com/page", html=html, options=dict(options))
    return observe(obs, old, load_comparisons(), context=CompareContext(options=options))


def _timed(html: str, old: Snapshot) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        _observe(html, old)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--loads", type=int, default=10, help="noise-only observations per page")
    args = parser.parse_args()
    pages = [p for p in (BusyPage.of(decode_page(f.read_bytes())) for f in corpus_files("article")) if p][:args.pages]
    plain = learned = 0.0
    kinds: dict[str, int] = {}
    for page in pages:
        baseline = _observe(page.load(0), None).keep
        assert baseline is not None
        calibrated = baseline
        for n in range(1, 6):
            calibrated = _observe(page.load(n), calibrated, calibration=True).keep or calibrated
        for n in range(6, 6 + args.loads):
            html = page.load(n)
            plain += _timed(html, baseline)
            learned += _timed(html, calibrated)
            kind = _observe(html, calibrated).kind.value
            kinds[kind] = kinds.get(kind, 0) + 1
    count = len(pages) * args.loads
    print(f"{len(pages)} pages, {count} noise-only observations each way")
    print(f"uncalibrated: {1000 * plain / count:.2f} ms CPU per observation")
    print(f"calibrated:   {1000 * learned / count:.2f} ms CPU per observation ({kinds})")
    print(f"ratio calibrated / uncalibrated: {learned / plain:.2f} (target <= 2)")


if __name__ == "__main__":
    main()
