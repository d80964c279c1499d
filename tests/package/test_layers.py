"""The package's imports form no cycle (DESIGN.md section 2: imports only point down).

Every ``import`` in every module counts, at any nesting level (an import inside a function is
still a dependency), except those under ``if TYPE_CHECKING:``. An import names its target module
(``from . import _api`` -> ``jaxgrad._api``; ``from ._tensor import Tensor`` ->
``jaxgrad._tensor``); the implicit import of a parent package does not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import jaxgrad

ROOT = Path(jaxgrad.__file__).parent


def _module_name(path: Path) -> str:
    parts = ["jaxgrad", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_package(name: str) -> bool:
    return (ROOT.joinpath(*name.split(".")[1:]) / "__init__.py").exists()


def _exists(name: str) -> bool:
    rel = name.split(".")[1:]
    return _is_package(name) or ROOT.joinpath(*rel).with_suffix(".py").exists()


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def _imports(path: Path) -> set[str]:
    """The jaxgrad modules ``path`` imports."""
    name = _module_name(path)
    package = name if _is_package(name) else name.rpartition(".")[0]
    tree = ast.parse(path.read_text())
    skip = _type_checking_lines(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("jaxgrad"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith("jaxgrad"):
                target = node.module
            else:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if _exists(sub) else target)
    found.discard(name)
    return found


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in sorted(ROOT.rglob("*.py"))}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_finder_sees_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_finder_reads_relative_and_nested_imports():
    graph = _graph()
    assert "jaxgrad._tensor" in graph["jaxgrad._dispatch"]  # from ._tensor import Tensor
    assert "jaxgrad._api" in graph["jaxgrad.nn.functional"]  # from .. import _api as A
    assert "jaxgrad._ops._table" in graph["jaxgrad._ops.elementwise"]


def test_imports_form_no_cycle():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_no_import_inside_a_function():
    """DESIGN.md: no import inside a function to dodge a cycle (docstring examples aside)."""
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                offenders += [f"{_module_name(path)}:{node.lineno}" for node in ast.walk(fn)
                              if isinstance(node, ast.ImportFrom) and node.level]
    assert not offenders, offenders
