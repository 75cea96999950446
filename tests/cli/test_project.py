"""Inside a Scrapy project (scrapy.cfg here or above, or SCRAPY_SETTINGS_MODULE) every command
reads the project's CHANGEWATCH_STORE unless --store says otherwise; outside one, the default
store; a bad project setting is one line and exit 2."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from changewatch.cli import main
from changewatch.core.comparisons import Kind
from changewatch.core.evidence import keep_body
from changewatch.store import Evidence, Outcome, open_store

from ._learned import URL, Capture, encode, judged, page

HEADERS = '[["Content-Type","text/html; charset=utf-8"]]'
DIFF = "  Terms\n- Ad: kettles\n+ Ad: phones"


def a_store(path: Path) -> int:
    """A store with one key, ``terms``, and a content change of it (kept as evidence); its id."""
    store = open_store(f"sqlite:///{path}")
    try:
        before, after = page("Ad: kettles"), page("Ad: phones")
        old = judged(before, None).keep
        new = judged(after, old).keep
        store.commit("watch", "terms", None, Outcome(Kind.BASELINE, URL, "2024-05-01T00:00:00Z",
                                                     snapshot=encode(old), evidence=Evidence(
                                                         URL, 200, HEADERS, keep_body(before.encode()))))
        record = {"key": "terms", "url": URL, "kind": "content", "spider": "watch",
                  "observed_at": "2024-05-01T01:00:00Z", "diff": DIFF}
        change = store.commit("watch", "terms", 1, Outcome(Kind.CONTENT, URL, "2024-05-01T01:00:00Z",
                                                          snapshot=encode(new), record=record, evidence=Evidence(
                                                              URL, 200, HEADERS, keep_body(after.encode())))).change_id
    finally:
        store.close()
    assert change is not None
    return change


def a_project(root: Path, settings: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Scrapy project in *root* whose settings module holds *settings*; the working directory."""
    package = f"proj_{uuid.uuid4().hex[:10]}"  # a module name of its own: sys.modules keeps imported ones
    (root / package).mkdir(parents=True)
    (root / package / "__init__.py").write_text("")
    (root / package / "settings.py").write_text(f'BOT_NAME = "{package}"\n{settings}\n')
    (root / "scrapy.cfg").write_text(f"[settings]\ndefault = {package}.settings\n")
    monkeypatch.delenv("SCRAPY_SETTINGS_MODULE", raising=False)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.chdir(root)
    return root


def run(capsys: Capture, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_every_command_reads_the_projects_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: Capture) -> None:
    elsewhere = tmp_path / "elsewhere" / "watch.db"
    elsewhere.parent.mkdir()
    change = a_store(elsewhere)
    a_project(tmp_path / "myshop", f'CHANGEWATCH_STORE = "sqlite:///{elsewhere}"', monkeypatch)
    commands = {
        "status": ["status"], "show": ["show", str(change)], "changes": ["changes"],
        "report": ["report", "--since", "2024-01-01", "-o", "report.html"], "explain": ["explain", "terms"],
        "evidence": ["evidence", str(change), "-o", "evidence"], "notify": ["notify"], "noise": ["noise", str(change)],
    }
    for name, args in commands.items():
        code, out, err = run(capsys, *args)
        assert (code, err) == (0, ""), name
        assert "terms" in out or name in ("report", "notify", "evidence"), name
    assert "phones" in Path("report.html").read_text() and Path("evidence", "after.html").exists()
    assert not Path(".changewatch").exists()  # the default store was never looked for, nor made
    # --store wins over the project's
    code, _, err = run(capsys, "changes", "--store", f"sqlite:///{tmp_path / 'other.db'}")
    assert code == 2 and "other.db" in err


def test_settings_module_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: Capture) -> None:
    a_store(tmp_path / "watch.db")
    a_project(tmp_path / "proj", f'CHANGEWATCH_STORE = "sqlite:///{tmp_path / "watch.db"}"', monkeypatch)
    module = (tmp_path / "proj" / "scrapy.cfg").read_text().split("= ")[1].strip()
    (tmp_path / "proj" / "scrapy.cfg").unlink()
    monkeypatch.setenv("SCRAPY_SETTINGS_MODULE", module)
    code, out, _ = run(capsys, "status")
    assert code == 0 and out.startswith("ok ") and " watch terms " in out


def test_outside_a_project_the_default_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: Capture) -> None:
    monkeypatch.delenv("SCRAPY_SETTINGS_MODULE", raising=False)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "status")
    assert code == 2 and ".changewatch/state.db" in err and not (tmp_path / ".changewatch").exists()
    a_store(tmp_path / ".changewatch" / "state.db")
    assert run(capsys, "status")[0] == 0


def test_a_bad_project_setting_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture) -> None:
    a_project(tmp_path / "proj", 'CHANGEWATCH_THRESHOLD = "lots"', monkeypatch)
    code, out, err = run(capsys, "changes")
    assert (code, out) == (2, "") and len(err.splitlines()) == 1
    assert err.startswith("changewatch changes: the project's settings: CHANGEWATCH_THRESHOLD")
