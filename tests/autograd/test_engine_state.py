"""The engine's own state and switches: the compiled-backward switch is a scoped, thread-local
context manager; an AccumulateGrad node called directly accumulates as torch's does; the engine
modules import only downward (no import inside a function)."""

from __future__ import annotations

import ast
import pathlib
import threading

import pytest

import jaxgrad
from differential import ok, same, val
from jaxgrad._engine import compiled_backward as _compiled_backward
from jaxgrad._engine import engine as _engine

SRC = pathlib.Path(jaxgrad.__file__).parent


def _backward_of_new_structure(n: int) -> None:
    """A backward whose graph structure (a length-``n`` leaf) no other test builds."""
    x = jaxgrad.ones(n, requires_grad=True)
    (x * 3).tanh().sum().backward()


def test_compiled_backward_switch_is_scoped_and_thread_local():
    cache = _compiled_backward._cache
    before = len(cache)
    with _engine.compiled_backward(False):
        _backward_of_new_structure(7919)
        assert len(cache) == before  # eager engine: nothing compiled
        worker = threading.Thread(target=_backward_of_new_structure, args=(7907,))
        worker.start()
        worker.join()
        assert len(cache) == before + 1  # another thread keeps the default (on)
        with _engine.compiled_backward(True):
            _backward_of_new_structure(7901)
        assert len(cache) == before + 2
        _backward_of_new_structure(7883)  # the inner block restored "off"
        assert len(cache) == before + 2
    _backward_of_new_structure(7879)
    assert len(cache) == before + 3


def test_compiled_backward_switch_restores_after_an_exception():
    cache = _compiled_backward._cache
    with pytest.raises(KeyError), _engine.compiled_backward(False):
        raise KeyError("raised inside the block")
    before = len(cache)
    _backward_of_new_structure(7873)
    assert len(cache) == before + 1


def _direct_accumulate_calls(T, values):
    a = T.ones(2, requires_grad=True)
    calls = []
    a.register_post_accumulate_grad_hook(lambda t: calls.append(t.grad.clone()))
    acc = (a * 2).sum().grad_fn.next_functions[0][0].next_functions[0][0]
    results = [acc(T.tensor(v)) for v in values]
    return type(acc).__name__, results, a.grad, calls


def test_calling_accumulate_grad_node_directly_accumulates():
    same(lambda T: _direct_accumulate_calls(T, [[1.0, 2.0]]))


def test_calling_accumulate_grad_node_directly_twice():
    same(lambda T: _direct_accumulate_calls(T, [[1.0, 2.0], [3.0, 4.0]]))


def test_grad_with_empty_inputs():
    def prog(T):
        a = T.ones(2, requires_grad=True)
        try:
            result = T.autograd.grad((a * 2).sum(), ())
        except RuntimeError as e:
            result = str(e).replace("torch", "jaxgrad")
        return result, a.grad
    same(prog)


def test_backward_checks_empty_inputs_before_tensors():
    def prog(T):
        try:
            T.autograd.backward(5, inputs=[])
        except (RuntimeError, TypeError) as e:
            return type(e).__name__, str(e).replace("torch", "jaxgrad")
    same(prog)


ENGINE_MODULES = ["_engine/engine", "_engine/compiled_backward", "_core/graph",
                  "_engine/accumulate"]


def _imports(path: str) -> tuple[list[str], list[int]]:
    """(jaxgrad modules the module at ``jaxgrad/<path>.py`` imports, lines of imports in
    functions)."""
    tree = ast.parse((SRC / f"{path}.py").read_text())
    package = ["jaxgrad", *path.split("/")[:-1]]
    found, nested = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = ".".join(package[:len(package) - node.level + 1])
            target = f"{base}.{node.module}" if node.module else base
            found += [target] if node.module else [f"{target}.{a.name}" for a in node.names]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            nested += [n.lineno for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))]
    return found, nested


@pytest.mark.parametrize("name", ENGINE_MODULES)
def test_engine_modules_import_nothing_inside_functions(name):
    assert _imports(name)[1] == []


def test_engine_layers_point_down():
    # the graph (layer 0) sits on layer-0 helpers only; the engine hands itself to the
    # compiled backward instead of being imported by it
    assert set(_imports("_core/graph")[0]) <= {
        f"jaxgrad._core.{m}" for m in ("dtypes", "storage", "device", "grad_mode", "typename",
                                       "epoch", "anomaly")}
    assert "jaxgrad._engine.engine" not in _imports("_engine/compiled_backward")[0]
    assert "jaxgrad._engine.engine" not in _imports("_engine/accumulate")[0]
    assert not [m for m in _imports("_engine/accumulate")[0] if m.startswith("jaxgrad._functions")]


def test_set_multithreading_enabled_as_function_and_context_manager():
    def program(T):
        seen = [T.autograd.is_multithreading_enabled()]
        with T.autograd.set_multithreading_enabled(False):
            seen.append(T.autograd.is_multithreading_enabled())
            T.autograd.set_multithreading_enabled(True)
            seen.append(T.autograd.is_multithreading_enabled())
        seen.append(T.autograd.is_multithreading_enabled())
        T.autograd.set_multithreading_enabled(False)
        seen.append(T.autograd.is_multithreading_enabled())
        x = T.tensor([2.0], requires_grad=True)
        (x * x).sum().backward()
        T.autograd.set_multithreading_enabled(True)
        return seen, val(x.grad), type(T.autograd.set_multithreading_enabled).__name__

    ok(program)
