"""Learned noise on the real pages of the corpus (read in place): noise injected into each page —
a rotating box, a live counter, an ad slot, a block on half the loads, an A/B teaser, generated
class names — is learned by calibration and stays quiet over ten more loads, while a one-word
edit of the page's own text is still reported, its diff showing it."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.comparisons.noise import CALIBRATION
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.text.decoding import decode_page
from changewatch.core.verdict import Verdict, observe

from ._support import corpus_cases

_BODY = re.compile(r"<body[^>]*>", re.IGNORECASE)
_WORD = re.compile(r"(?<![\w&#;/=.-])([a-z]{8,})(?![\w-])")
ITEMS = ["Cats learn to open doors", "A river changes course", "Ten recipes for rain", "The comeback of trams"]
ADS = ["Buy the Kettle 3000 now", "Holidays in Norway from 499", "Switch your phone plan today"]


def noisy(html: str, n: int) -> str:
    tag = f"{random.Random(n).getrandbits(32):08x}"
    top = (f"<div class='x-{tag}'><h3>Trending now</h3><ul>"
           + "".join(f"<li>{ITEMS[(n + i) % 4]}</li>" for i in range(2)) + "</ul>"
           f"<p>{1204 + 17 * n:,} readers right now</p><div class='ad-{tag}'>{ADS[n % 3]}</div>"
           + ("<p>Breaking: live coverage of the vote</p>" if n % 2 else "")
           + f"<p>{'Read our weekly digest' if (n // 2) % 2 else 'Try the digest free for a month'}</p></div>")
    found = _BODY.search(html)
    at = found.end() if found else 0
    return html[:at] + top + html[at:]


def _observe(html: str, old: Snapshot | None, calibration: bool = False) -> Verdict:
    options = {CALIBRATION: True} if calibration else {}
    obs = Observation("k", "https://example.com/page", html=html, options=dict(options))
    return observe(obs, old, load_comparisons(), context=CompareContext(options=options))


def _edit(html: str, text: str) -> tuple[str, str] | None:
    """*html* with one word of its visible *text* replaced (a word found once in each), and the word."""
    for word in dict.fromkeys(_WORD.findall(text)):
        if html.count(word) == 1 and text.count(word) == 1:
            return html.replace(word, "zebrafish"), word
    return None


@pytest.mark.parametrize("path", corpus_cases("article", 12), ids=lambda p: Path(p).name if p else "no-corpus")
def test_injected_noise_is_learned_and_a_one_word_edit_still_shows(path: Path) -> None:
    html = decode_page(path.read_bytes())
    snapshot = _observe(noisy(html, 0), None).keep
    assert snapshot is not None and snapshot.text is not None
    for n in range(1, 6):
        verdict = _observe(noisy(html, n), snapshot, calibration=True)
        assert verdict.kind is Kind.NONE, verdict
        snapshot = verdict.keep or snapshot
    for n in range(6, 16):
        verdict = _observe(noisy(html, n), snapshot)
        assert verdict.kind in (Kind.NONE, Kind.NOISE), (n, verdict.members.get("diff"))
        snapshot = verdict.keep or snapshot
    edit = _edit(html, snapshot.text)
    if edit is None:
        pytest.skip(f"{path.name}: no word of its text found once in its HTML to edit")
    edited, word = edit
    verdict = _observe(noisy(edited, 16), snapshot)
    assert verdict.kind is Kind.CONTENT, verdict
    diff = verdict.diff or ""
    assert "zebrafish" in diff and word in diff and "readers right now" not in diff, diff
