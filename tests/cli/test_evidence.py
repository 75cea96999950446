"""``changewatch evidence CHANGE_ID -o DIR`` against real stores: both versions as served, and a
clear message with a non-zero exit for every way the evidence can be missing (a change that does
not exist, a body never kept or expired, a record of an error, a folder that cannot be written)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from changewatch.cli import main
from changewatch.core.comparisons import Kind
from changewatch.core.evidence import keep_body
from changewatch.store import Evidence, Lease, Outcome, Store, open_store

from ..store._support import T0, T1, T2, encoded

Capture = pytest.CaptureFixture[str]
URL = "https://shop.example/p/1"
BEFORE = "<html><body><p>Preis: 89,00 €</p></body></html>".encode()
AFTER = "<html><body><p>Preis: 79,00 €</p></body></html>".encode()
HEADERS = '[["X-Cache","HIT"],["content-type","text/html; charset=utf-8"],["X-Cache","MISS"]]'


def outcome(kind: Kind, at: str, body: bytes | None) -> Outcome:
    return Outcome(kind, URL, at, snapshot=None if kind is Kind.ERROR else encoded(),
                   record={"key": "p1", "kind": kind.value} if kind.reported else None,
                   error="blocked: 403" if kind is Kind.ERROR else None,
                   evidence=None if body is None else Evidence(URL, 200, HEADERS, keep_body(body)))


@pytest.fixture
def uri(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'state.db'}"


@pytest.fixture
def store(uri: str) -> Store:
    store = open_store(uri)
    yield store  # type: ignore[misc]
    store.close()


def run(capsys: Capture, *args: str) -> tuple[int, list[str], str]:
    code = main(["evidence", *args])
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def test_both_versions_are_written_as_served(store: Store, uri: str, tmp_path: Path, capsys: Capture) -> None:
    store.commit("shop", "p1", None, outcome(Kind.BASELINE, T0, BEFORE))
    store.commit("shop", "p1", 1, outcome(Kind.NONE, T1, None))
    change = store.commit("shop", "p1", 2, outcome(Kind.FIELD, T2, AFTER), lease=Lease("o", 60)).change_id
    out = tmp_path / "evidence"
    code, lines, err = run(capsys, str(change), "--store", uri, "-o", str(out))
    assert (code, err) == (0, "")
    assert sorted(Path(line).name for line in lines) == ["after.headers.json", "after.html", "before.headers.json",
                                                         "before.html", "change.json"]
    assert (out / "before.html").read_bytes() == BEFORE and (out / "after.html").read_bytes() == AFTER
    meta = json.loads((out / "after.headers.json").read_text(encoding="utf-8"))
    assert meta == {"file": "after.html", "url": URL, "status": 200, "observed_at": T2,
                    "sha256": keep_body(AFTER).digest, "size": len(AFTER),
                    "headers": [["X-Cache", "HIT"], ["content-type", "text/html; charset=utf-8"],
                                ["X-Cache", "MISS"]]}
    assert json.loads((out / "before.headers.json").read_text(encoding="utf-8"))["observed_at"] == T0
    logged = json.loads((out / "change.json").read_text(encoding="utf-8"))
    assert logged["id"] == change and logged["record"]["change_id"] == change
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary file left
    mask = os.umask(0)
    os.umask(mask)
    assert {p.stat().st_mode & 0o777 for p in out.iterdir()} == {0o666 & ~mask}  # as any new file


def test_no_such_change(store: Store, uri: str, tmp_path: Path, capsys: Capture) -> None:
    code, lines, err = run(capsys, "7", "--store", uri, "-o", str(tmp_path / "out"))  # a store with no history
    assert (code, lines) == (1, [])
    assert err == ("changewatch evidence: no change 7 in the store (never logged, or a delivered change deleted by "
                   "CHANGEWATCH_CHANGES_RETENTION)\n")
    assert not (tmp_path / "out").exists()


def test_a_body_never_kept_is_said_and_exits_non_zero(store: Store, uri: str, tmp_path: Path,
                                                       capsys: Capture) -> None:
    store.commit("shop", "p1", None, outcome(Kind.BASELINE, T0, None))  # evidence off, or before it existed
    change = store.commit("shop", "p1", 1, outcome(Kind.FIELD, T1, AFTER)).change_id
    out = tmp_path / "out"
    code, lines, err = run(capsys, str(change), "--store", uri, "-o", str(out))
    assert code == 1 and sorted(Path(line).name for line in lines) == ["after.headers.json", "after.html",
                                                                       "change.json"]
    assert f"the body before change {change} is not kept (evidence was off" in err and "RETENTION" in err
    assert "after change" not in err


def test_an_error_record_has_no_version_of_its_own(store: Store, uri: str, tmp_path: Path, capsys: Capture) -> None:
    store.commit("shop", "p1", None, outcome(Kind.BASELINE, T0, BEFORE))
    error = store.commit("shop", "p1", 1, outcome(Kind.ERROR, T1, None)).change_id
    code, _, err = run(capsys, str(error), "--store", uri, "-o", str(tmp_path / "out"))
    assert code == 1 and (tmp_path / "out" / "before.html").read_bytes() == BEFORE
    assert f"change {error} is of kind error: no version of the page is kept for it" in err


def test_a_key_that_never_had_a_good_page_is_said_so(store: Store, uri: str, tmp_path: Path,
                                                     capsys: Capture) -> None:
    first = store.commit("shop", "p1", None, outcome(Kind.ERROR, T0, None)).change_id
    code, lines, err = run(capsys, str(first), "--store", uri, "-o", str(tmp_path / "out"))
    assert code == 1 and [Path(line).name for line in lines] == ["change.json"]
    assert f"no good page was ever observed of key 'p1' before change {first}" in err
    assert "RETENTION" not in err and "not kept" not in err  # nothing was deleted: there was nothing
    # an error record that names a good page before it, of a key never good since (as the store says)
    store.commit("shop", "p2", None, Outcome(Kind.ERROR, URL, T0, record={"key": "p2", "kind": "error",
                                                                          "previous_observed_at": T0},
                                             error="http: 500"))
    second = max(c.id for c in store.changes("shop"))
    code, _, err = run(capsys, str(second), "--store", uri, "-o", str(tmp_path / "out2"))
    assert code == 1 and f"no good page was ever observed of key 'p2' before change {second}" in err


def test_an_error_after_a_retained_page_keeps_the_retention_message(store: Store, uri: str, tmp_path: Path,
                                                                    capsys: Capture) -> None:
    store.commit("shop", "p1", None, outcome(Kind.BASELINE, T0, None))  # a good page, its body not kept
    error = store.commit("shop", "p1", 1, Outcome(Kind.ERROR, URL, T1, record={
        "key": "p1", "kind": "error", "previous_observed_at": T0}, error="http: 500")).change_id
    code, _, err = run(capsys, str(error), "--store", uri, "-o", str(tmp_path / "out"))
    assert code == 1 and f"the body before change {error} is not kept" in err and "RETENTION" in err
    assert "no good page" not in err


def test_a_folder_that_cannot_be_written(store: Store, uri: str, tmp_path: Path, capsys: Capture) -> None:
    store.commit("shop", "p1", None, outcome(Kind.BASELINE, T0, BEFORE))
    change = store.commit("shop", "p1", 1, outcome(Kind.FIELD, T1, AFTER)).change_id
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    code, lines, err = run(capsys, str(change), "--store", uri, "-o", str(blocker / "out"))
    assert (code, lines) == (1, [])
    assert err.startswith(f"changewatch evidence: cannot write to {blocker / 'out'}: ")


def test_bad_arguments_and_stores(tmp_path: Path, capsys: Capture) -> None:
    missing = f"sqlite:///{tmp_path / 'none.db'}"
    code, _, err = run(capsys, "1", "--store", missing, "-o", str(tmp_path))
    assert code == 2 and "no such store" in err and not (tmp_path / "none.db").exists()
    code, _, err = run(capsys, "0", "--store", missing, "-o", str(tmp_path))
    assert code == 2 and "CHANGE_ID must be a change's id (1 or more), not 0" in err
    with pytest.raises(SystemExit) as exited:
        main(["evidence", "forty-two", "-o", str(tmp_path)])
    assert exited.value.code == 2
    with pytest.raises(SystemExit) as exited:
        main(["evidence", "1"])  # -o is required
    assert exited.value.code == 2
