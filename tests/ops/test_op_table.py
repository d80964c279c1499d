"""Op rows: schemas parse as torch writes them, rows are immutable, a formula that names what the
row does not provide fails when the row is built, and a row with variants generates the function,
the method and the in-place form (checked against torch)."""

from __future__ import annotations

import types

import jax.numpy as jnp
import pytest

import jaxgrad
from differential import raises, same
from jaxgrad._functions import opgen as _opgen
from jaxgrad._ops._schema import parse_schema
from jaxgrad._ops._table import Op

# lines of torch's native_functions.yaml
SCHEMAS = {
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor":
        [("self", "tensor", False, None), ("other", "tensor", False, None),
         ("alpha", "scalar", True, 1)],
    "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor":
        [("self", "tensor", False, None), ("min", "scalar", False, None),
         ("max", "scalar", False, None)],
    "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)"
    " -> Tensor":
        [("self", "tensor", False, None), ("dim", "static", False, None),
         ("keepdim", "static", False, False), ("dtype", "static", True, None)],
    "cat(Tensor[] tensors, int dim=0) -> Tensor":
        [("tensors", "tensors", False, None), ("dim", "static", False, 0)],
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)":
        [("self", "tensor", False, None), ("other", "tensor", False, None),
         ("alpha", "scalar", True, 1)],
    "norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor":
        [("self", "tensor", False, None), ("p", "scalar", False, None),
         ("dim", "static", False, None), ("keepdim", "static", False, False)],
}


@pytest.mark.parametrize("text", SCHEMAS)
def test_schemas_parse_as_torch_writes_them(text):
    schema = parse_schema(text)
    got = [(p.name, p.kind, p.kwarg_only, p.default if p.has_default else None)
           for p in schema.params]
    assert got == SCHEMAS[text]
    assert str(schema) == text
    assert schema.inplace == schema.name.endswith("_")


def test_a_formula_naming_what_the_row_lacks_fails_when_built():
    with pytest.raises(TypeError, match="reslt"):
        Op("exp(Tensor self) -> Tensor", "ExpBackward0", jnp.exp,
           grads={"self": lambda grad, reslt: grad * reslt})
    with pytest.raises(TypeError, match="'other'"):
        Op("exp(Tensor self) -> Tensor", "ExpBackward0", jnp.exp,
           grads={"other": lambda grad: grad})
    # a static argument of a schema-less row is its forward's keyword tail
    row = Op("sum", "SumBackward1", lambda x, dim, keepdim: jnp.sum(x, dim, keepdims=keepdim),
             grads={"self": lambda grad, self_shape, dim, keepdim: grad})
    assert row.static_names() == ("dim", "keepdim")


def test_rows_are_immutable():
    with pytest.raises(AttributeError, match="immutable"):
        jaxgrad._ops.elementwise.EXP.grads = {}


def test_a_schema_derives_operands_traced_scalars_and_statics():
    row = Op("lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", "LerpBackward0",
             lambda x, end, weight: x + weight * (end - x),
             grads={"self": lambda grad, weight: grad * (1 - weight)})
    assert (row.inputs, row.aux, row.static_names()) == (("self", "end"), ("weight",), ())


@pytest.fixture
def cube():
    """A new pointwise op declared by one row: ``cube`` (torch has none, so the test compares
    with ``x * x * x`` written out in torch)."""
    row = Op("cube(Tensor self) -> Tensor", "PowBackward0", lambda x: x * x * x,
             grads={"self": lambda grad, self: grad * 3 * self * self},
             variants="function method", inplace="method", doc="``x ** 3``.")
    functions = _opgen.generate(types.SimpleNamespace(CUBE=row))
    method, inplace = _opgen.method_form(_opgen.DECLARED["cube"]), \
        _opgen.method_form(_opgen.DECLARED["cube_"])
    yield functions["cube"], method, inplace
    del _opgen.DECLARED["cube"], _opgen.DECLARED["cube_"]


def test_one_row_generates_function_method_and_inplace(cube):
    function, method, inplace = cube

    def program(T):
        x = T.tensor([1.0, -2.0, 0.5], requires_grad=True)
        if T is jaxgrad:
            y, z = function(x), method(x)
            w = inplace(x.detach().clone())
        else:
            y, z = x * x * x, x * x * x
            w = x.detach().clone().mul_(x.detach()).mul_(x.detach())
        (y.sum() + z.sum()).backward()
        return y.tolist(), w.tolist(), x.grad.tolist()

    same(program)
    assert function.__name__ == "cube" and "cube(Tensor self) -> Tensor" in function.__doc__
    with pytest.raises(TypeError, match=r"cube\(\): argument 'input' \(position 1\) must be "
                                        r"Tensor, not int"):
        function(3)


def test_generated_errors_name_the_form_torch_names():
    raises(lambda T: T.exp(input=3))
    raises(lambda T: T.ones(2).addcmul_(T.ones(2), 2))
    raises(lambda T: T.maximum(T.ones(2), 3))


def test_generated_functions_and_methods_pickle_by_reference():
    import pickle

    for fn in (jaxgrad.exp, jaxgrad.clip, jaxgrad.Tensor.exp, jaxgrad.Tensor.add_,
               jaxgrad.Tensor.clip, jaxgrad.nn.functional.linear, jaxgrad.Tensor.__add__,
               jaxgrad.Tensor.float, jaxgrad.Tensor.view_as, jaxgrad.clip_, jaxgrad.concat):
        assert pickle.loads(pickle.dumps(fn)) is fn


INPLACE_UNARY = ["abs_", "exp_", "log_", "sqrt_", "sin_", "cos_", "tanh_", "sigmoid_", "relu_",
                 "reciprocal_", "sign_", "zero_"]


@pytest.mark.parametrize("name", INPLACE_UNARY)
@pytest.mark.parametrize("form", ["method", "function"])
def test_generated_inplace_variants_like_torch(name, form):
    """Every in-place form a row generates: values, gradients, the node and saved values torch
    records, versions; the function form only where torch has one (``torch.sign_`` does not)."""

    def program(T):
        x = T.tensor([0.5, 1.5, 2.0], requires_grad=True)
        y = x * 1
        out = getattr(y, name)() if form == "method" else getattr(T, name)(y)
        out.sum().backward()
        return out is y, y, y._version, type(y.grad_fn).__name__, x.grad

    same(program)


@pytest.mark.parametrize("name", INPLACE_UNARY)
def test_generated_inplace_variants_refuse_leaves_like_torch(name):
    raises(lambda T: getattr(T.ones(2, requires_grad=True), name)())


def test_declarations_are_checked_when_built():
    with pytest.raises(TypeError, match="unknown variants"):
        Op("exp(Tensor self) -> Tensor", "ExpBackward0", jnp.exp, variants="function mehtod")
    with pytest.raises(TypeError, match="does not take"):
        _opgen.declare("frob(Tensor self, int dim, *, bool keepdim=False) -> Tensor")(
            lambda input, dim, keepdim=False: input)  # keepdim must be keyword-only
    with pytest.raises(TypeError, match="declared twice"):
        _opgen.declare("exp(Tensor self) -> Tensor")(lambda input: input)


def test_generated_optional_operands_take_none():
    row = Op("scaled(Tensor self, Tensor? weight=None, Scalar? by=None) -> Tensor", "MulBackward0",
             lambda x, weight, by: x * (1 if weight is None else weight) * (1 if by is None else by),
             grads={"self": lambda grad: grad}, variants="function")
    functions = _opgen.generate(types.SimpleNamespace(SCALED=row))
    try:
        scaled = functions["scaled"]
        x = jaxgrad.tensor([1.0, 2.0])
        assert scaled(x).tolist() == [1.0, 2.0]
        assert scaled(x, jaxgrad.tensor([3.0, 3.0]), by=2).tolist() == [6.0, 12.0]
    finally:
        del _opgen.DECLARED["scaled"]


def test_aliases_have_their_own_names_like_torch():
    with pytest.raises(TypeError, match=r"^clip\(\): argument 'input'"):  # torch's text: README
        jaxgrad.clip(3, 0, 1)
    same(lambda T: (T.clip_(T.tensor([-2.0, 2.0]), -1, 1), T.ones(2, 3).swapaxes(0, 1).shape,
                    T.concat([T.ones(1), T.zeros(1)]), T.ones(2).contiguous()))
    assert jaxgrad.Tensor.swapaxes.__name__ == "swapaxes" and jaxgrad.clip.__name__ == "clip"


def test_classes_print_their_public_path_like_torch():
    same(lambda T: [str(c).replace("torch", "LIB").replace("jaxgrad", "LIB") for c in
                    (type(T.ones(1)), T.Size, T.dtype, type(T.device("cpu")),
                     type(T.nn.Linear(1, 1)), type(T.nn.Parameter(T.ones(1))))])
