"""End to end: real crawls of a local site keep each change's before and after as served (no
cookies, no credentials), ``changewatch evidence`` writes them out; retention deletes old versions
but never a key's latest; a watch removed from the watchlist is forgotten after
CHANGEWATCH_FORGET_AFTER (one the schedule skips is not) and added back starts silently. Months
pass on a simulated clock (tests.e2e.statsdump.SimulatedClock): crawls run in the past."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from .crawl import ROOT, Crawler, by_key, scrapy_env
from .hostile import HostileSite, good_page, page

NOW = datetime.now(UTC).replace(microsecond=0)
PRODUCT = """<html><head><title>Kettle</title><script type="application/ld+json">
{{"@context": "https://schema.org", "@type": "Product", "name": "Kettle", "offers": {{"price": "{price}",
  "priceCurrency": "EUR"}}}}</script></head><body><h1>Kettle</h1><p>Preis: {price} €</p></body></html>"""
SECRETS = {"Set-Cookie": "session=s3cret; HttpOnly", "set-cookie2": "old=s3cret", "Cookie": "echo=s3cret",
           "AUTHORIZATION": "Bearer s3cret", "Proxy-Authorization": "Basic s3cret"}


def days_ago(days: float) -> tuple[str, str]:
    return "-s", f"TESTS_NOW={(NOW - timedelta(days=days)).isoformat()}"


def evidence(crawler: Crawler, change_id: int, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "changewatch.cli", "evidence", str(change_id), "--store",
                           crawler.store, "-o", str(out)], cwd=ROOT, env=scrapy_env(), capture_output=True,
                          text=True, timeout=120)


def product(price: str) -> bytes:
    return PRODUCT.format(price=price).encode()


def test_a_change_has_its_before_and_after_as_served(site: HostileSite, tmp_path: Path) -> None:
    site.good["/terms"] = page(good_page("terms"), X_Served_By="edge-1", **{k.replace("-", "_"): v
                                                                              for k, v in SECRETS.items()})
    site.good["/kettle"] = page(product("89.00"), Set_Cookie="cart=s3cret")
    crawler = Crawler(tmp_path, [{"url": f"{site.base}/terms", "key": "terms"},
                                 {"url": f"{site.base}/kettle", "key": "kettle",
                                  "jsonld": {"type": "Product", "fields": ["offers.price"]}}])
    first = crawler.run()
    assert first.returncode == 0 and first.records == [], first.stderr[-2000:]
    assert crawler.run().records == []  # nothing changed: nothing more is kept
    site.good["/terms"] = page(good_page("terms", paragraphs=13), X_Served_By="edge-2")
    site.good["/kettle"] = page(product("79.00"))
    changed = by_key(crawler.run().records)
    assert changed["terms"]["kind"] == "content" and changed["kettle"]["kind"] == "field"

    for key, before, after in (("terms", good_page("terms"), good_page("terms", paragraphs=13)),
                               ("kettle", product("89.00"), product("79.00"))):
        out = tmp_path / key
        done = evidence(crawler, changed[key]["change_id"], out)
        assert done.returncode == 0, done.stderr
        assert (out / "before.html").read_bytes() == before and (out / "after.html").read_bytes() == after
        meta = json.loads((out / "before.headers.json").read_text(encoding="utf-8"))
        assert meta["url"] == f"{site.base}/{key}" and meta["status"] == 200 and meta["size"] == len(before)
        written = "".join(p.read_text(encoding="utf-8", errors="replace") for p in out.iterdir())
        assert "s3cret" not in written  # neither cookies nor credentials, in any case
        assert json.loads((out / "change.json").read_text(encoding="utf-8"))["record"] == changed[key]
    headers = json.loads((tmp_path / "terms" / "after.headers.json").read_text(encoding="utf-8"))["headers"]
    assert ["X-Served-By", "edge-2"] in headers and "Content-Type" in [name for name, _ in headers]
    assert not {name.lower() for name, _ in headers} & {name.lower() for name in SECRETS}

    db = sqlite3.connect(tmp_path / "state.db")
    try:  # 2 baselines and 2 changes kept, not the run in between
        assert db.execute("SELECT count(*) FROM evidence").fetchone() == (4,)
    finally:
        db.close()


def test_a_key_that_never_had_a_good_page_says_so(site: HostileSite, tmp_path: Path) -> None:
    site.good["/broken"] = page(b"<h1>Internal error</h1>", 500)
    crawler = Crawler(tmp_path, [{"url": f"{site.base}/broken", "key": "broken"}])
    failed = crawler.run()
    assert [r["kind"] for r in failed.records] == ["error"], failed.stderr[-2000:]
    done = evidence(crawler, failed.records[0]["change_id"], tmp_path / "out")
    assert done.returncode == 1 and done.stdout.splitlines() == [str(tmp_path / "out" / "change.json")]
    assert "no good page was ever observed of key 'broken'" in done.stderr, done.stderr
    assert "RETENTION" not in done.stderr


def test_retention_expires_old_versions_but_never_a_keys_latest(site: HostileSite, tmp_path: Path) -> None:
    crawler = Crawler(tmp_path, [{"url": f"{site.base}/p", "key": "p"}])
    ids = []
    for days, paragraphs in ((120, 10), (100, 11), (50, 12)):  # a baseline, then two changes, months apart
        site.good["/p"] = page(good_page("p", paragraphs=paragraphs))
        result = crawler.run(*days_ago(days))
        assert result.returncode == 0, result.stderr[-2000:]
        ids += [r["change_id"] for r in result.records]
    now = crawler.run()  # today: 90 days of evidence kept (the default)
    assert now.stats["changewatch/housekeeping/evidence_purged"] == 2
    first, second = ids
    expired = evidence(crawler, first, tmp_path / "first")
    assert expired.returncode == 1
    assert f"the body before change {first} is not kept" in expired.stderr
    assert f"the body after change {first} is not kept" in expired.stderr and "CHANGEWATCH_EVIDENCE_RETENTION" in \
        expired.stderr
    assert sorted(p.name for p in (tmp_path / "first").iterdir()) == ["change.json"]
    latest = evidence(crawler, second, tmp_path / "second")  # 50 days old, and p's latest: kept
    assert latest.returncode == 1 and f"the body before change {second} is not kept" in latest.stderr
    assert (tmp_path / "second" / "after.html").read_bytes() == good_page("p", paragraphs=12)
    assert evidence(crawler, 99, tmp_path / "none").returncode == 1


def test_a_removed_watch_is_forgotten_and_comes_back_silently(site: HostileSite, tmp_path: Path) -> None:
    for name in ("kept", "removed", "rare"):
        site.good[f"/{name}"] = page(good_page(name))
    everything = [{"url": f"{site.base}/kept", "key": "kept"}, {"url": f"{site.base}/removed", "key": "removed"},
                  {"url": f"{site.base}/rare", "key": "rare", "every": "200d"}]
    crawler = Crawler(tmp_path, everything)
    rare = ("-s", "CHANGEWATCH_SCHEDULE_MAX_INTERVAL=365d")  # else every: 200d gives way to the 7d maximum
    assert crawler.run(*days_ago(120), *rare).records == []
    crawler.write_watchlist([w for w in everything if w["key"] != "removed"])
    today = crawler.run(*rare)  # removed for 120 days (more than the 90 of CHANGEWATCH_FORGET_AFTER)
    assert today.returncode == 0 and today.stats["changewatch/schedule/skipped"] == 1  # rare is not due
    assert today.stats["changewatch/housekeeping/forgotten"] == 1
    assert today.stats["changewatch/housekeeping/listed"] == 1  # rare: skipped, still watched
    db = sqlite3.connect(tmp_path / "state.db")
    try:
        assert {row[0] for row in db.execute("SELECT key FROM observations")} == {"kept", "rare"}
        assert db.execute("SELECT count(*) FROM evidence WHERE key = 'removed'").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM validators WHERE key = 'removed'").fetchone() == (0,)
    finally:
        db.close()
    site.good["/removed"] = page(good_page("removed", paragraphs=20))  # changed while forgotten
    crawler.write_watchlist(everything)
    back = crawler.run(*rare)
    assert back.returncode == 0 and back.records == []  # a fresh, silent baseline
    assert back.stats["changewatch/commit/baseline"] == 1
