"""``changewatch show CHANGE_ID``: one change as a person reads it, from a real store of each
backend: header, fields old → new, entities, the diff with the changed words marked (ANSI colour,
or [-old-]{+new+} without it, never colour with NO_COLOR), the evidence; an unknown id."""

from __future__ import annotations

import json

import pytest

from changewatch.core.comparisons import Kind
from changewatch.core.evidence import keep_body
from changewatch.store import Evidence, Outcome, Store
from changewatch.store.options import uri_argument

from ..store._support import T0, T1, T2, encoded
from ._learned import Capture, run

URL = "https://shop.example/p/1"
HEADERS = '[["Content-Type","text/html; charset=utf-8"]]'
DIFF = "  Terms of sale\n- Price: 89,00 EUR.\n+ Price: 79,00 EUR!\n+ Delivery in 2 days"


def commit(store: Store, kind: Kind, at: str, record: dict[str, object] | None = None,
           body: bytes | None = None) -> int | None:
    state = store.read("shop", "p1")
    logged = {"key": "p1", "url": URL, "kind": kind.value, "spider": "shop", "observed_at": at, **(record or {})}
    return store.commit("shop", "p1", state.version if state else None, Outcome(
        kind, URL, at, snapshot=encoded(), record=logged if kind.reported else None,
        evidence=None if body is None else Evidence(URL, 200, HEADERS, keep_body(body)))).change_id


@pytest.fixture
def changed(store: Store) -> int:
    commit(store, Kind.BASELINE, T0, body=b"<p>Price: 89,00 EUR.</p>")
    commit(store, Kind.FIELD, T1, {"changes": {"price": {"old": "89,00", "new": "79,00"}}})
    change = commit(store, Kind.CONTENT, T2, {
        "diff": DIFF, "distance": 9, "previous_observed_at": T1,
        "added": [{"key": "https://shop.example/p/2", "fields": {"title": "Kettle"}}],
        "changed": [{"key": "https://shop.example/p/3", "changes": {"price": {"old": "5", "new": "6"}}}]},
        body=b"<p>Price: 79,00 EUR!</p>")
    assert change is not None
    return change


def test_a_change_as_a_person_reads_it(changed: int, store_uri: str, capsys: Capture) -> None:
    code, out, err = run(capsys, "show", str(changed), "--store", store_uri)
    assert (code, err) == (0, "")
    assert "\x1b[" not in out  # not a terminal: no colour
    lines = out.splitlines()
    assert lines[0] == f"change {changed}: content of shop p1"
    assert f"  page:      {URL}" in lines and f"  observed:  {T2} (previous observation {T1})" in lines
    assert "  distance:  9 bits (simhash)" in lines
    at = lines.index("diff:")
    assert lines[at + 1:at + 5] == ["  Terms of sale", "- Price: [-89-],00 EUR[-.-]", "+ Price: {+79+},00 EUR{+!+}",
                                    "+ {+Delivery in 2 days+}"]
    assert "  + https://shop.example/p/2  title: Kettle" in lines and "      price: 5 → 6" in lines
    assert any(line.startswith(f"  after: {URL} as served at {T2} (HTTP 200") for line in lines)
    # the store's URI as typed, quoted for a shell where it must be (only a password becomes ***)
    assert f"  changewatch evidence {changed} --store {uri_argument(store_uri)} -o evidence-{changed}" in lines


def test_fields_and_colour(changed: int, store_uri: str, capsys: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    code, out, _ = run(capsys, "show", str(changed - 1), "--store", store_uri)
    assert code == 0 and "fields:" in out and "  price: 89,00 → 79,00" in out.splitlines()
    code, out, _ = run(capsys, "show", str(changed), "--store", store_uri, "--color", "always")
    assert code == 0 and "Price: \x1b[1;31m89\x1b[0m,00 EUR" in out and "\x1b[1;32m79\x1b[0m" in out
    assert "[-89-]" not in out
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, _ = run(capsys, "show", str(changed), "--store", store_uri, "--color", "always")
    assert code == 0 and "\x1b[" not in out and "[-89-]" in out


def test_json(changed: int, store_uri: str, capsys: Capture) -> None:
    code, out, _ = run(capsys, "show", str(changed), "--store", store_uri, "--json")
    found = json.loads(out)
    assert code == 0 and found["id"] == changed and found["record"]["diff"] == DIFF
    assert found["evidence"]["after"]["status"] == 200 and found["evidence"]["before"]["observed_at"] == T0


def test_an_unknown_change_is_one_line_and_exit_1(changed: int, store_uri: str, capsys: Capture) -> None:
    code, out, err = run(capsys, "show", str(changed + 100), "--store", store_uri)
    assert (code, out) == (1, "") and err.startswith(f"changewatch show: no change {changed + 100} in the store")
    assert len(err.splitlines()) == 1
    assert run(capsys, "show", "0", "--store", store_uri)[0] == 2
