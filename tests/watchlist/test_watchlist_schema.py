"""The watchlist's JSON Schema: shipped as ``changewatch/watchlist.schema.json``, equal to
a fresh generation from the model, printed by ``changewatch schema``, and every watchlist the docs
and tests show is valid by it and loads."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from changewatch.cli import main
from changewatch.demo.run import WATCHLIST as DEMO_WATCHLIST
from changewatch.watchlist import WatchlistError, load_watchlist, parse_watchlist
from changewatch.watchlist.model import watchlist_schema

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "changewatch" / "watchlist.schema.json"
FENCE = re.compile(r"^```(yaml|json)\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"-a watchlist='([\[{].*?)'")


def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SHIPPED.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_shipped_schema_is_a_fresh_generation() -> None:
    assert SHIPPED.read_text(encoding="utf-8") == watchlist_schema(), (
        "changewatch/watchlist.schema.json is out of date with the watchlist model: regenerate it with "
        "`changewatch schema > changewatch/watchlist.schema.json`")


def test_the_package_ships_it() -> None:
    import importlib.resources
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "watchlist.schema.json" in pyproject["tool"]["setuptools"]["package-data"]["changewatch"]
    shipped = importlib.resources.files("changewatch") / "watchlist.schema.json"
    assert shipped.read_text(encoding="utf-8") == SHIPPED.read_text(encoding="utf-8")


def test_changewatch_schema_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    assert capsys.readouterr().out == SHIPPED.read_text(encoding="utf-8")


def test_the_schema_helps_an_editor() -> None:
    schema = json.loads(SHIPPED.read_text(encoding="utf-8"))
    watch = schema["$defs"]["WatchModel"]
    assert schema["title"] == "changewatch watchlist" and schema["required"] == ["watches"]
    assert watch["unevaluatedProperties"] is False and watch["$ref"] == "#/$defs/WatchOptionsModel"
    assert [alternative["required"] for alternative in watch["oneOf"]] == [["url"], ["site", "key"]]
    assert all(prop.get("description") for prop in watch["properties"].values())
    assert schema["$defs"]["WatchOptionsModel"]["properties"]["kinds"]["anyOf"][0]["additionalProperties"]["enum"]
    for example in schema["examples"]:
        validator().validate(example)
        parse_watchlist(example)


def test_the_page_options_are_written_once_and_other_names_are_refused() -> None:
    schema = json.loads(SHIPPED.read_text(encoding="utf-8"))
    defs = schema["$defs"]
    options = set(defs["WatchOptionsModel"]["properties"])
    assert {"region", "jsonld", "render", "notify", "every"} <= options
    for name in ("WatchModel", "RuleModel"):
        assert not options & set(defs[name]["properties"]), name  # referred to, not repeated
    assert set(defs["RuleModel"]["properties"]) == {"match"}
    site = {"key": "s", "site": {"start": "https://a.example/"}}
    for document in ({"watches": [{"url": "https://a.example/", "regoin": "main"}]},
                     {"defaults": {"url": "https://a.example/"}, "watches": [{"url": "https://a.example/"}]},
                     {"watches": [{**site, "rules": [{"match": "/a/", "key": "k"}]}]},
                     {"watches": [{**site, "rules": [{"region": "main"}]}]}):
        assert list(validator().iter_errors(document)), document
    validator().validate({"defaults": {"threshold": 3}, "watches": [{**site, "region": "main", "rules": [
        {"match": "/a/", "region": None, "jsonld": {"type": "Product", "fields": ["name"]}}]}]})


def _documented() -> list[tuple[str, Any]]:
    """Every watchlist a reader is shown: fenced YAML/JSON blocks with a ``watches`` list and inline
    ``-a watchlist='…'`` JSON in the docs and README, and the demo's watchlist."""
    found: list[tuple[str, Any]] = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for n, (lang, block) in enumerate(FENCE.findall(text)):
            try:
                data = json.loads(block) if lang == "json" else yaml.safe_load(block)
            except (ValueError, yaml.YAMLError):
                continue  # a change record cut short with "…", not a watchlist
            if isinstance(data, dict) and "watches" in data:
                found.append((f"{path.name} block {n + 1}", data))
        for n, inline in enumerate(INLINE.findall(text)):
            data = json.loads(inline)
            found.append((f"{path.name} inline {n + 1}", {"watches": data} if isinstance(data, list) else data))
    found.append(("changewatch/demo/run.py", yaml.safe_load(DEMO_WATCHLIST.format(base="http://127.0.0.1:8000"))))
    return found


#: module-level watchlists in tests that are meant to be refused
HOSTILE = {"LAUGHS"}


def _test_fixtures() -> list[tuple[str, Any]]:
    """Watchlists the tests keep as module-level constants (a YAML text, a document, or a watches
    list; URLs given as paths are joined to a test server's address, as the tests do). Those built
    inside a test function are checked as they are crawled (tests/e2e/crawl.py, crawl_command)."""
    found: list[tuple[str, Any]] = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
                continue
            if any(isinstance(t, ast.Name) and t.id in HOSTILE for t in ast.walk(node) if t is not node.value):
                continue
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            if isinstance(value, str) and "watches:" in value:
                try:
                    value = yaml.safe_load(value)
                except yaml.YAMLError:
                    continue  # Python source that mentions a watchlist
            if isinstance(value, list) and value and all(isinstance(w, dict) and "url" in w for w in value):
                value = {"watches": [{**w, "url": "http://127.0.0.1:8000" + w["url"]} if w["url"].startswith("/")
                                     else w for w in value]}
            if isinstance(value, dict) and "watches" in value:
                found.append((f"{path.relative_to(ROOT)}:{node.lineno}", value))
    return found


DOCUMENTED = _documented()
FIXTURES = _test_fixtures()


def test_the_scan_finds_the_watchlists() -> None:
    names = [name for name, _ in DOCUMENTED + FIXTURES]
    assert {"README.md block 1", "watchlist.md block 1", "watchlist.md block 2", "watchlist.md inline 1",
            "watchlist.md inline 2", "changewatch/demo/run.py"} <= set(names), names
    assert any(name.startswith("tests/watchlist/test_watchlist.py") for name in names), names


@pytest.mark.parametrize(("name", "document"), DOCUMENTED + FIXTURES, ids=[n for n, _ in DOCUMENTED + FIXTURES])
def test_every_shown_watchlist_is_valid_by_the_schema_and_loads(name: str, document: Any, tmp_path: Path) -> None:
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator().iter_errors(document)]
    assert not errors, errors
    path = tmp_path / "watchlist.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    assert load_watchlist(path)


@pytest.mark.parametrize("watch", [
    {"url": "https://a.example/", "colour": "red"},
    {"key": "no-url"},
    {"url": "https://a.example/a page"},
    {"url": "ftp://a.example/"},
    {"url": "https://a.example/", "threshold": 99},
    {"url": "https://a.example/", "threshold": "3"},
    {"url": "https://a.example/", "sort_lines": "yes"},
    {"url": "https://a.example/", "fields": {}},
    {"url": "https://a.example/", "kinds": {"p": "money"}},
    {"url": "https://a.example/", "jsonld": {"type": "Product"}},
    {"url": "https://a.example/", "entities": {"selector": "li"}},
    {"url": "https://a.example/", "accept_language": "??"},
    {"url": "https://a.example/", "headers": {"X-A": True}},
    # found by review: the schema let these through to a crawl that refused them
    {"url": "https://a.example/", "key": " "},
    {"url": "https://a.example/", "key": ""},
    {"url": "https://a.example/", "region": ""},
    {"url": "https://a.example/", "region": " \t"},
    {"url": "https://a.example/", "jsonld": {"fields": "name", "key": "sku"}},
    {"url": "https://a.example/", "jsonld": {"type": None, "fields": "name", "key": "sku"}},
    {"url": "https://a.example/", "jsonld": {"type": [], "fields": "name", "key": "sku"}},
    {"url": "https://a.example/", "jsonld": {"type": "", "fields": "name", "key": "sku"}},
    {"url": "https://a.example/", "jsonld": {"type": "Product", "fields": "name", "key": "  "}},
    {"url": "https://a.example/", "headers": {"X A": "1"}},
    {"url": "https://a.example/", "headers": {"": "1"}},
    {"url": "https://a.example/", "headers": {"X-A": "a\r\nSet-Cookie: x=1"}},
    {"url": "https://a.example/", "headers": {"X-A\n": "1"}},
    {"url": "https://a.example/", "headers": {"X-A": "1\n"}},
    {"url": "https://a.example/", "cookies": {"a;b": "1"}},
    {"url": "https://a.example/", "cookies": {"a": "x y"}},
    {"url": "https://a.example/", "cookies": {"a": 'x"y'}},
    {"url": "https://a.example/", "proxy": "http://"},
    {"url": "https://a.example/", "proxy": "http://:8080"},
    {"url": "https://a.example/", "proxy": "http://user:pass@:8080"},
    {"url": "https://a.example/", "proxy": "http://proxy.example:65536"},
    {"url": "https://a.example/", "proxy": "http://proxy.example:80:80"},
    {"url": "https://a.example/", "proxy": "http://proxy.example:port"},
    {"url": "https://a.example/", "proxy": "socks5://proxy.example:1080"},
    {"url": "https://a.example/", "proxy": "http://proxy example:8080"},
    {"url": "https://a.example/", "threshold": 3.5},
    {"url": "https://a.example/", "threshold": 65.0},
    {"url": "https://a.example/", "keep_params": False},
    {"url": "https://a.example/", "keep_params": ["utm_id", ""]},
    {"url": "https://"},
    {"url": "https://:80/"},
    {"url": "https://user@/"},
    {"url": "HTTPS://a.example/a page"},
    {"url": "https://a.example/a\tb"},
    # include and ignore
    {"url": "https://a.example/", "include": "titel"},
    {"url": "https://a.example/", "include": []},
    {"url": "https://a.example/", "include": [None]},
    {"url": "https://a.example/", "ignore": {}},
    {"url": "https://a.example/", "ignore": {"txt": "x"}},
    {"url": "https://a.example/", "ignore": {"selectors": ""}},
    {"url": "https://a.example/", "ignore": {"text": []}},
    {"url": "https://a.example/", "ignore": {"text": None}},
    {"url": "https://a.example/", "ignore": "^Visitors"},
    # canary
    {"url": "https://a.example/", "canary": {"expect": "changes", "within": "2d"}},
    {"url": "https://a.example/", "canary": {"expect": "change"}},
    {"url": "https://a.example/", "canary": {"expect": "change", "within": "2d", "every": "1d"}},
    {"url": "https://a.example/", "canary": {"expect": "change", "within": "1m2d"}},
    {"url": "https://a.example/", "canary": {"expect": "change", "within": "2 days"}},
    {"url": "https://a.example/", "canary": {"expect": "change", "within": 30}},
    {"url": "https://a.example/", "canary": {"expect": "change", "within": True}},
    {"url": "https://a.example/", "canary": {"expect": "change", "within": ""}},
    {"url": "https://a.example/", "canary": "change"},
    # render
    {"url": "https://a.example/", "render": "yes"},
    {"url": "https://a.example/", "render": {"timeout": 0}},
    {"url": "https://a.example/", "render": {"timeout": -1}},
    {"url": "https://a.example/", "render": {"timeout": "20"}},
    {"url": "https://a.example/", "render": {"block": ["script"]}},
    {"url": "https://a.example/", "render": {"wait_for": " "}},
    {"url": "https://a.example/", "render": {"wait": "#p"}},
    # every: a duration as core/durations.py reads it, more than 0
    *({"url": "https://a.example/", "every": bad} for bad in (
        "soon", "", " ", "0", "0s", "0.0m", "0d0h", 0, 0.0, -5, "-5m", "10M", "30m1h", "1m1m", "6 h", "h", True,
        [1], {"h": 6}, "1e3", "٣h")),
])
def test_the_schema_and_the_crawl_refuse_the_same_mistakes(watch: dict[str, Any]) -> None:
    """What an editor flags as typed is what the crawl refuses (only what watchlist_model's
    docstring lists, such as selectors that do not compile, is left to the crawl)."""
    document = {"watches": [watch]}
    assert list(validator().iter_errors(document))
    with pytest.raises(WatchlistError):
        parse_watchlist(document)


@pytest.mark.parametrize("document", [
    {"watches": [{"url": "HTTPS://a.example/"}]},
    {"watches": [{"url": "Http://a.example/x?y=1#z"}]},
    {"watches": [{"url": "  https://a.example/  "}]},
    {"watches": [{"url": "https://user:p@ss@a.example:8443/"}]},
    {"watches": [{"url": "https://[2001:db8::1]/"}]},
    {"watches": [{"url": "https://a.example/", "key": 5}]},
    {"watches": [{"url": "https://a.example/", "key": 5.0}]},
    {"watches": [{"url": "https://a.example/", "key": " k "}]},
    {"watches": [{"url": "https://a.example/", "threshold": 3.0}]},
    {"watches": [{"url": "https://a.example/", "region": "main"}]},
    {"watches": [{"url": "https://a.example/", "keep_params": [], "drop_params": ""}]},
    {"watches": [{"url": "https://a.example/", "jsonld": {"type": [], "fields": "name"}}]},
    {"watches": [{"url": "https://a.example/", "jsonld": {"type": None, "fields": "name", "key": None}}]},
    {"watches": [{"url": "https://a.example/", "jsonld": {"type": "Product", "fields": "name", "key": "sku"}}]},
    {"watches": [{"url": "https://a.example/", "entities": {"selector": "li", "key": "a::attr(href)", "fields": {}}}]},
    {"watches": [{"url": "https://a.example/", "proxy": "HTTP://user:pass@proxy.example:8080"}]},
    {"watches": [{"url": "https://a.example/", "proxy": "http://[::1]:3128"}]},
    {"watches": [{"url": "https://a.example/", "proxy": "https://proxy.example:"}]},
    {"watches": [{"url": "https://a.example/", "proxy": "http://proxy.example:65535/"}]},
    {"watches": [{"url": "https://a.example/", "headers": {"X-Api-Version": 2, "Accept": "text/html; q=0.9"},
                  "cookies": {"currency": "CHF", "n": 1.5}, "accept_language": "de-CH,de;q=0.9"}]},
    {"defaults": [], "watches": [{"url": "https://a.example/"}]},
    {"defaults": "", "watches": [{"url": "https://a.example/"}]},
    {"watches": [{"url": "https://a.example/", "include": "links", "ignore": {"text": "^Visitors: \\d+"}}]},
    {"watches": [{"url": "https://a.example/", "canary": {"expect": "change", "within": "2d"}},
                 {"url": "https://b.example/", "canary": {"expect": "no_change", "within": "1d12h"}},
                 {"url": "https://c.example/", "canary": {"expect": "change", "within": 86400}},
                 {"url": "https://d.example/", "canary": {"expect": "change", "within": " 90m "}}]},
    {"defaults": {"include": ["title", "meta"], "ignore": {"selectors": [".ad", "#banner"]}},
     "watches": [{"url": "https://a.example/"}, {"url": "https://b.example/", "fields": {"p": "h1::text"}}]},
    {"watches": [{"url": "https://a.example/", "render": True}, {"url": "https://b.example/", "render": False}]},
    {"defaults": {"render": {"wait_for": "#price", "timeout": 20, "block": []}},
     "watches": [{"url": "https://a.example/", "fields": {"p": "#price::text"}}]},
    {"watches": [{"url": "https://a.example/", "render": {"timeout": 2.5, "block": "image"}}]},
    {"defaults": {"every": "1d"}, "watches": [{"url": f"https://a.example/{n}", "every": good} for n, good in enumerate(
        ("6h", " 1h30m ", "90", "0.5s", ".5m", "1.5h30m", "7d", "1d2h3m4s", 90, 2.5, "05m", None))]},
])
def test_the_schema_and_the_crawl_accept_the_same_watchlists(document: dict[str, Any]) -> None:
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator().iter_errors(document)]
    assert not errors, errors
    assert parse_watchlist(document)


def test_every_pattern_is_one_an_editor_can_compile() -> None:
    """Editors compile the schema's patterns as ECMA-262 regular expressions in unicode mode, which
    refuses escapes Python allows (\\" in a class); checked with node where it is installed."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    patterns: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "pattern" and isinstance(item, str):
                    patterns.add(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(json.loads(SHIPPED.read_text(encoding="utf-8")))
    script = "for (const p of JSON.parse(process.argv[1])) new RegExp(p, 'u')"
    done = subprocess.run([node, "-e", script, json.dumps(sorted(patterns))], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow  # crawl subprocesses
def test_an_end_to_end_crawl_checks_the_watchlist_it_is_given(tmp_path: Path) -> None:
    """Watchlists written inside tests (not module constants, which the scan above finds) are
    checked as the e2e helpers crawl them: a file or inline JSON the schema refuses stops the test
    before the crawl, unless the test says it is invalid on purpose."""
    from tests.e2e.crawl import crawl_command

    (tmp_path / "good.yaml").write_text(yaml.safe_dump({"watches": [{"url": "http://127.0.0.1:1/a", "key": "a"}]}))
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump({"watches": [{"url": "http://127.0.0.1:1/a", "key": " "}]}))
    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "bad.json").write_text(json.dumps({"watches": [{"url": "http://127.0.0.1:1/a", "regoin": "main"}]}))
    crawl_command(tmp_path, "watch", 1, "-a", "watchlist=good.yaml")
    crawl_command(tmp_path, "watch", 1, "-a", "watchlist=http://127.0.0.1:1/w.json")  # fetched by the crawl
    for args in (("-a", "watchlist=bad.yaml"), ("-a", 'watchlist=[{"url": "ftp://x"}]'),
                 ("-a", "watchlist=bad.json", "-s", f"CHANGEWATCH_WATCHLIST_DIR={lists}")):
        with pytest.raises(AssertionError, match="not valid by the shipped schema"):
            crawl_command(tmp_path, "watch", 1, *args)
        crawl_command(tmp_path, "watch", 1, *args, valid_watchlist=False)
