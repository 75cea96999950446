"""`changewatch compare OLD.html NEW.html`: exit 0 none/noise, 1 a change, 2 an error."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from changewatch.cli import main

from ..core._support import CORPUS_PAGES, CORPUS_SKIP_REASON, article_html, prose_paragraphs, prose_words

PARAGRAPHS = prose_paragraphs(3000, 60, seed=21)
EDIT = "The board quietly raised the annual fee for every member."

Write = Callable[[str, str | bytes], str]
Capture = pytest.CaptureFixture[str]


def page(paragraphs: list[str] = PARAGRAPHS, header: str = "Updated 10:32 PM") -> str:
    return article_html(paragraphs, header=header, footer="Copyright")


def edited(index: int = 20, sentence: str = EDIT) -> str:
    paragraphs = list(PARAGRAPHS)
    paragraphs[index] = f"{paragraphs[index]} {sentence}"
    return page(paragraphs)


@pytest.fixture
def write(tmp_path: Path) -> Write:
    def write(name: str, content: str | bytes) -> str:
        path = tmp_path / name
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_bytes(content)
        return str(path)

    return write


def run(capsys: Capture, *args: str) -> tuple[int, str, str]:
    code = main(["compare", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_identical_pages_exit_0_none(write: Write, capsys: Capture) -> None:
    code, out, _ = run(capsys, write("old.html", page()), write("new.html", page()))
    assert code == 0
    assert out.strip() == "none"


def test_volatile_only_changes_exit_0_noise(write: Write, capsys: Capture) -> None:
    old = write("old.html", page(header="Updated 3 minutes ago, token=abc123"))
    new = write("new.html", page(header="Updated 2 hours ago, token=ffe9d2"))
    code, out, _ = run(capsys, old, new)
    assert code == 0
    assert out.strip() == "noise"


def _fetched_at(path: str, at: datetime) -> str:
    os.utime(path, (at.timestamp(), at.timestamp()))
    return path


@pytest.mark.parametrize(("old", "new"), [
    ("Doors open at 19:30.", "Doors open at 21:00."),
    ("Application deadline: 12 March 2027.", "Application deadline: 19 March 2027."),
    ("We are open on Tuesday at 6 pm.", "We are open on Thursday at 6 pm."),
    ("Saturday: 10:00 - 16:00", "Saturday: 10:00 - 14:00"),
    ("Roundhay Park reopened on Saturday after a year of work",
     "Roundhay Park reopened on Sunday after a year of work"),
    ("The library is closed today.", "The library is closed tomorrow."),
    ("Subscribe today for £1 a week.", "Subscribe now for £1 a week."),
])
def test_a_changed_date_or_time_is_a_change_shown_as_written(write: Write, capsys: Capture, old: str, new: str) -> None:
    code, out, _ = run(capsys, write("old.html", page(header=old)), write("new.html", page(header=new)))
    assert code == 1 and out.startswith("content ")
    assert f"- {old}" in out and f"+ {new}" in out


def test_the_files_modification_times_are_their_fetch_times(write: Write, capsys: Capture) -> None:
    at = datetime(2026, 12, 5, 14, 32, 20, tzinfo=UTC)
    later = at + timedelta(hours=2, minutes=13)
    # a stamp in its own zone that shows each file's fetch time is a clock
    old = _fetched_at(write("old.html", page(header=f"Generated {at:%Y-%m-%d %H:%M} UTC")), at)
    new = _fetched_at(write("new.html", page(header=f"Generated {later:%Y-%m-%d %H:%M} UTC")), later)
    code, out, _ = run(capsys, old, new)
    assert (code, out.strip()) == (0, "noise")
    # the same stamps in files fetched at other times are the pages' words
    _fetched_at(old, at - timedelta(days=3))
    code, out, _ = run(capsys, old, new)
    assert code == 1 and f"- Generated {at:%Y-%m-%d %H:%M} UTC" in out
    # a bare time of day that moved as the clock did between the two fetches is a clock's
    old = _fetched_at(write("old.html", page(header=f"Updated · {at + timedelta(hours=1):%H:%M}")), at)
    new = _fetched_at(write("new.html", page(header=f"Updated · {later + timedelta(hours=1):%H:%M}")), later)
    code, out, _ = run(capsys, old, new)
    assert (code, out.strip()) == (0, "noise")
    # and never assumed to be in some zone where it would match: moved otherwise, it is content
    _fetched_at(new, later + timedelta(minutes=40))
    code, out, _ = run(capsys, old, new)
    assert code == 1 and f"+ Updated · {later + timedelta(hours=1):%H:%M}" in out


def test_a_bare_time_that_shows_the_fetch_time_less_the_age_on_its_line_is_a_clock(write: Write,
                                                                                  capsys: Capture) -> None:
    at = datetime(2026, 12, 5, 9, 32, tzinfo=UTC)
    later = datetime(2026, 12, 5, 10, 0, tzinfo=UTC)
    hours = "Saturday: 10:00 - 16:00"

    def fetched(name: str, stamp: str, when: datetime, opening: str = hours) -> str:
        return _fetched_at(write(name, page(header=f"{stamp}</p><p>{opening}")), when)

    old = fetched("old.html", "Updated 2 minutes ago · 09:30", at)
    new = fetched("new.html", "Updated 5 minutes ago · 09:55", later)
    code, out, _ = run(capsys, old, new)
    assert (code, out.strip()) == (0, "noise")
    # the opening hours beside it are the page's words: an edit of them is a change, as written
    new = fetched("new.html", "Updated 5 minutes ago · 09:55", later, "Saturday: 10:00 - 14:00")
    code, out, _ = run(capsys, old, new)
    assert code == 1 and f"- {hours}" in out and "+ Saturday: 10:00 - 14:00" in out
    assert "  Updated\n" in out and "09:" not in out  # the clock, shown without its times
    # a time that is neither the fetch time nor the fetch time less the stated age is content
    new = fetched("new.html", "Updated 5 minutes ago · 09:40", later)
    code, out, _ = run(capsys, old, new)
    assert code == 1 and "+ Updated · 09:40" in out


def test_content_change_exit_1_with_distance_and_diff(write: Write, capsys: Capture) -> None:
    code, out, _ = run(capsys, write("old.html", page()), write("new.html", edited()))
    assert code == 1
    first, *diff = out.rstrip("\n").split("\n")
    assert first.startswith("content (simhash distance ") and first.endswith(" bits)")
    assert any(line.startswith("+ ") and EDIT in line for line in diff)
    assert any(line.startswith("- ") for line in diff)


def test_json_output(write: Write, capsys: Capture) -> None:
    code, out, _ = run(capsys, write("old.html", page()), write("new.html", edited()), "--json")
    assert code == 1
    record = json.loads(out)
    assert record["kind"] == "content"
    assert isinstance(record["distance"], int)
    assert EDIT in record["diff"]
    assert "error" not in record

    code, out, _ = run(capsys, write("a.html", page()), write("b.html", page()), "--json")
    assert code == 0 and json.loads(out) == {"kind": "none"}


def test_threshold(write: Write, capsys: Capture) -> None:
    old, new = write("old.html", page()), write("new.html", edited())
    code, out, _ = run(capsys, old, new, "--json")
    distance = json.loads(out)["distance"]
    assert code == 1 and distance <= 6  # a one-sentence edit moves few bits
    code, out, _ = run(capsys, old, new, "--threshold", str(distance), "--json")
    assert code == 0
    assert json.loads(out) == {"kind": "noise", "distance": distance}


def test_threshold_exceeded_is_content(write: Write, capsys: Capture) -> None:
    paragraphs = list(PARAGRAPHS)
    paragraphs[:25] = [" ".join(prose_words(60, seed=900 + i)) for i in range(25)]
    old, new = write("old.html", page()), write("new.html", page(paragraphs))
    code, out, _ = run(capsys, old, new, "--json")
    distance = json.loads(out)["distance"]
    assert code == 1 and distance >= 2
    assert run(capsys, old, new, "--threshold", str(distance - 1))[0] == 1
    assert run(capsys, old, new, "--threshold", str(distance))[0] == 0


def test_region(write: Write, capsys: Capture) -> None:
    old = write("old.html", "<nav>Menu</nav><main><p>The rules</p></main><aside>Ad one</aside>")
    outside = write("outside.html", "<nav>Menu</nav><main><p>The rules</p></main><aside>Ad two</aside>")
    inside = write("inside.html", "<nav>Menu</nav><main><p>The new rules</p></main><aside>Ad one</aside>")
    assert run(capsys, old, outside, "--region", "main")[0] == 0
    assert run(capsys, old, outside)[0] == 1
    code, out, _ = run(capsys, old, inside, "--region", "main")
    assert code == 1 and "+ The new rules" in out


def test_region_matching_nothing_on_the_new_page_is_an_error(write: Write, capsys: Capture) -> None:
    old = write("old.html", "<main><p>The rules</p></main>")
    new = write("new.html", "<div id='redesign'><p>The rules</p></div>")
    code, out, _ = run(capsys, old, new, "--region", "main", "--json")
    assert code == 2
    assert json.loads(out)["kind"] == "error"


def test_sort_lines(write: Write, capsys: Capture) -> None:
    items = [f"<li>{w}</li>" for w in prose_words(30, seed=4)]
    shuffled = list(items)
    random.Random(5).shuffle(shuffled)
    old, new = write("old.html", f"<ul>{''.join(items)}</ul>"), write("new.html", f"<ul>{''.join(shuffled)}</ul>")
    assert run(capsys, old, new)[0] == 1
    code, out, _ = run(capsys, old, new, "--sort-lines")
    assert code == 0 and out.strip() == "noise"


def test_blocked_new_page_exit_2(write: Write, capsys: Capture) -> None:
    blocked = write("blocked.html", "<h1>Access Denied</h1><p>You don't have permission to access this page.</p>")
    code, out, _ = run(capsys, write("old.html", page()), blocked)
    assert code == 2
    lines = out.strip().split("\n")
    assert lines[0] == "error" and lines[1].startswith("blocked")


def test_blocked_old_page_exit_2(write: Write, capsys: Capture) -> None:
    blocked = write("blocked.html", "<h1>Access Denied</h1><p>You don't have permission to access this page.</p>")
    code, out, _ = run(capsys, blocked, write("new.html", page()), "--json")
    assert code == 2
    assert json.loads(out) == {"kind": "error", "error": "old page: blocked: page says 'Access Denied'"}


def test_empty_new_page_exit_2(write: Write, capsys: Capture) -> None:
    code, out, _ = run(capsys, write("old.html", page()), write("new.html", b""), "--json")
    assert code == 2
    record = json.loads(out)
    assert record["kind"] == "error" and "empty" in record["error"]


def test_invalid_region_exit_2(write: Write, capsys: Capture) -> None:
    code, out, err = run(capsys, write("old.html", page()), write("new.html", page()), "--region", "main[")
    assert code == 2
    assert out == ""
    assert "invalid region" in err


def test_unreadable_files_exit_2(write: Write, capsys: Capture, tmp_path: Path) -> None:
    good = write("old.html", page())
    for missing in (str(tmp_path / "missing.html"), str(tmp_path)):
        code, out, err = run(capsys, good, missing)
        assert code == 2
        assert out == ""
        assert err.startswith("changewatch compare: cannot read") and missing in err
        assert run(capsys, missing, good)[0] == 2


@pytest.mark.parametrize("args", [[], ["only-one.html"], ["a", "b", "--threshold", "65"],
                                  ["a", "b", "--threshold", "x"], ["a", "b", "--unknown"]])
def test_usage_errors_exit_2(args: list[str], capsys: Capture) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["compare", *args])
    assert exc.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_non_utf8_pages(write: Write, capsys: Capture) -> None:
    old = write("old.html", "<p>Prix : 89 € — café crème</p>".encode("cp1252"))
    same = write("same.html", "<p>Prix : 89 € — café crème</p>".encode("cp1252"))
    new = write("new.html", "<p>Prix : 79 € — café crème</p>".encode("cp1252"))
    assert run(capsys, old, same)[0] == 0
    code, out, _ = run(capsys, old, new)
    assert code == 1 and "+ Prix : 79 € — café crème" in out


def test_real_before_and_after_pair_from_the_corpus(capsys: Capture) -> None:
    before = CORPUS_PAGES / "listings" / "realestate-patchofland.com-investments.html"
    after = CORPUS_PAGES / "listings" / "realestate-patchofland.com-investments-capture2.html"
    if not (before.is_file() and after.is_file()):
        pytest.skip(CORPUS_SKIP_REASON)
    code, out, _ = run(capsys, str(before), str(after), "--json")
    assert code == 1
    record = json.loads(out)
    assert record["kind"] == "content" and record["diff"]
    assert run(capsys, str(before), str(before))[0] == 0


# --- as a process ---------------------------------------------------------------------------------------------

def _process(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_as_a_subprocess(write: Write) -> None:
    old, new = write("old.html", page()), write("new.html", edited())
    done = _process([sys.executable, "-m", "changewatch.cli", "compare", old, new, "--json"])
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["kind"] == "content"

    same = _process([sys.executable, "-m", "changewatch.cli", "compare", old, old])
    assert (same.returncode, same.stdout.strip()) == (0, "none")

    missing = _process([sys.executable, "-m", "changewatch.cli", "compare", old, new + ".missing"])
    assert missing.returncode == 2
    assert "cannot read" in missing.stderr


def test_console_script(write: Write) -> None:
    script = Path(sys.executable).parent / "changewatch"
    if not script.is_file():
        pytest.skip(f"console script not installed next to {sys.executable}")
    old, new = write("old.html", page()), write("new.html", edited())
    done = _process([str(script), "compare", old, new])
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("content (simhash distance ")


def test_a_change_of_case_is_a_content_change_shown_as_written(write: Write, capsys: Capture) -> None:
    body = "<h1>{name} 3.0</h1><p>{name} parses JSON at gigabytes per second.</p><p>Try {name} today.</p>"
    old = write("old.html", body.format(name="simdjson"))
    new = write("new.html", body.format(name="SIMDJSON"))
    code, out, _ = run(capsys, old, new)
    assert code == 1 and out.startswith("content")
    assert "- simdjson parses JSON at gigabytes per second." in out
    assert "+ SIMDJSON parses JSON at gigabytes per second." in out
    code, out, _ = run(capsys, old, new, "--json")
    assert code == 1 and json.loads(out)["kind"] == "content"


@pytest.mark.parametrize("body", [b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", b"\x7fELF\x02\x01\x01" + b"\x00" * 600])
def test_a_binary_file_is_an_error_not_a_diff_of_its_bytes(write: Write, capsys: Capture, body: bytes) -> None:
    """A PDF or a program saved by mistake is refused as a crawl refuses it, not diffed as text."""
    code, out, _ = run(capsys, write("old.html", page()), write("new.bin", body), "--json")
    assert code == 2 and json.loads(out)["error"].startswith("unsupported: "), out
    code, out, _ = run(capsys, write("old.bin", body), write("new.html", page()), "--json")
    assert code == 2 and json.loads(out)["error"].startswith("old page: unsupported: "), out
