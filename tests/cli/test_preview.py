"""``changewatch preview``: a page fetched once under the SSRF policy and read as a crawl reads it
(fields raw and normalised, entities, the stable text with what is ignored marked), from a local
server; a refused URL (nothing fetched), a PDF, a JSON API, a page a crawl would call an error, a
watchlist's watch with the noise its key learned; nothing stored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from changewatch.store import open_store

from ..e2e.hostile import HostileSite, page
from ..pdf import minimal_pdf
from ._learned import Capture, run
from .test_explain import calibrated

LOCAL = ("-s", "CHANGEWATCH_ALLOW_PRIVATE=True")
SHOP = """<html><head><title>Kettle</title></head><body><main>
<h1>Kettle</h1><p class="price">Price: <b>89,00 EUR</b></p><p>Updated: 10:32 today, 5 minutes ago</p>
<ul><li class="item"><a href="/k/1?utm_source=x">Blue</a><span>5</span></li>
<li class="item"><a href="/k/2">Red</a><span>6</span></li></ul>
<p>Stock: 3 left</p></main></body></html>"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HostileSite]:
    monkeypatch.chdir(tmp_path)  # outside any project: nothing could be stored here unseen
    site = HostileSite()
    site.good["/kettle"] = page(SHOP.encode())
    yield site
    site.stop()


def test_the_text_with_its_volatile_fragments_marked(site: HostileSite, tmp_path: Path, capsys: Capture) -> None:
    code, out, err = run(capsys, "preview", site.base + "/kettle", *LOCAL)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith(f"{site.base}/kettle: key {site.base}/kettle; text/html; charset=utf-8, ")
    assert "compared by content; nothing stored" in lines[0]
    assert "  Price: 89,00 EUR" in lines and "  Updated: 10:32 today[~, 5 minutes ago~]" in lines
    assert lines[lines.index("  Kettle") - 1].startswith("text (")
    assert site.hits["/kettle"] == 1 and list(tmp_path.iterdir()) == []


def test_fields_and_entities_raw_and_normalised(site: HostileSite, capsys: Capture) -> None:
    watch = {"fields": {"price": "p.price b::text"}, "kinds": {"price": "price"},
             "entities": {"selector": "li.item", "key": "a::attr(href)", "fields": {"name": "a::text",
                                                                                    "n": "span::text"}}}
    code, out, _ = run(capsys, "preview", site.base + "/kettle", "--watch", json.dumps(watch), *LOCAL)
    assert code == 0, out
    lines = out.splitlines()
    assert "fields (1): raw → normalised" in lines and "  price: 89,00 EUR → 89 EUR" in lines
    assert "entities (2):" in lines and f"  {site.base}/k/1  name: Blue  n: 5" in lines  # tracking parameter gone
    code, out, _ = run(capsys, "preview", site.base + "/kettle", "--watch", json.dumps(watch), "--json", *LOCAL)
    found = json.loads(out)
    assert found["fields"] == {"price": {"raw": "89,00 EUR", "normalised": "89 EUR"}}
    assert [e["key"] for e in found["entities"]] == [f"{site.base}/k/1", f"{site.base}/k/2"]


def test_a_refused_url_is_not_fetched(site: HostileSite, capsys: Capture) -> None:
    code, out, err = run(capsys, "preview", site.base + "/kettle")
    assert (code, out) == (1, "") and err.startswith("changewatch preview: refused: ") and len(err.splitlines()) == 1
    assert site.hits["/kettle"] == 0


def test_a_pdf_and_a_json_api(site: HostileSite, capsys: Capture) -> None:
    site.good["/terms.pdf"] = page(minimal_pdf(["Terms of sale", "Valid from 1 May"]), ctype="application/pdf")
    site.good["/api"] = page(b'{"items": [{"id": 7, "price": "5.00"}], "generated": "2026-12-05T10:00:00Z"}',
                             ctype="application/json")
    code, out, _ = run(capsys, "preview", site.base + "/terms.pdf", *LOCAL)
    assert code == 0 and "application/pdf" in out.splitlines()[0] and "  Terms of sale" in out.splitlines()
    code, out, _ = run(capsys, "preview", site.base + "/api", *LOCAL)
    assert code == 0 and "application/json" in out.splitlines()[0] and '"price": "5.00"' in out
    spec = json.dumps({"json": {"fields": ["items.0.price"]}})
    code, out, _ = run(capsys, "preview", site.base + "/api", "--watch", spec, *LOCAL)
    assert code == 0 and "  items.0.price: 5.00 → 5" in out.splitlines(), out


def test_what_a_crawl_would_call_an_error(site: HostileSite, capsys: Capture) -> None:
    site.good["/image"] = page(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, ctype="image/png")
    code, out, err = run(capsys, "preview", site.base + "/image", *LOCAL)
    assert (code, out) == (1, "") and "unsupported: image/png" in err and len(err.splitlines()) == 1
    code, _, err = run(capsys, "preview", site.base + "/missing", *LOCAL)
    assert code == 1 and "http: 404" in err
    code, _, err = run(capsys, "preview", site.base + "/kettle", "--watch", '{"region": "#nowhere"}', *LOCAL)
    assert code == 1 and "#nowhere" in err


def test_a_watchlist_watch_with_what_its_key_learned(site: HostileSite, tmp_path: Path, capsys: Capture) -> None:
    site.good["/terms"] = page(b"<html><body><h1>Terms</h1><p>You may cancel at any time.</p><div>Ad: kettles</div>"
                               b"<footer>Contact us</footer></body></html>")
    watchlist = tmp_path / "w.json"
    watchlist.write_text(json.dumps({"watches": [{"url": site.base + "/terms", "key": "terms"}]}))
    store = open_store(f"sqlite:///{tmp_path / 'state.db'}")
    calibrated(store)  # learned: the ad slot varies
    store.close()
    code, out, err = run(capsys, "preview", "--watchlist", str(watchlist), "--key", "terms",
                         "--store", f"sqlite:///{tmp_path / 'state.db'}", *LOCAL)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert "~ Ad: kettles" in lines and "  You may cancel at any time." in lines
    assert "1 learned as noise (~)" in out


@pytest.mark.parametrize(("args", "says"), [
    ([], "give a URL"), (["--watchlist", "{}"], "--watchlist needs --key"),
    (["http://a.example/", "--watch", "[1]"], "--watch must be a JSON object"),
    (["http://a.example/", "--watch", "{"], "--watch is not JSON"),
    (["http://a.example/", "--watch", '{"threshold": "x"}'], "--watch: "),
    (["http://a.example/", "--key", "news"], "--key names a watch of --watchlist"),
])
def test_bad_arguments(args: list[str], says: str, capsys: Capture) -> None:
    code, out, err = run(capsys, "preview", *args)
    assert (code, out) == (2, "") and says in err and len(err.splitlines()) == 1
