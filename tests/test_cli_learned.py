"""``changewatch explain`` and ``changewatch noise`` (issue 14), and ``-a forget=``'s rewrite of a
key's learned state, against a real store of each backend."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from changewatch.cli import main
from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.comparisons.noise import CALIBRATION
from changewatch.core.learned import signature
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.verdict import Verdict, observe
from changewatch.learning import LearningError, rewrite_learned
from changewatch.store import Outcome, Store, open_store

from .store._support import T0, T1, T2
from .store.conftest import drop_postgresql_schema, postgresql_schema_uri

Capture = pytest.CaptureFixture[str]
URL = "https://news.example/terms"


@pytest.fixture(params=["sqlite", "postgresql"])
def uri(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'state.db'}"
        return
    name, uri = postgresql_schema_uri()
    yield uri
    drop_postgresql_schema(name)


@pytest.fixture
def store(uri: str) -> Iterator[Store]:
    store = open_store(uri)
    yield store
    store.close()


def page(ad: str, stable: str = "You may cancel at any time.") -> str:
    return f"<html><body><h1>Terms</h1><p>{stable}</p><div>{ad}</div><footer>Contact us</footer></body></html>"


def judged(html: str, old: Snapshot | None, **options: Any) -> Verdict:
    obs = Observation("terms", URL, html=html, options=dict(options))
    return observe(obs, old, load_comparisons(), context=CompareContext(options=options))


def encode(snapshot: Snapshot | None) -> bytes:
    assert snapshot is not None
    return snapshot.encode(load_comparisons())


def calibrated(store: Store) -> Snapshot:
    """A key whose ad slot was learned by three calibration loads, committed as a crawl would."""
    snapshot = judged(page("Ad: kettles"), None).keep
    assert snapshot is not None
    store.commit("watch", "terms", None, Outcome(Kind.BASELINE, URL, T0, snapshot=encode(snapshot)))
    for ad in ("Ad: phones", "Ad: kettles", "Ad: trips", "Ad: phones"):
        snapshot = judged(page(ad), snapshot, **{CALIBRATION: True}).keep or snapshot
    state = store.read("watch", "terms")
    assert state is not None
    store.replace_snapshot("watch", "terms", state.version, encode(snapshot))  # type: ignore[attr-defined]
    return snapshot


def stored(store: Store) -> Snapshot:
    state = store.read("watch", "terms")
    assert state is not None and state.snapshot is not None
    return Snapshot.decode(state.snapshot, load_comparisons())


def run(capsys: Capture, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_explain_shows_what_is_learned(store: Store, uri: str, capsys: Capture) -> None:
    calibrated(store)
    code, out, err = run(capsys, "explain", "terms", "--store", uri, "--spider", "watch")
    assert (code, err) == (0, "")
    assert "watch terms: 4 calibration loads learned from" in out and "  ~ Ad: kettles" in out
    assert "~ You may cancel" not in out
    code, out, _ = run(capsys, "explain", "terms", "--store", uri, "--json")
    found = json.loads(out)
    assert code == 0 and found["calibration_loads"] == 4 and found["stored_volatile_lines"] == ["Ad: kettles"]
    assert found["noisy"] is False
    assert run(capsys, "explain", "nope", "--store", uri)[0] == 1


def test_noise_learns_a_reported_change_and_the_next_real_edit_still_shows(store: Store, uri: str,
                                                                            capsys: Capture) -> None:
    snapshot = judged(page("Offer: free delivery"), None).keep
    store.commit("watch", "terms", None, Outcome(Kind.BASELINE, URL, T0, snapshot=encode(snapshot)))
    change = judged(page("Offer: 10% off"), snapshot)
    assert change.kind is Kind.CONTENT
    committed = store.commit("watch", "terms", 1, Outcome(Kind.CONTENT, URL, T1, snapshot=encode(change.keep),
                                                         record={"key": "terms", "kind": "content", **change.members}))
    assert committed.change_id is not None
    code, out, err = run(capsys, "noise", str(committed.change_id), "--store", uri)
    assert (code, err) == (0, ""), err
    assert "change 1 learned as noise (2 volatile line signatures now)" in out
    learned = stored(store).part("content").learned
    assert learned is not None and signature("Offer: 10% off") in learned.lines
    now = stored(store)
    assert judged(page("Offer: free delivery"), now).kind is Kind.NOISE  # the variation seen: quiet
    assert judged(page("Offer: something else entirely"), now).kind is Kind.CONTENT  # another text: a change
    edit = judged(page("Offer: 10% off", stable="You may cancel within 14 days."), now)
    assert edit.kind is Kind.CONTENT and "+ You may cancel within 14 days." in (edit.diff or "")


def test_noise_refuses_what_it_cannot_learn(store: Store, uri: str, capsys: Capture) -> None:
    snapshot = judged(page("x"), None).keep
    store.commit("watch", "terms", None, Outcome(Kind.BASELINE, URL, T0, snapshot=encode(snapshot)))
    error = store.commit("watch", "terms", 1, Outcome(Kind.ERROR, URL, T2, error="blocked: 403",
                                                     record={"key": "terms", "kind": "error"}))
    code, _, err = run(capsys, "noise", str(error.change_id), "--store", uri)
    assert code == 1 and "is of kind error" in err
    assert run(capsys, "noise", "99", "--store", uri)[0] == 1
    assert run(capsys, "noise", "0", "--store", uri)[0] == 2


def test_forget_drops_what_is_learned_and_keeps_the_baseline(store: Store) -> None:
    before = calibrated(store)
    assert rewrite_learned(store, "watch", "terms", lambda _: None, load_comparisons()) is None
    after = stored(store)
    assert after.part("content").learned is None and after.text == before.text
    with pytest.raises(LearningError):
        rewrite_learned(store, "watch", "absent", lambda _: None, load_comparisons())


def test_a_missing_store_is_not_created(tmp_path: Path, capsys: Capture) -> None:
    missing = tmp_path / "none.db"
    assert run(capsys, "explain", "k", "--store", f"sqlite:///{missing}")[0] == 2
    assert not missing.exists()
