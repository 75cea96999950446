"""Inside a Scrapy project, the commands that judge or rewrite what a crawl stored (``explain``,
``noise``, ``compare``, ``preview --store``) judge with the project's comparison settings, as its
crawl does: CHANGEWATCH_COMPARISONS, and for ``compare`` CHANGEWATCH_THRESHOLD and the diff's
settings. A comparison that cannot be loaded is one line and exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.verdict import observe
from changewatch.store import Outcome, open_store

from ..core._support import article_html, prose_paragraphs
from ._learned import URL, Capture, page, run
from .test_project import a_project

ROOT = Path(__file__).resolve().parents[2]
TUNED = {"content": "tests.cli._tuned.TunedContent"}
DIFF = "  Terms\n  You may cancel at any time.\n- Ad: kettles\n+ Ad: phones\n  Contact us"


def _tuned_comparisons() -> tuple[object, ...]:
    return load_comparisons(TUNED)


def a_tuned_store(path: Path) -> int:
    """A store that a crawl with the project's TunedContent wrote: key ``terms``, baseline, then a
    content change (its id)."""
    comparisons = _tuned_comparisons()

    def judged(html: str, old: Snapshot | None) -> Snapshot:
        verdict = observe(Observation("terms", URL, html=html), old, comparisons, context=CompareContext())
        assert verdict.keep is not None
        return verdict.keep

    old = judged(page("Ad: kettles"), None)
    new = judged(page("Ad: phones"), old)
    store = open_store(f"sqlite:///{path}")
    try:
        store.commit("watch", "terms", None, Outcome(Kind.BASELINE, URL, "2024-05-01T00:00:00Z",
                                                     snapshot=old.encode(comparisons)))
        record = {"key": "terms", "url": URL, "kind": "content", "spider": "watch",
                  "observed_at": "2024-05-01T01:00:00Z", "diff": DIFF}
        change = store.commit("watch", "terms", 1, Outcome(Kind.CONTENT, URL, "2024-05-01T01:00:00Z",
                                                          snapshot=new.encode(comparisons), record=record)).change_id
    finally:
        store.close()
    assert change is not None
    return change


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: str = "") -> tuple[Path, int]:
    db = tmp_path / "state.db"
    change = a_tuned_store(db)
    a_project(tmp_path / "shop", f'CHANGEWATCH_STORE = "sqlite:///{db}"\nCHANGEWATCH_COMPARISONS = {TUNED!r}\n'
                                 f"{settings}", monkeypatch)
    return db, change


def test_explain_reads_what_the_projects_comparison_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: Capture) -> None:
    _project(tmp_path, monkeypatch)
    code, out, err = run(capsys, "explain", "terms", "--json")
    assert (code, err) == (0, ""), err
    assert json.loads(out)["stored_lines"] == 4  # Terms, the sentence, the ad, the footer


def test_noise_and_forget_slot_rewrite_the_projects_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: Capture) -> None:
    db, change = _project(tmp_path, monkeypatch)
    code, out, err = run(capsys, "noise", str(change))
    assert (code, err) == (0, ""), err
    assert "learned as noise (1 slot," in out
    store = open_store(f"sqlite:///{db}")
    try:  # written in the project's part version: the crawl reads what was learned
        state = store.read("watch", "terms")
        assert state is not None and state.snapshot is not None
        part = Snapshot.decode(state.snapshot, _tuned_comparisons()).part("content")
        assert part is not None and part.learned is not None and len(part.learned.slots) == 1
    finally:
        store.close()
    code, out, err = run(capsys, "explain", "terms", "--forget-slot", "1")
    assert (code, err) == (0, ""), err
    assert "slot 1 forgotten" in out


def test_a_comparison_that_cannot_be_loaded_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: Capture) -> None:
    _, change = _project(tmp_path, monkeypatch, 'CHANGEWATCH_COMPARISONS = {"content": "shop.nowhere.Content"}')
    for args in (["explain", "terms"], ["noise", str(change)]):
        code, out, err = run(capsys, *args)
        assert (code, out) == (2, "") and len(err.splitlines()) == 1, err
        assert f"changewatch {args[0]}: the project's settings: CHANGEWATCH_COMPARISONS: comparison 'content'" in err


# --- compare, as a process in the project's folder -------------------------------------------------------------

PARAGRAPHS = prose_paragraphs(3000, 60, seed=21)


def _compare(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return subprocess.run([sys.executable, "-m", "changewatch.cli", "compare", *args, "--json"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def _pages(tmp_path: Path) -> tuple[str, str]:
    edited = list(PARAGRAPHS)
    edited[20] += " The board quietly raised the annual fee for every member."
    old, new = tmp_path / "old.html", tmp_path / "new.html"
    old.write_text(article_html(PARAGRAPHS, header="News", footer="Copyright"), encoding="utf-8")
    new.write_text(article_html(edited, header="News", footer="Copyright"), encoding="utf-8")
    return str(old), str(new)


def _project_folder(root: Path, settings: str) -> Path:
    """A Scrapy project folder (found by scrapy.cfg, as ``scrapy crawl`` finds it)."""
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "settings.py").write_text(f'BOT_NAME = "shop"\n{settings}\n')
    (root / "scrapy.cfg").write_text("[settings]\ndefault = shop.settings\n")
    return root


def test_compare_judges_with_the_projects_threshold(tmp_path: Path) -> None:
    old, new = _pages(tmp_path)
    outside = _compare(tmp_path, old, new)
    assert outside.returncode == 1, outside.stderr
    distance = json.loads(outside.stdout)["distance"]
    assert 0 < distance < 64

    project = _project_folder(tmp_path / "project", f"CHANGEWATCH_THRESHOLD = {distance}")
    inside = _compare(project, old, new)  # the crawl there calls this edit noise: so does compare
    assert (inside.returncode, json.loads(inside.stdout)["kind"]) == (0, "noise"), inside.stderr
    assert json.loads(inside.stdout)["distance"] == distance
    told = _compare(project, old, new, "--threshold", "0")  # the option wins over the setting
    assert (told.returncode, json.loads(told.stdout)["kind"]) == (1, "content"), told.stderr


def test_compare_shows_the_diff_the_projects_crawl_would(tmp_path: Path) -> None:
    old, new = _pages(tmp_path)
    project = _project_folder(tmp_path / "project", "CHANGEWATCH_DIFF_CONTEXT = 0")
    diff = json.loads(_compare(project, old, new).stdout)["diff"]
    assert diff.startswith("- ") and all(line[:2] in ("- ", "+ ") for line in diff.splitlines()), diff
    assert json.loads(_compare(tmp_path, old, new).stdout)["diff"].startswith("  ")  # one line of context


def test_compare_with_a_comparison_that_cannot_be_loaded_exits_2(tmp_path: Path) -> None:
    old, new = _pages(tmp_path)
    project = _project_folder(tmp_path / "project", 'CHANGEWATCH_COMPARISONS = {"content": "shop.nowhere.Content"}')
    done = _compare(project, old, new)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.startswith("changewatch compare: the project's settings: CHANGEWATCH_COMPARISONS: ")
    assert len(done.stderr.splitlines()) == 1
