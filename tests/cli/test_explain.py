"""``changewatch explain`` against a real store of each backend, and ``-a forget=``'s rewrite of a
key's learned state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.comparisons.noise import CALIBRATION
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.verdict import Verdict, observe
from changewatch.runtime.learning import LearningError, forget_learned, rewrite_learned
from changewatch.store import Outcome, Store

from ..store._support import T0
from ._learned import URL, Capture, encode, judged, page, run, stored


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


def test_explain_shows_what_is_learned(store: Store, store_uri: str, capsys: Capture) -> None:
    calibrated(store)
    code, out, err = run(capsys, "explain", "terms", "--store", store_uri, "--spider", "watch")
    assert (code, err) == (0, "")
    assert "watch terms: 4 calibration loads learned from" in out and "  ~ Ad: kettles" in out
    assert "~ You may cancel" not in out
    code, out, _ = run(capsys, "explain", "terms", "--store", store_uri, "--json")
    found = json.loads(out)
    assert code == 0 and found["calibration_loads"] == 4 and found["stored_volatile_lines"] == ["Ad: kettles"]
    assert found["noisy"] is False
    assert run(capsys, "explain", "nope", "--store", store_uri)[0] == 1


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


def test_explain_lists_slots_and_forget_slot_removes_one(store: Store, store_uri: str, capsys: Capture) -> None:
    calibrated(store)
    code, out, _ = run(capsys, "explain", "terms", "--store", store_uri, "--json")
    slots = json.loads(out)["slots"]
    assert code == 0 and slots[0]["kind"] == "slot" and slots[0]["number"] == 1
    assert (slots[0]["before"], slots[0]["after"]) == ("You may cancel at any time.", "Contact us")
    assert slots[0]["varied"] >= 2 and slots[0]["sample"].startswith("Ad: ")
    code, out, _ = run(capsys, "explain", "terms", "--store", store_uri)
    assert "1. between “You may cancel at any time.” and “Contact us”: varied" in out
    assert run(capsys, "explain", "terms", "--store", store_uri, "--forget-slot", "99")[0] == 1
    code, out, err = run(capsys, "explain", "terms", "--store", store_uri, "--forget-slot", "1")
    assert (code, err) == (0, "") and "slot 1 forgotten (between “You may cancel at any time.”" in out
    learned = stored(store).part("content").learned
    assert learned is not None and not learned.slots
    assert run(capsys, "explain", "terms", "--store", store_uri, "--forget-slot", "0")[0] == 2


def _fields_key(store: Store, store_uri: str, capsys: Capture) -> None:
    """A key compared by its fields whose price change was marked as noise (``changewatch noise``)."""
    def observed(price: str, old: Snapshot | None) -> Verdict:
        return observe(Observation("shop", URL, fields={"price": price}), old, load_comparisons(),
                       context=CompareContext())

    baseline = observed("49.00", None).keep
    store.commit("watch", "shop", None, Outcome(Kind.BASELINE, URL, T0, snapshot=encode(baseline)))
    change = observed("45.00", baseline)
    record = {"key": "shop", "kind": "field", **change.members}
    committed = store.commit("watch", "shop", 1, Outcome(Kind.FIELD, URL, T0, snapshot=encode(change.keep),
                                                        record=record))
    assert run(capsys, "noise", str(committed.change_id), "--store", store_uri)[0] == 0


def test_explain_shows_learned_fields_of_a_key_without_text(store: Store, store_uri: str, capsys: Capture) -> None:
    _fields_key(store, store_uri, capsys)
    code, out, err = run(capsys, "explain", "shop", "--store", store_uri)
    assert (code, err) == (0, "") and "fields learned as volatile: price" in out, (out, err)
    code, out, _ = run(capsys, "explain", "shop", "--store", store_uri, "--json")
    assert code == 0 and json.loads(out)["volatile_fields"] == ["price"] and json.loads(out)["slots"] == []
    code, _, err = run(capsys, "explain", "shop", "--store", store_uri, "--forget-slot", "1")
    assert code == 1 and "has no stored text: it has no slots" in err


def test_explain_of_an_unknown_key_says_how_to_name_its_spider(store: Store, store_uri: str,
                                                                capsys: Capture) -> None:
    _fields_key(store, store_uri, capsys)
    code, out, err = run(capsys, "explain", "my-own-key", "--store", store_uri)
    assert (code, out) == (1, "") and "key 'my-own-key' of spider 'watch' has no stored observation (a key of a " \
        "spider of your own: --spider NAME)" in err
    code, _, err = run(capsys, "explain", "shop", "--store", store_uri, "--spider", "prices")
    assert code == 1 and "of spider 'prices' has no stored observation" in err and "--spider NAME" not in err


def test_forget_drops_learned_fields_too(store: Store, store_uri: str, capsys: Capture) -> None:
    """-a forget=KEY undoes a mistaken ``changewatch noise`` of a price change: the price is
    compared again (else a price change would never be reported again)."""
    _fields_key(store, store_uri, capsys)
    assert forget_learned(store, "watch", "shop", load_comparisons()) == ("fields",)
    assert not stored_key(store, "shop").part("fields").volatile
    code, out, _ = run(capsys, "explain", "shop", "--store", store_uri)
    assert code == 0 and "nothing is learned of its fields or entities" in out
    assert forget_learned(store, "watch", "shop", load_comparisons()) == ()  # nothing left to forget
    calibrated(store)
    assert forget_learned(store, "watch", "terms", load_comparisons()) == ("content",)
    assert stored(store).part("content").learned is None


def test_explain_counts_read_as_english(store: Store, store_uri: str, capsys: Capture) -> None:
    calibrated(store)
    code, out, _ = run(capsys, "explain", "terms", "--store", store_uri)
    assert code == 0 and "1 slot, " in out and "1 slots" not in out and " 1 lines" not in out, out


def stored_key(store: Store, key: str) -> Snapshot:
    state = store.read("watch", key)
    assert state is not None and state.snapshot is not None
    return Snapshot.decode(state.snapshot, load_comparisons())


def test_explain_says_when_a_key_keeps_flipping() -> None:
    from changewatch.cli.explain import describe
    from changewatch.core.learned import Learned

    assert describe(Learned(), "a\nb")["flipping"] is False
    found = describe(Learned(flipped=(3, 5, 6), flipping=2), "a\nb")
    assert found["flipping"] is True and found["flip_backs"] == 3
