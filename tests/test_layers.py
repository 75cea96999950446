"""No import cycles between changewatch's subpackages (and its package-root modules): every
``import`` counts, those inside functions too; only imports under ``if TYPE_CHECKING:`` may point
back. A cycle is reported with the modules whose imports make each of its edges."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "changewatch"


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _node(module: str) -> str:
    """The layer a module belongs to: ``changewatch.X`` (a subpackage or a package-root module)."""
    return ".".join(module.split(".")[:2])


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for statement in node.body for n in ast.walk(statement)}
    return skipped


def _imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    # ``from changewatch import runtime`` imports a subpackage
    return [target] + [f"{target}.{alias.name}" for alias in node.names if target == "changewatch"]


def import_edges() -> dict[str, dict[str, set[str]]]:
    """layer → layer it imports → the modules whose imports make that edge."""
    edges: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            for target in _imported(node, module, path.name == "__init__.py"):
                if target.startswith("changewatch.") and _node(target) != _node(module):
                    edges[_node(module)][_node(target)].add(module)
    return edges


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_walk_sees_function_level_imports_and_skips_type_checking() -> None:
    edges = import_edges()
    assert "changewatch.runtime" in edges["changewatch.pipelines"]  # the scan works
    # changewatch/contracts.py imports the add-on inside a function only
    assert "changewatch.addon" in edges["changewatch.contracts"]


def test_no_import_cycle_between_subpackages() -> None:
    edges = import_edges()
    graph = {a: set(targets) for a, targets in edges.items()}
    report = []
    for component in cycles(graph):
        report.append("cycle: " + ", ".join(component))
        report += [f"    {a} -> {b} ({', '.join(sorted(edges[a][b]))})"
                   for a in component for b in sorted(graph[a]) if b in component]
    assert not report, "\n".join(report)


def test_the_settings_and_the_core_import_no_feature() -> None:
    edges = import_edges()
    assert set(edges.get("changewatch.core", {})) == set()
    assert set(edges["changewatch.config"]) == {"changewatch.core"}
    assert set(edges["changewatch.runtime"]) <= {"changewatch.core", "changewatch.config", "changewatch.store"}
    assert set(edges["changewatch.watchlist"]) == {"changewatch.core"}
