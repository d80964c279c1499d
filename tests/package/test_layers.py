"""The package's layers (DESIGN.md section 2): private packages in one order, imports that only
point down it, no cycle, no import inside a function or below a module's code.

Every ``import`` in every module counts, at any nesting level (an import inside a function is
still a dependency), except those under ``if TYPE_CHECKING:``. An import names its target module
(``from .._functions import shapes`` -> ``jaxgrad._functions.shapes``; ``from .._core.tensor import
Tensor`` -> ``jaxgrad._core.tensor``); the implicit import of a parent package does not count.
"""

from __future__ import annotations

import ast
import functools
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


@functools.cache
def _graph() -> dict[str, set[str]]:
    """Every module's imports (parsed once per test process; the tests only read it)."""
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
    # from .._core.tensor import Tensor
    assert "jaxgrad._core.tensor" in graph["jaxgrad._engine.dispatch"]
    # from ..._functions import indexing, pointwise, reductions
    assert "jaxgrad._functions.reductions" in graph["jaxgrad.nn._functional.losses"]
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


# --- the package order -------------------------------------------------------------------------

# Bottom to top: a module imports only from its own package or one below it. Everything else (the
# public namespaces, ``__init__``, torch's ``_VF`` and the ``_stubgen`` tool) sits on top.
PACKAGE_ORDER = ["_core", "_ops", "_engine", "_functions", "_func", "_autograd", "_compile",
                 "_serialization", "_distributed"]
TOP_LEVEL_PRIVATE = {"jaxgrad._VF", "jaxgrad._stubgen"}  # torch's name; a developer tool


def _rank(module: str) -> int:
    """The layer of ``module``: its package's place in PACKAGE_ORDER, or the top."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in PACKAGE_ORDER:
        return PACKAGE_ORDER.index(parts[1])
    return len(PACKAGE_ORDER)


def _upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return [f"{module} -> {target}" for module, targets in sorted(graph.items())
            for target in sorted(targets) if _rank(target) > _rank(module)]


def test_the_order_check_sees_an_upward_import():
    graph = {"jaxgrad._core.tensor": {"jaxgrad._engine.dispatch"},
             "jaxgrad._engine.dispatch": {"jaxgrad._core.tensor", "jaxgrad.nn.parameter"},
             "jaxgrad.nn.functional": {"jaxgrad._functions.shapes"}}
    assert _upward_imports(graph) == ["jaxgrad._core.tensor -> jaxgrad._engine.dispatch",
                                      "jaxgrad._engine.dispatch -> jaxgrad.nn.parameter"]


def test_every_private_module_is_in_a_layer_package():
    loose = [m for m in _graph() if m.count(".") == 1 and m.split(".")[1].startswith("_")
             and m not in TOP_LEVEL_PRIVATE and m.split(".")[1] not in PACKAGE_ORDER]
    assert not loose, f"private modules outside the layer packages: {loose}"
    packages = {p.name for p in ROOT.iterdir() if p.is_dir() and p.name.startswith("_")
                and (p / "__init__.py").exists()}
    assert packages == set(PACKAGE_ORDER), packages ^ set(PACKAGE_ORDER)


def test_imports_point_down_the_package_order():
    """No module imports from a package above its own, nor into the public namespaces from below
    (imports for type checking only are not counted)."""
    upward = _upward_imports(_graph())
    assert not upward, "upward imports: " + "; ".join(upward)


def _code_before_imports(tree: ast.Module) -> list[int]:
    """Lines of imports that come after a module's first statement that is not an import (its
    docstring, ``__all__`` and ``if TYPE_CHECKING:`` blocks aside)."""
    seen_code, late = False, []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if seen_code:
                late.append(node.lineno)
        elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)) or (isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)) or (isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["__all__"]):
            continue
        else:
            seen_code = True
    return late


def test_no_import_below_a_module_s_code():
    """DESIGN.md: no import at the bottom of a file (no import order ``__init__`` must get right)."""
    assert _code_before_imports(ast.parse("import a\nx = 1\nimport b\n")) == [3]
    offenders = [f"{_module_name(p)}:{line}" for p in sorted(ROOT.rglob("*.py"))
                 for line in _code_before_imports(ast.parse(p.read_text()))]
    assert not offenders, offenders
