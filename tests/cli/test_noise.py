"""``changewatch noise`` against a real store of each backend: a reported content change learned
as noise, and what it refuses to learn."""

from __future__ import annotations

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.learned import signature
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.verdict import Verdict, observe
from changewatch.store import Outcome, Store

from ..store._support import T0, T1, T2
from ._learned import URL, Capture, encode, judged, page, run, stored


def test_noise_learns_a_reported_change_and_the_next_real_edit_still_shows(store: Store, store_uri: str,
                                                                            capsys: Capture) -> None:
    snapshot = judged(page("Offer: free delivery"), None).keep
    store.commit("watch", "terms", None, Outcome(Kind.BASELINE, URL, T0, snapshot=encode(snapshot)))
    change = judged(page("Offer: 10% off"), snapshot)
    assert change.kind is Kind.CONTENT
    committed = store.commit("watch", "terms", 1, Outcome(Kind.CONTENT, URL, T1, snapshot=encode(change.keep),
                                                         record={"key": "terms", "kind": "content", **change.members}))
    assert committed.change_id is not None
    code, out, err = run(capsys, "noise", str(committed.change_id), "--store", store_uri)
    assert (code, err) == (0, ""), err
    assert "change 1 learned as noise (1 slot, 2 volatile line signatures now)" in out
    learned = stored(store).part("content").learned
    assert learned is not None and signature("Offer: 10% off") in learned.lines
    now = stored(store)
    assert judged(page("Offer: free delivery"), now).kind is Kind.NOISE  # the variation seen: quiet
    # the slot the diff showed is learned: another text there is quiet too, a stable edit is not
    assert judged(page("Offer: something else entirely"), now).kind is Kind.NOISE
    edit = judged(page("Offer: 10% off", stable="You may cancel within 14 days."), now)
    assert edit.kind is Kind.CONTENT and "+ You may cancel within 14 days." in (edit.diff or "")


def test_noise_refuses_what_it_cannot_learn(store: Store, store_uri: str, capsys: Capture) -> None:
    snapshot = judged(page("x"), None).keep
    store.commit("watch", "terms", None, Outcome(Kind.BASELINE, URL, T0, snapshot=encode(snapshot)))
    error = store.commit("watch", "terms", 1, Outcome(Kind.ERROR, URL, T2, error="blocked: 403",
                                                     record={"key": "terms", "kind": "error"}))
    code, _, err = run(capsys, "noise", str(error.change_id), "--store", store_uri)
    assert code == 1 and "is of kind error" in err
    assert run(capsys, "noise", "99", "--store", store_uri)[0] == 1
    assert run(capsys, "noise", "0", "--store", store_uri)[0] == 2


def _fields(price: str, stock: str) -> Observation:
    return Observation("terms", URL, html=page("x"), fields={"price": price, "stock": stock})


def _observed(obs: Observation, old: Snapshot | None) -> Verdict:
    return observe(obs, old, load_comparisons(), context=CompareContext())


def test_noise_learns_a_field_as_volatile_and_another_field_still_shows(store: Store, store_uri: str,
                                                                        capsys: Capture) -> None:
    snapshot = _observed(_fields("10", "3 left"), None).keep
    store.commit("watch", "terms", None, Outcome(Kind.BASELINE, URL, T0, snapshot=encode(snapshot)))
    change = _observed(_fields("10", "2 left"), snapshot)
    assert change.kind is Kind.FIELD
    committed = store.commit("watch", "terms", 1, Outcome(Kind.FIELD, URL, T1, snapshot=encode(change.keep),
                                                         record={"key": "terms", "kind": "field", **change.members}))
    code, out, err = run(capsys, "noise", str(committed.change_id), "--store", store_uri)
    assert (code, err) == (0, "") and "volatile fields now: stock" in out
    now = stored(store)
    assert _observed(_fields("10", "1 left"), now).kind is Kind.NOISE
    price = _observed(_fields("12", "1 left"), now)
    assert price.kind is Kind.FIELD and set(price.changes or {}) == {"price"}


def test_noise_learns_an_entity_sets_churn_where_it_was_and_elsewhere_it_still_shows(
        store: Store, store_uri: str, capsys: Capture) -> None:
    def listing(*paths: str) -> Observation:
        return Observation("terms", URL, entities=[{"key": f"https://shop.example{p}", "name": p} for p in paths])

    snapshot = _observed(listing("/p/1", "/ads/a"), None).keep
    store.commit("watch", "terms", None, Outcome(Kind.BASELINE, URL, T0, snapshot=encode(snapshot)))
    change = _observed(listing("/p/1", "/ads/b"), snapshot)
    assert change.kind is Kind.ENTITIES
    committed = store.commit("watch", "terms", 1, Outcome(Kind.ENTITIES, URL, T1, snapshot=encode(change.keep),
                                                         record={"key": "terms", "kind": "entities",
                                                                 **change.members}))
    code, out, err = run(capsys, "noise", str(committed.change_id), "--store", store_uri)
    assert (code, err) == (0, "") and "under: https://shop.example/ads/" in out, out
    now = stored(store)
    assert _observed(listing("/p/1", "/ads/c"), now).kind is Kind.NOISE
    assert _observed(listing("/p/1", "/p/2", "/ads/d"), now).kind is Kind.ENTITIES
