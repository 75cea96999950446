"""End to end: after ``changewatch noise`` learned a rotating line, a later change's diff is
computed from the page its evidence shows as "before": its unchanged lines are the new page's, its
removed lines the before page's, and the rotating line of a version not kept is nowhere in it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from changewatch.cli import main
from changewatch.core.text.normalise import visible_text

from .crawl import ROOT, Crawler
from .hostile import HostileSite, page

STABLE = ["Terms of service", "You may cancel at any time from your account page.",
          "We were founded in 1998 and answer every letter within 14 days.",
          "Refunds are paid to the card that was charged.", "Contact us"]


def news(trending: str, stable: list[str] = STABLE) -> bytes:
    lines = [*stable[:2], f"Trending: {trending}", *stable[2:]]
    return ("<html><body>" + "".join(f"<p>{line}</p>" for line in lines) + "</body></html>").encode()


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str]]:
    """``changewatch ARGS --store STORE`` in this process (the commands are not what is tested here,
    the crawls are), where the crawls' environment would run it: its status and stderr."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("SCRAPY_SETTINGS_MODULE", "changewatch.settings")

    def run(crawler: Crawler, *args: str) -> tuple[int, str]:
        status = main([*args, "--store", crawler.store])
        return status, capsys.readouterr().err
    return run


def stable_lines(body: bytes) -> set[str]:
    return set(visible_text(body, like_scrapy=True).stable.split("\n"))


def test_a_diff_after_learned_noise_is_the_evidence_pages_diff(site: HostileSite, tmp_path: Path,
                                                               cli: Callable[..., tuple[int, str]]) -> None:
    site.good["/news"] = page(news("cats"))
    crawler = Crawler(tmp_path, [{"url": f"{site.base}/news", "key": "news"}])
    assert crawler.run().records == []
    site.good["/news"] = page(news("dogs"))
    dogs = crawler.run().records
    assert [r["kind"] for r in dogs] == ["content"], dogs
    status, stderr = cli(crawler, "noise", str(dogs[0]["change_id"]))
    assert status == 0, stderr
    site.good["/news"] = page(news("cats"))
    assert crawler.run().records == []  # learned noise: nothing reported, no version kept
    edited = [*STABLE[:3], "Refunds are paid within 30 days to the card that was charged.", STABLE[4]]
    site.good["/news"] = page(news("birds", edited))
    loud = crawler.run().records
    assert [r["kind"] for r in loud] == ["content"], loud
    diff = loud[0]["diff"]

    out = tmp_path / "evidence"
    status, stderr = cli(crawler, "evidence", str(loud[0]["change_id"]), "-o", str(out))
    assert status == 0, stderr
    before, after = (out / "before.html").read_bytes(), (out / "after.html").read_bytes()
    assert b"Trending: dogs" in before and b"Trending: birds" in after
    before_lines, after_lines = stable_lines(before), stable_lines(after)
    for line in diff.split("\n"):
        if line.startswith(("  ", "+ ")):
            assert line[2:] in after_lines, (line, diff)
        elif line.startswith("- "):
            assert line[2:] in before_lines, (line, diff)
    assert "Trending: cats" not in diff
    assert f"- {STABLE[3]}" in diff and f"+ {edited[3]}" in diff
