"""The checked-in type stubs are what ``python -m jaxgrad._stubgen`` writes from the op
declarations, so editors complete ``jaxgrad.exp`` and ``t.exp()`` with torch's signatures."""

from __future__ import annotations

import ast
import inspect
import types
from pathlib import Path

import jaxgrad
from jaxgrad import _stubgen

ROOT = Path(jaxgrad.__file__).parent


def test_stubs_are_current():
    for name, text in (("__init__.pyi", _stubgen.init_stub()),
                       ("_core/tensor.pyi", _stubgen.tensor_stub())):
        assert (ROOT / name).read_text() == text, (
            f"src/jaxgrad/{name} is stale: run `python -m jaxgrad._stubgen`")


def _defs(text: str) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef)}


def test_every_public_function_and_tensor_method_is_in_the_stubs():
    init, tensor = _defs(_stubgen.init_stub()), _stubgen.tensor_stub()
    tree = ast.parse(tensor)
    tensor_class = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    methods = {n.name for n in tensor_class.body if isinstance(n, ast.FunctionDef)}
    stub_names = set(init) | {a.asname or a.name for n in ast.parse(_stubgen.init_stub()).body
                              if isinstance(n, ast.ImportFrom) for a in n.names}
    stub_names |= {n.target.id for n in ast.parse(_stubgen.init_stub()).body
                   if isinstance(n, ast.AnnAssign)}
    # a submodule another import loaded (``import jaxgrad.functorch``) is an attribute too
    loaded_later = {n for n, v in vars(jaxgrad).items() if isinstance(v, types.ModuleType)
                    and n not in _stubgen._submodules_imported_by_init()}
    public = {n for n in vars(jaxgrad) if not n.startswith("_")} - loaded_later
    assert public <= stub_names, sorted(public - stub_names)
    attached = {n for n, v in vars(jaxgrad.Tensor).items()
                if (callable(v) and not n.startswith("__")) or isinstance(v, property)}
    assert attached <= methods, sorted(attached - methods)


def test_a_generated_op_has_torch_s_signature_in_the_stub_and_at_runtime():
    exp = _defs(_stubgen.init_stub())["exp"]
    assert ast.unparse(exp.args) == "input: Tensor, *, out: Tensor | None=..."
    assert ast.unparse(exp.returns) == "Tensor"
    assert str(inspect.signature(jaxgrad.exp)) == "(input, *, out: 'Tensor | None' = None)"
    assert str(inspect.signature(jaxgrad.Tensor.exp)) == "(self)"
    assert "exp(Tensor self) -> Tensor" in jaxgrad.exp.__doc__
    assert jaxgrad.Tensor.exp.__doc__ == jaxgrad.exp.__doc__
    assert "exp_(Tensor(a!) self) -> Tensor(a!)" in jaxgrad.Tensor.exp_.__doc__
    add = _defs(_stubgen.init_stub())["add"]
    assert [a.arg for a in add.args.kwonlyargs] == ["alpha", "out"]
