"""``changewatch report``'s arguments and bad inputs: a missing store, a bad --since,
an unwritable -o, a period with nothing in it, a store with no health history, clock skew."""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from changewatch.cli import main
from changewatch.core.comparisons import Kind
from changewatch.store import Outcome
from changewatch.store.sqlite import SQLiteStore

from ..report.stores import Filler, every_kind
from ..store.test_sqlite_schema import older_released_store


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["report", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def store_uri(tmp_path: Path) -> str:
    store = SQLiteStore(tmp_path / "state.db")
    store.open()
    every_kind(store, datetime.now(UTC))
    store.close()
    return f"sqlite:///{tmp_path / 'state.db'}"


def test_a_missing_store_is_an_error_and_nothing_is_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    code, _, err = run(capsys, "--store", f"sqlite:///{tmp_path / 'typo.db'}", "-o", str(tmp_path / "r.html"))
    assert code == 2 and err.startswith("changewatch report: no such store:") and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no store, no report, no temporary file


@pytest.mark.parametrize("since", ["yesterday", "7 days", "-7d", "2026-13-01", ""])
def test_a_bad_since_is_an_error(store_uri: str, tmp_path: Path, since: str, capsys: pytest.CaptureFixture[str]
                                 ) -> None:
    code, _, err = run(capsys, "--store", store_uri, f"--since={since}", "-o", str(tmp_path / "r.html"))
    assert code == 2 and f"--since {since!r} is not a time" in err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("where", ["missing/dir/r.html", "dir", "a-file/r.html", "readonly/r.html"])
def test_an_unwritable_output_is_an_error_before_anything_is_read(store_uri: str, tmp_path: Path, where: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "readonly").mkdir(mode=0o500)
    (tmp_path / "a-file").write_text("not a directory")
    if where.startswith("readonly") and os.access(tmp_path / "readonly", os.W_OK):
        pytest.skip("this user (root) writes into read-only directories; the other cases are unwritable for anyone")
    code, _, err = run(capsys, "--store", store_uri, "-o", str(tmp_path / where))
    assert code == 2 and err.startswith(f"changewatch report: -o {tmp_path / where}: "), err
    assert list((tmp_path / "dir").iterdir()) == []


def test_a_period_with_nothing_in_it_is_an_empty_report_and_exit_0(store_uri: str, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.html"
    code, _, err = run(capsys, "--store", store_uri, "--since", "2999-01-01", "-o", str(out))
    assert code == 0 and "no changes since 2999-01-01T00:00:00Z" in err
    html = out.read_text(encoding="utf-8")
    assert "No changes in this period" in html and 'class="change ' not in html
    assert "failing watches" in html  # the summary still says what is failing now


def test_kind_and_spider_filters_and_the_limit(store_uri: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.html"
    assert run(capsys, "--store", store_uri, "--kind", "error,field", "-o", str(out))[0] == 0
    html = out.read_text(encoding="utf-8")
    assert html.count('<article class="change kind-error"') == 3 and html.count('class="change kind-field"') == 1
    assert 'class="change kind-content"' not in html
    code, _, err = run(capsys, "--store", store_uri, "--limit", "2", "-o", str(out))
    html = out.read_text(encoding="utf-8")
    assert code == 0 and html.count("<article ") == 2 and "6 more not shown" in html and "8 changes since" in err
    assert run(capsys, "--store", store_uri, "--spider", "nobody", "-o", str(out))[0] == 0
    assert "No changes in this period" in out.read_text(encoding="utf-8")
    code, _, err = run(capsys, "--store", store_uri, "--kind", "noise", "-o", str(out))
    assert code == 2 and "never logged" in err
    with pytest.raises(SystemExit):
        main(["report", "--store", store_uri, "--limit", "-1", "-o", str(out)])


def test_a_store_without_health_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A store of an older changewatch: its changes are reported, its sites say there is no history."""
    store = SQLiteStore(tmp_path / "state.db")
    store.open()
    f = Filler(store, datetime.now(UTC))
    f.commit("k", "https://a.example/", Kind.BASELINE, 2)
    f.commit("k", "https://a.example/", Kind.FIELD, 1, {"changes": {"price": {"old": "1", "new": "2"}}})
    store.close()
    db = sqlite3.connect(tmp_path / "state.db")
    db.execute("DELETE FROM health_history")
    db.commit()
    db.close()
    out = tmp_path / "r.html"
    assert run(capsys, "--store", f"sqlite:///{tmp_path / 'state.db'}", "-o", str(out))[0] == 0
    html = out.read_text(encoding="utf-8")
    assert "No health history in this period" in html and html.count("<article ") == 1


def test_observations_from_a_clock_ahead(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Clock skew: a change fetched "in the future" is stored at the store's clock, and reported."""
    store = SQLiteStore(tmp_path / "state.db")
    store.open()
    ahead = (datetime.now(UTC) + timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    store.commit("watch", "k", None, Outcome(Kind.BASELINE, "https://a.example/", ahead, snapshot=b"s"))
    store.commit("watch", "k", 1, Outcome(Kind.CONTENT, "https://a.example/", ahead, snapshot=b"t", distance=5,
                                          record={"kind": "content", "key": "k", "url": "https://a.example/",
                                                  "observed_at": ahead, "diff": "- a\n+ b"}))
    store.close()
    out = tmp_path / "r.html"
    assert run(capsys, "--store", f"sqlite:///{tmp_path / 'state.db'}", "-o", str(out))[0] == 0
    html = out.read_text(encoding="utf-8")
    assert html.count("<article ") == 1 and ahead not in html  # clamped to the store's clock
    assert 'class="bar kind-content"' in html  # charted on today, not off the chart


def test_an_older_schema_is_refused_without_upgrade(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    older_released_store(tmp_path / "state.db", monkeypatch)
    uri = f"sqlite:///{tmp_path / 'state.db'}"
    code, _, err = run(capsys, "--store", uri, "-o", str(tmp_path / "r.html"))
    assert code == 2 and "older than this changewatch's" in err and "--upgrade" in err
    assert run(capsys, "--store", uri, "--upgrade", "-o", str(tmp_path / "r.html"))[0] == 0
