"""``changewatch status`` against a real store of each backend: one line per key with its state,
the summary, the filters, and a missing store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from changewatch.core.comparisons import Kind
from changewatch.store import Outcome, Store

from ..store._support import T0, T1, T2, T3, encoded
from ._learned import Capture, run


def observe(store: Store, key: str, kind: Kind, at: str, *, error: str | None = None, url: str | None = None,
            record: bool = True, spider: str = "watch") -> None:
    state = store.read(spider, key)
    page = url or (state.url if state is not None else f"https://s.example/{key}")
    logged = {"key": key, "url": page, "kind": kind.value, "observed_at": at, "spider": spider}
    if error:
        logged["error"] = error
    good = kind not in (Kind.ERROR,) or (error or "").startswith("noisy:")
    store.commit(spider, key, state.version if state else None,
                 Outcome(kind, page, at, snapshot=encoded() if good else None, error=error,
                         record=logged if record and kind.reported else None))


@pytest.fixture
def watched(store: Store) -> Store:
    """A key of each state: ok (changed once), failing, gone, moved, noisy, and one of another spider."""
    observe(store, "ok", Kind.BASELINE, T0)
    observe(store, "ok", Kind.FIELD, T1)
    observe(store, "ok", Kind.NONE, T2)
    observe(store, "slow", Kind.BASELINE, T0)
    observe(store, "slow", Kind.ERROR, T1, error="timeout: no answer within 30 s")
    observe(store, "slow", Kind.ERROR, T2, error="timeout: no answer within 30 s", record=False)
    observe(store, "old", Kind.BASELINE, T0)
    observe(store, "old", Kind.ERROR, T1, error="gone: HTTP 410 on 2 consecutive runs")
    observe(store, "went", Kind.BASELINE, T0)
    observe(store, "went", Kind.MOVED, T1, url="https://new.example/went")
    observe(store, "busy", Kind.BASELINE, T0)
    observe(store, "busy", Kind.ERROR, T1, error="noisy: every line of the page varies from load to load (40 lines)")
    observe(store, "busy", Kind.NOISE, T2)
    observe(store, "p1", Kind.BASELINE, T3, spider="shop")
    return store


def lines(out: str) -> dict[str, str]:
    return {line.split()[2]: line for line in out.splitlines()[:-1]}


def test_one_line_per_key_with_its_state(watched: Store, store_uri: str, capsys: Capture) -> None:
    code, out, err = run(capsys, "status", "--store", store_uri)
    assert (code, err) == (0, "")
    found = lines(out)
    assert sorted(found) == ["busy", "ok", "old", "p1", "slow", "went"]
    ok = found["ok"]
    assert ok.startswith("ok ") and f"observed {T2}" in ok and f"changed {T1} (last change #" in ok
    assert "due every run" in ok
    assert found["slow"].startswith("failing ") and "timeout x2: timeout: no answer within 30 s" in found["slow"]
    assert found["old"].startswith("gone ") and "gone: HTTP 410" in found["old"]
    assert found["went"].startswith("moved ") and "now at https://new.example/went" in found["went"]
    assert found["busy"].startswith("noisy ") and "every line of the page varies" in found["busy"]
    assert found["p1"].startswith("ok ") and "changed never" in found["p1"]
    assert out.splitlines()[-1] == ("6 watched keys (shop: 1, watch: 5): 2 ok, 1 failing (timeout: 1), 1 gone, "
                                    "1 moved, 1 noisy; 6 due now or by every run")


def test_json_filters_and_the_summary(watched: Store, store_uri: str, capsys: Capture) -> None:
    code, out, _ = run(capsys, "status", "--store", store_uri, "--json", "--failing", "--spider", "watch")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [(r["key"], r["state"]) for r in rows[:-1]] == [("old", "gone"), ("slow", "failing")]
    slow = rows[1]
    assert slow["error_class"] == "timeout" and slow["error_streak"] == 2 and slow["last_observed"] == T2
    assert rows[-1]["summary"]["keys"] == 2 and rows[-1]["summary"]["states"]["failing"] == 1
    code, out, _ = run(capsys, "status", "--store", store_uri, "--spider", "nobody")
    assert (code, out) == (0, "0 watched keys: 0 ok, 0 failing, 0 gone, 0 moved, 0 noisy; 0 due now or by every run\n")


def test_keys_are_read_a_batch_at_a_time(watched: Store) -> None:
    from changewatch.store.status import StatusQuery

    every = [s.key for s in watched.statuses(StatusQuery(), batch_size=2)]  # type: ignore[attr-defined]
    assert every == ["p1", "busy", "ok", "old", "slow", "went"]
    assert len(every) == len(set(every))


def test_a_missing_store_is_not_created(tmp_path: Path, capsys: Capture) -> None:
    missing = tmp_path / "none.db"
    code, _, err = run(capsys, "status", "--store", f"sqlite:///{missing}")
    assert code == 2 and err.startswith("changewatch status: ") and len(err.splitlines()) == 1
    assert not missing.exists()


def test_the_keys_of_a_site_watch(store: Store, store_uri: str, capsys: Capture) -> None:
    for key in ("docs", "docs|https://docs.example/a", "docs|https://docs.example/b", "docsx|https://d.example/",
                "DOCS|https://docs.example/c", "do_s|https://docs.example/d", "blog|https://blog.example/"):
        observe(store, key, Kind.BASELINE, T0)
    code, out, _ = run(capsys, "status", "--store", store_uri, "--json", "--site-watch", "docs")
    assert code == 0
    assert [json.loads(line)["key"] for line in out.splitlines()[:-1]] == [
        "docs", "docs|https://docs.example/a", "docs|https://docs.example/b"]
    code, out, _ = run(capsys, "status", "--store", store_uri, "--site-watch", "docs", "--site-watch", "blog")
    assert sorted(lines(out)) == ["blog|https://blog.example/", "docs", "docs|https://docs.example/a",
                                  "docs|https://docs.example/b"]
    code, out, _ = run(capsys, "status", "--store", store_uri, "--site-watch", "do%")
    assert (code, out.splitlines()[0]) == (0, "0 watched keys: 0 ok, 0 failing, 0 gone, 0 moved, 0 noisy; "
                                              "0 due now or by every run")
