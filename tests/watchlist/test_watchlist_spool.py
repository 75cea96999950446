"""The watchlist read watch by watch and kept on disk (changewatch/watchlist/spool.py): the
same watches, the same refusals in the same words, as the watchlist read whole; read watch by
watch for what watchlists are made of (anchors, merge keys, defaults anywhere, JSON); and a
memory that does not grow with the number of watches."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from changewatch.watchlist import INLINE, WatchlistError, parse_watchlist_text
from changewatch.watchlist import spool as watchlist_spool
from changewatch.watchlist.spool import Watchlist, spool_watchlist

from ..fuzz.strategies import as_file_text, watch_dicts, watchlist_documents
from ..fuzz.test_hypothesis import LAUGHS


def outcome(read: Any) -> tuple[str, Any]:
    try:
        return "watches", list(read())
    except WatchlistError as exc:
        return "refused", str(exc)


def same_as_whole(text: str, source: str = "w.yaml", *, is_json: bool = False) -> tuple[str, Any]:
    spooled = outcome(lambda: spool_watchlist(text, source, is_json=is_json))
    assert spooled == outcome(lambda: parse_watchlist_text(text, source, is_json=is_json))
    return spooled


@pytest.fixture
def streamed_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The watchlist must be read watch by watch: reading it whole fails the test."""
    def whole(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("read whole")
    monkeypatch.setattr(watchlist_spool, "parse_watchlist_text", whole)


YAML_LISTS = {
    "plain": "watches:\n  - url: https://a.example/\n  - url: https://b.example/p?utm_source=x\n",
    "defaults first": "defaults:\n  threshold: 4\n  sort_lines: true\nwatches:\n  - url: https://a.example/\n"
                      "  - url: https://b.example/\n    threshold: 9\n",
    "defaults last": "watches:\n  - url: https://a.example/\n  - url: https://b.example/\n    threshold: 9\n"
                     "defaults:\n  threshold: 4\n",
    "anchors and merge keys": "defaults:\n  keep_params: &keep [id]\nwatches:\n"
                              "  - &shop {url: 'https://shop.example/a', fields: {price: '.price::text'}}\n"
                              "  - <<: *shop\n    url: https://shop.example/b\n"
                              "  - {url: 'https://c.example/', keep_params: *keep, kinds: {price: price}, "
                              "fields: {price: 'p::text'}}\n",
    "options of all kinds": "watches:\n"
                            "  - url: https://a.example/\n    key: a\n    region: main\n    include: [title, links]\n"
                            "    ignore: {selectors: ['.ad'], text: ['^Visitors']}\n"
                            "    canary: {expect: no_change, within: 7d}\n    every: 6h\n"
                            "  - url: https://b.example/api\n    json: {fields: [price]}\n"
                            "  - url: https://c.example/\n    jsonld: {type: Product, fields: [offers.price]}\n"
                            "    notify: {urls: 'json://localhost/', when: 'offers.price < 80'}\n"
                            "  - url: https://d.example/\n    headers: {X-A: b}\n    accept_language: de-CH\n",
}


@pytest.mark.parametrize("name", sorted(YAML_LISTS))
def test_a_yaml_watchlist_is_read_watch_by_watch_into_the_same_watches(name: str, streamed_only: None) -> None:
    text = YAML_LISTS[name]
    spooled = list(spool_watchlist(text, "w.yaml", is_json=False))
    whole = parse_watchlist_text(text, "w.yaml", is_json=False)  # (not the patched one)
    assert spooled and spooled == whole
    assert [w.spec() for w in spooled] == [w.spec() for w in whole]  # a spec known from the options shared


@pytest.mark.parametrize("name", sorted(YAML_LISTS))
def test_yaml_and_its_json_give_the_watches_of_the_whole_reading(name: str) -> None:
    text = YAML_LISTS[name]
    kind, watches = same_as_whole(text)
    assert kind == "watches" and watches
    as_json = json.dumps(yaml.safe_load(text))
    assert same_as_whole(as_json, "w.json", is_json=True) == ("watches", watches)


@pytest.mark.parametrize("text", [
    '{"watches": [{"url": "https://a.example/"}], "defaults": {"threshold": 2}}',
    ' \n{ "defaults" : {"threshold": 2} ,\n "watches" : [ {"url": "https://a.example/"} ,'
    ' {"url": "https://b.example/"} ] }\n',
])
def test_a_json_watchlist_is_read_watch_by_watch(text: str, streamed_only: None) -> None:
    assert next(w.threshold for w in spool_watchlist(text, "w.json", is_json=True)) == 2


def test_inline_json_watches_alone(streamed_only: None) -> None:
    watches = spool_watchlist('[{"url": "https://a.example/"}, {"url": "https://b.example/", "key": "b"}]', INLINE,
                              is_json=True)
    assert [w.key for w in watches] == ["https://a.example/", "b"]


@pytest.mark.parametrize(("text", "is_json"), [
    ("watches:\n  - url: https://a.example/\n  - url: https://a.example/\n", False),  # a duplicate key
    ("watches:\n  - url: https://a.example/\n    treshold: 3\n", False),  # an unknown option
    ("watches:\n  - url: https://a.example/\n    fields: {p: 'p::text'}\n    include: title\n", False),
    ("watches:\n  - url: https://a.example/\n    notify: {urls: 'json://x/', when: 'price < 3'}\n", False),
    ("watches:\n  - url: https://a.example/\nwatches:\n  - url: https://b.example/\n", False),
    ("watches:\n  - url: https://a.example/\n---\nwatches: []\n", False),  # two documents
    ("watches: []\n", False), ("watches: {}\n", False), ("", False), ("- url: https://a.example/\n", False),
    ("watches:\n  - url: https://a.example/\nextra: 1\n", False),
    ("defaults: {threshold: 99}\nwatches: [{url: 'https://a.example/'}]", False),
    ("watches:\n  - url: https://a.example/\n    key: &k x\n  - url: https://b.example/\n    key: *k\n", False),
    ("defaults: {keep_params: *k}\nwatches:\n  - url: https://a.example/\n    keep_params: &k [a]\n", False),
    ("watches: &w [*w]", False), ("watches:\n  - url: https://a.example/\n  -: [", False),
    ('{"watches": [{"url": "https://a.example/"}], "watches": []}', True),
    ('{"watches": [{"url": "https://a.example/"}]} trailing', True),
    ('\ufeff{"watches": [{"url": "https://a.example/"}]}', True),
    ('{"watches": [{"url": "https://a.example/", "url": "https://b.example/"}]}', True),
    ('{"watches": [{"url": "https://a.example/"},]}', True), ('[{"url": "https://a.example/"}]', True),
    ('{"defaults": {"threshold": NaN}, "watches": [{"url": "https://a.example/"}]}', True),
])
def test_what_the_whole_reading_refuses_is_refused_in_its_words(text: str, is_json: bool) -> None:
    kind, said = same_as_whole(text, "w.json" if is_json else "w.yaml", is_json=is_json)
    assert kind == "refused" and said


def test_defaults_a_watch_compared_by_its_fields_does_not_take() -> None:
    text = "defaults:\n  include: title\nwatches:\n  - url: https://a.example/\n    fields: {p: 'p::text'}\n"
    kind, watches = same_as_whole(text)
    assert kind == "watches" and watches[0].include == ()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(watchlist_documents, st.sampled_from(["json", "yaml"]))
def test_any_document_reads_as_the_whole_reading_reads_it(document: Any, style: str) -> None:
    text = as_file_text(document, style)
    same_as_whole(text, f"w.{style}", is_json=style == "json")


@settings(max_examples=200, deadline=None)
@given(st.lists(watch_dicts(), min_size=1, max_size=6), st.one_of(st.none(), watch_dicts()), st.booleans(),
       st.sampled_from(["json", "yaml"]))
def test_any_watches_with_defaults_before_or_after(watches: list[dict[str, Any]], defaults: dict[str, Any] | None,
                                                    after: bool, style: str) -> None:
    document: dict[str, Any] = {"watches": watches}
    if defaults is not None:
        defaults = {k: v for k, v in defaults.items() if k not in ("url", "key")}
        document = {"watches": watches, "defaults": defaults} if after else {"defaults": defaults, "watches": watches}
    same_as_whole(as_file_text(document, style), f"w.{style}", is_json=style == "json")


def test_a_spool_is_read_again_by_each_reader_at_its_own_pace() -> None:
    text = "watches:\n" + "".join(f"  - url: https://a.example/{i}\n" for i in range(3000))
    watches = spool_watchlist(text, "w.yaml", is_json=False)
    first, second = iter(watches), iter(watches)
    pairs = [(next(first).url, next(second).url) for _ in range(5)]
    assert pairs == [(f"https://a.example/{i}", f"https://a.example/{i}") for i in range(5)]
    assert [w.url for w in second][-1] == "https://a.example/2999" and len(list(first)) == 2995
    assert len(watches) == 3000 and [w.url for w in watches] == [f"https://a.example/{i}" for i in range(3000)]


def test_watches_with_options_of_their_own_are_kept_whole() -> None:
    text = "watches:\n" + "".join(f"  - {{url: 'https://a.example/{i}', region: 'main.v{i}'}}\n" for i in range(600))
    spooled = list(spool_watchlist(text, "w.yaml", is_json=False))
    assert spooled == parse_watchlist_text(text, "w.yaml", is_json=False)  # past the shared option sets too


def test_a_spool_in_memory_when_no_temporary_file_can_be_made(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("read-only file system")
    monkeypatch.setattr(watchlist_spool.tempfile, "TemporaryFile", refuse)
    watches = spool_watchlist(YAML_LISTS["plain"], "w.yaml", is_json=False)
    assert [w.url for w in watches] == ["https://a.example/", "https://b.example/p?utm_source=x"]
    assert [w.url for w in Watchlist.of(list(watches))] == [w.url for w in watches]


def _peak(count: int) -> int:
    text = "defaults:\n  threshold: 3\nwatches:\n" + "".join(f"  - url: https://example.com/p/{i}\n"
                                                           for i in range(count))
    tracemalloc.start()
    try:
        spool_watchlist(text, "w.yaml", is_json=False)
        return tracemalloc.get_traced_memory()[1] - len(text)
    finally:
        tracemalloc.stop()


@pytest.mark.slow  # 20,000 watches read under tracemalloc
def test_memory_does_not_grow_with_the_watches() -> None:
    """Read whole, 20,000 watches took ~30 MB at the peak (1.5 KB a watch) and held 10 MB for the
    crawl; read watch by watch, the peak beside the text grows by the keys' digests (8 bytes a
    watch) and what is held does not grow at all."""
    small, large = _peak(2_000), _peak(20_000)
    assert large - small < 40 * 18_000, (small, large)  # 40 bytes a watch at most, where it took 1,500


@pytest.mark.parametrize(("name", "text"), [
    ("laughs.yaml", LAUGHS), ("deep.json", "[" * 100_000 + "]" * 100_000), ("deep.yaml", "[" * 100_000 + "]" * 100_000),
    ("alias.yaml", "watches: &w [*w]"), ("fields.yaml", "watches:\n  - url: http://x\n    fields: &f {a: *f}"),
    ("deep-watch.json", '{"watches": [' + "[" * 50_000 + "]" * 50_000 + "]}"),
])
def test_hostile_watchlists_fail_fast_and_clearly_watch_by_watch_too(tmp_path: Path, name: str, text: str) -> None:
    """Billion laughs, deep nesting and self-reference, read the spider's way: a WatchlistError, in
    a subprocess so that a regression fails after 60 s instead of hanging the suite."""
    (tmp_path / name).write_text(text)
    code = ("import sys\nfrom changewatch.watchlist import WatchlistError\n"
            "from changewatch.watchlist.spool import spool_watchlist\n"
            "text = open(sys.argv[1]).read()\n"
            "try:\n    spool_watchlist(text, sys.argv[1], is_json=sys.argv[1].endswith('.json'))\n"
            "except WatchlistError as e:\n    print(str(e)[:2000])\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / name)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and name in proc.stdout, proc.stderr[-2000:]
