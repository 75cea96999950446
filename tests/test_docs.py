"""Every setting and stat the code uses is documented; the README's commands exist and CI runs one."""

from __future__ import annotations

import re
from pathlib import Path

from changewatch.core.comparisons import Kind, load_comparisons

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "changewatch").rglob("*.py"))


def _code() -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in SOURCES}


def used_settings() -> set[str]:
    return {m for text in _code().values() for m in re.findall(r"\bCHANGEWATCH_[A-Z0-9_]+\b", text)}


def used_stats() -> set[str]:
    stats: set[str] = set()
    for text in _code().values():
        # a spider's component is its class's ``stats_component`` (ChangewatchSpider counts for it)
        found = re.findall(r'Stats\(crawler, "(\w+)"\)|stats_component(?:: ClassVar\[str\])? = "(\w+)"', text)
        components = [a or b for a, b in found]
        events = re.findall(r'stats\.inc\("(\w+)"', text)
        # events named in a table (``_SOMETHING_STATS = {reason: "event"}``) and counted through it
        for table in re.findall(r"^_\w+_STATS = \{(.*?)\}", text, re.S | re.M):
            events += re.findall(r':\s*"(\w+)"', table)
        assert len(set(components)) <= 1, "one stats component per module keeps this check exact"
        stats |= {f"changewatch/{c}/{e}" for c in components for e in events}
    # the comparison step counts each kind by its value, and what each comparison and the worker
    # hand-off report (``component/event`` strings)
    stats |= {f"changewatch/commit/{k.value}" for k in Kind}
    for comparison in load_comparisons():
        stats |= {f"changewatch/{comparison.name}/digested", f"changewatch/{comparison.name}/unobservable"}
    stats.add("changewatch/entities/duplicates")
    # an edited watch re-baselines what it reads another way (Difference.counters)
    stats |= {f"changewatch/{name}/rebaselined" for name in ("fields", "content", "entities")}
    for module in ("runtime/offload.py", "core/verdict.py",
                   *(f"core/comparisons/{m}.py" for m in ("content", "fields", "entities"))):
        text = (ROOT / "changewatch" / module).read_text(encoding="utf-8")
        stats |= {f"changewatch/{name}" for name in re.findall(r'"(\w+/\w+)": 1', text)}
    assert "changewatch/charset/undecodable_pages" in stats  # counted in the crawl and the worker alike
    return stats


def test_settings_are_documented() -> None:
    doc = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    used = used_settings()
    assert "CHANGEWATCH_STORE" in used and "CHANGEWATCH_WORKERS" in used  # the scan works
    missing = sorted(s for s in used if f"`{s}`" not in doc)
    assert not missing, f"undocumented settings: {missing}"


def test_the_settings_table_and_the_docs_list_the_same_names() -> None:
    """docs/settings.md's table has one row per setting of changewatch.config.SETTINGS, each saying
    who sets it; each removed name is listed under "Removed settings"."""
    from changewatch.config import REMOVED_SETTINGS, SETTINGS

    doc = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(CHANGEWATCH_[A-Z0-9_]+)` \|(.*)$", doc, flags=re.M)
    assert sorted(name for name, _ in rows) == sorted(s.name for s in SETTINGS)
    assert all(len(rest.split(" | ")) == 4 for _, rest in rows), "type, default, who and why, what it does"
    removed = doc.partition("### Removed settings")[2].partition("\n### ")[0]
    assert sorted(n for n in REMOVED_SETTINGS if f"`{n}`" not in removed) == []


def test_stats_are_documented() -> None:
    doc = (ROOT / "docs" / "stats.md").read_text(encoding="utf-8")
    used = used_stats()
    assert "changewatch/watch/jsonld_invalid_blocks" in used  # the scan works
    missing = sorted(s for s in used if f"`{s}`" not in doc)
    assert not missing, f"undocumented stats: {missing}"


def test_watch_options_are_documented() -> None:
    from changewatch.watchlist import WATCH_OPTIONS

    doc = (ROOT / "docs" / "watchlist.md").read_text(encoding="utf-8")
    missing = sorted(o for o in WATCH_OPTIONS if f"| `{o}` |" not in doc)
    assert not missing, f"undocumented watch options: {missing}"


def test_command_line_options_are_documented() -> None:
    import argparse

    from changewatch.cli import _parser

    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert {"compare", "changes", "migrate"} <= set(sub.choices)  # the scan works
    missing = []
    for name, parser in sub.choices.items():
        section = doc.partition(f"## `changewatch {name}")[2].partition("\n## ")[0]
        options = [o for action in parser._actions for o in action.option_strings if o.startswith("--")]
        missing += [f"{name} {o}" for o in options if o != "--help" and f"| `{o}" not in section]
        missing += [] if section else [name]
    assert not missing, f"undocumented in docs/cli.md: {missing}"


def test_readme_commands_and_ci() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"^(\./scripts/\S+)", readme, flags=re.M)
    assert commands == ["./scripts/demo.sh", "./scripts/test.sh"]
    for command in commands:
        assert (ROOT / command).exists()
    assert "./scripts/test.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _layout_rows() -> list[str]:
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.partition("\n## Layout\n")[2].partition("\n## ")[0]
    return re.findall(r"^\| `([^`]+)` \|", section, flags=re.M)


def _package_tree() -> set[str]:
    """The package root's modules, its directories, and every subpackage deeper down."""
    package = ROOT / "changewatch"
    names = {p.name for p in package.glob("*.py")}
    names |= {f"{d.name}/" for d in package.iterdir() if d.is_dir() and not d.name.startswith(("_", "."))}
    names |= {f"{p.parent.relative_to(package).as_posix()}/" for p in package.glob("*/*/**/__init__.py")}
    return names


def test_layout_table_matches_the_tree() -> None:
    rows = _layout_rows()
    assert "core/comparisons/" in rows and "items.py" in rows  # the scan works
    assert len(rows) == len(set(rows)), "a path named twice in docs/architecture.md's layout table"
    tree = _package_tree()
    assert not tree - set(rows), f"missing from docs/architecture.md's layout table: {sorted(tree - set(rows))}"
    assert not set(rows) - tree, f"in docs/architecture.md's layout table, not in the tree: {sorted(set(rows) - tree)}"


def _docs() -> dict[str, str]:
    """Every Markdown document by its path from the root, fenced code blocks removed."""
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return {p.relative_to(ROOT).as_posix(): re.sub(r"^```.*?^```", "", p.read_text(encoding="utf-8"),
                                                      flags=re.S | re.M) for p in paths}


def _headings(text: str) -> list[str]:
    return [h.strip().replace("`", "") for h in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)]


def _anchors(text: str) -> set[str]:
    """GitHub's anchors of a document's headings."""
    anchors: set[str] = set()
    for heading in _headings(text):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        anchor, n = slug, 0
        while anchor in anchors:
            n += 1
            anchor = f"{slug}-{n}"
        anchors.add(anchor)
    return anchors


def test_links_and_anchors_resolve() -> None:
    docs = _docs()
    broken = []
    for path, text in docs.items():
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # http(s), mailto: not checked here
            file, _, anchor = target.partition("#")
            resolved = (ROOT / path).parent / file if file else ROOT / path
            if not resolved.exists():
                broken.append(f"{path}: {target}")
                continue
            key = resolved.resolve().relative_to(ROOT).as_posix()
            if anchor and key in docs and anchor not in _anchors(docs[key]):
                broken.append(f"{path}: {target} (no such heading)")
    assert not broken, f"broken links: {broken}"


def test_cited_sections_exist() -> None:
    """A document's name followed by a quoted heading, as code, tests and docs cite a section,
    names a heading of that document (or its start, up to a colon)."""
    docs = _docs()
    files = [*SOURCES, *sorted((ROOT / "tests").rglob("*.py")), *sorted((ROOT / "bench").rglob("*.py")),
             *(ROOT / p for p in docs), ROOT / "pyproject.toml"]
    stale = []
    for file in files:
        text = file.read_text(encoding="utf-8")
        for doc, section in re.findall(r'\b([\w-]+)\.md\)?,\s+"([^"]+)"', text):
            section = " ".join(section.split())
            key = "README.md" if doc == "README" else f"docs/{doc}.md"
            headings = _headings(docs[key]) if key in docs else []
            if not any(h == section or h.startswith(f"{section}:") for h in headings):
                stale.append(f"{file.relative_to(ROOT)}: {doc}.md, {section!r}")
    assert not stale, f"citations of sections that do not exist: {stale}"


def test_a_link_named_after_a_document_leads_to_it() -> None:
    """"[architecture.md](noise.md#…)" sends a reader who wants architecture.md elsewhere."""
    wrong = [f"{path}: [{label}]({target})" for path, text in _docs().items()
             for label, target in re.findall(r"\[([\w-]+\.md)\]\(([^)#\s]*)", text)
             if target and target.rsplit("/", 1)[-1] != label]
    assert not wrong, wrong


def test_every_install_command_names_where_the_package_is() -> None:
    """The distribution is not on PyPI: ``pip install 'scrapy-changewatch[postgresql]'`` fails
    for a reader (or installs someone else's package of that name)."""
    commands = [(path, line) for path, text in _docs().items()
                for line in re.findall(r"pip install[^`\n]*scrapy-changewatch[^`\n]*", text)]
    assert commands
    assert not [c for c in commands if "@ git+" not in c[1]], commands
