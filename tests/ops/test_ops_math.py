"""Elementwise math ops against torch: rounding, trigonometric and hyperbolic functions,
erf/erfinv/lgamma/digamma, fmod/remainder/floor_divide, xlogy, clamp_min/clamp_max,
atan2/hypot/logaddexp (atan2's gradient at the origin), nextafter, pow's gradient at a zero
base, isnan & co, comparisons and their aliases (``greater``, ``less_equal``...), logical and
bitwise ops and the operators torch maps to them (``%``, ``//``, ``&``, ``|``, ``^``, ``~``).
Every case runs on torch and on jaxgrad
(``differential.same``): values, dtypes, grad_fn graphs, saved tensors, gradients, versions and
errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from differential import attempt, next_functions, ok, raises, same, val

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

FAST = settings(max_examples=5, deadline=None, database=None)

ANY = [-2.5, -1.5, -0.25, 0.5, 1.5, 2.75]  # ties for round, both signs
UNIT = [-0.75, -0.25, 0.3, 0.6]  # inside (-1, 1): asin, acos, atanh, erfinv
POS = [0.5, 1.25, 2.0, 3.5]  # lgamma, digamma, rsqrt
ABOVE1 = [1.25, 2.0, 3.5]  # acosh
SPECIAL = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, -1.5, 2.0]

# name -> (f(T, x), values): the function form; its method and in-place forms are below
UNARY = {
    "floor": (lambda T, x: T.floor(x), ANY),
    "ceil": (lambda T, x: T.ceil(x), ANY),
    "round": (lambda T, x: T.round(x), ANY),
    "round_decimals": (lambda T, x: T.round(x * 1.2345, decimals=2), ANY),
    "round_decimals_0": (lambda T, x: T.round(x, decimals=0), ANY),
    "round_decimals_neg": (lambda T, x: T.round(x * 123, decimals=-1), ANY),
    "trunc": (lambda T, x: T.trunc(x), ANY),
    "fix": (lambda T, x: T.fix(x), ANY),
    "negative": (lambda T, x: T.negative(x), ANY),
    "absolute": (lambda T, x: T.absolute(x), ANY),
    "frac": (lambda T, x: T.frac(x), ANY),
    "sign": (lambda T, x: T.sign(x), ANY),
    "sgn": (lambda T, x: T.sgn(x), [-1.5, 0.0, 2.0]),
    "signbit": (lambda T, x: T.signbit(x), SPECIAL),
    "tan": (lambda T, x: T.tan(x), UNIT),
    "sinh": (lambda T, x: T.sinh(x), ANY),
    "cosh": (lambda T, x: T.cosh(x), ANY),
    "asin": (lambda T, x: T.asin(x), UNIT),
    "arcsin": (lambda T, x: T.arcsin(x), UNIT),
    "acos": (lambda T, x: T.acos(x), UNIT),
    "arccos": (lambda T, x: T.arccos(x), UNIT),
    "atan": (lambda T, x: T.atan(x), ANY),
    "arctan": (lambda T, x: T.arctan(x), ANY),
    "asinh": (lambda T, x: T.asinh(x), ANY),
    "arcsinh": (lambda T, x: T.arcsinh(x), ANY),
    "acosh": (lambda T, x: T.acosh(x), ABOVE1),
    "arccosh": (lambda T, x: T.arccosh(x), ABOVE1),
    "atanh": (lambda T, x: T.atanh(x), UNIT),
    "arctanh": (lambda T, x: T.arctanh(x), UNIT),
    "erf": (lambda T, x: T.erf(x), ANY),
    "erfc": (lambda T, x: T.erfc(x), ANY),
    "erfinv": (lambda T, x: T.erfinv(x), UNIT),
    "exp2": (lambda T, x: T.exp2(x), ANY),
    "lgamma": (lambda T, x: T.lgamma(x), POS),
    "lgamma_negative": (lambda T, x: T.lgamma(x), [-0.5, -1.5, -2.25]),
    "digamma": (lambda T, x: T.digamma(x), POS),
    "rsqrt": (lambda T, x: T.rsqrt(x), POS),
    "deg2rad": (lambda T, x: T.deg2rad(x), ANY),
    "rad2deg": (lambda T, x: T.rad2deg(x), ANY),
    "nan_to_num": (lambda T, x: T.nan_to_num(x), SPECIAL),
    "nan_to_num_values": (lambda T, x: T.nan_to_num(x, nan=1.0, posinf=9.0, neginf=-9.0),
                          SPECIAL),
    "isnan": (lambda T, x: T.isnan(x), SPECIAL),
    "isinf": (lambda T, x: T.isinf(x), SPECIAL),
    "isfinite": (lambda T, x: T.isfinite(x), SPECIAL),
    "isposinf": (lambda T, x: T.isposinf(x), SPECIAL),
    "isneginf": (lambda T, x: T.isneginf(x), SPECIAL),
    "square": (lambda T, x: T.square(x), ANY),
    "bitwise_not": (lambda T, x: T.bitwise_not(x), ANY),
    "logical_not": (lambda T, x: T.logical_not(x), SPECIAL),
}

SAVED = ("_saved_self", "_saved_result", "_saved_other", "_saved_min", "_saved_max")


def _saved(T, out):
    """What the node saved, as torch exposes it (``missing`` where it has no such field)."""
    fn = out.grad_fn
    return None if fn is None else [getattr(fn, name, "missing") for name in SAVED]


def _weights(T, out):
    return T.arange(1.0, out.numel() + 1.0, dtype=out.dtype).reshape(out.shape)


def _run(T, f, values, dtype=None):
    x = T.tensor(values, dtype=dtype or T.float32, requires_grad=True)
    out = f(T, x)
    result = [out, next_functions(out.grad_fn), _saved(T, out)]
    if out.requires_grad:
        (out * _weights(T, out)).sum().backward()
        result.append(val(x.grad))
    return result


@pytest.mark.parametrize("name", UNARY)
def test_unary_values_graph_saved_tensors_and_grads(name):
    f, values = UNARY[name]
    same(lambda T: _run(T, f, values))


@pytest.mark.parametrize("name", UNARY)
def test_unary_float64(name):
    f, values = UNARY[name]
    same(lambda T: _run(T, f, values, T.float64))


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float16"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_other_dtypes(name, dtype):
    """Integral inputs: rounding returns them as they are, the float functions promote them,
    some kernels do not exist (torch's NotImplementedError); float16 keeps its dtype."""
    f, _ = UNARY[name]
    values = [0, 1, 3, 2] if dtype in ("uint8", "bool") else [-3, 0, 1, 5]
    same(lambda T: f(T, T.tensor(values).to(getattr(T, dtype))), rtol=2e-3)


METHODS = ["floor", "ceil", "round", "trunc", "fix", "frac", "sign", "sgn", "signbit", "tan",
           "sinh", "cosh", "asin", "arcsin", "acos", "atan", "asinh", "acosh", "atanh", "erf",
           "erfc", "erfinv", "exp2", "lgamma", "digamma", "rsqrt", "deg2rad", "rad2deg",
           "nan_to_num", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "square",
           "negative", "absolute"]


@pytest.mark.parametrize("name", METHODS)
def test_unary_method_forms(name):
    same(lambda T: _run(T, lambda T, x: getattr(x * 0.25 + 1.0, name)(), UNIT))


INPLACE = {  # name -> whether torch also has the in-place function ``torch.<name>_``
    "floor": True, "ceil": True, "round": True, "trunc": True, "fix": True, "frac": True,
    "sign": False, "sgn": False, "tan": True, "sinh": True, "cosh": True, "asin": True,
    "arcsin": True, "acos": True, "arccos": True, "atan": True, "arctan": True, "asinh": True,
    "acosh": True, "atanh": True, "arctanh": True, "erf": True, "erfc": True, "erfinv": False,
    "exp2": True, "lgamma": False, "digamma": False, "rsqrt": True, "deg2rad": True,
    "rad2deg": True, "nan_to_num": True, "square": True, "bitwise_not": False,
}


@pytest.mark.parametrize("name", INPLACE)
def test_unary_inplace_forms(name):
    """``y.op_()`` on a non-leaf: torch's node, the version bump, the gradient through it; on an
    integral tensor the result type must fit (torch's error otherwise)."""

    def program(T):
        x = T.tensor(UNIT, requires_grad=True)
        y = x * 0.5 + 1.25
        out = getattr(y, name + "_")()
        result = [out is y, y._version, next_functions(y.grad_fn)]
        if y.requires_grad:
            (y * _weights(T, y)).sum().backward()
            result.append(val(x.grad))
        return result

    def integral(T):
        return getattr(T.tensor([1, 2, 3]), name + "_")()

    def function_form(T):
        return getattr(T, name + "_")(T.tensor(UNIT) + 1.5) if hasattr(T, name + "_") else "none"

    same(program)
    same(integral)
    same(function_form)
    assert hasattr(torch, name + "_") == INPLACE[name]


def test_inplace_on_a_leaf_and_on_saved_tensors():
    def leaf_inplace(T):
        return T.tensor(UNIT, requires_grad=True).tan_()

    def modified_saved(T):
        x = T.tensor(UNIT, requires_grad=True)
        y = x * 1.0
        z = y.sinh()  # saves y
        y.floor_()
        z.sum().backward()

    def modified_result(T):
        x = T.tensor(UNIT, requires_grad=True)
        z = x.tan()  # saves its result
        z.exp2_()
        z.sum().backward()

    raises(leaf_inplace)
    raises(modified_saved)
    same(modified_result)


@pytest.mark.parametrize("name", ["floor", "tan", "erfinv", "round", "frac", "signbit",
                                  "isposinf", "nan_to_num", "rsqrt", "bitwise_not"])
def test_unary_out(name):
    def program(T):
        src = T.tensor(UNIT) if name != "bitwise_not" else T.tensor([1, -2])
        out = T.empty(0, dtype=src.dtype if name not in ("signbit", "isposinf") else T.bool)
        r = getattr(T, name)(src, out=out)
        return r is out, out, out._version

    def requires_grad(T):
        out = T.empty(4)
        return getattr(T, name)(T.tensor(UNIT, requires_grad=True), out=out)

    ok(program)
    if name not in NOT_DIFFERENTIABLE:
        same(requires_grad)


NOT_DIFFERENTIABLE = ("signbit", "isposinf", "bitwise_not", "floor_divide", "logical_and",
                      "bitwise_xor", "heaviside")


_BOOL_RESULTS = ("logical_and", "logical_or", "logical_xor", "eq", "ne", "lt", "le", "gt", "ge")


@pytest.mark.parametrize("name", [*_BOOL_RESULTS, "floor_divide", "heaviside"])
def test_out_of_a_non_differentiable_op_with_inputs_requiring_grad(name):
    ok(lambda T: getattr(T, name)(T.tensor(A, requires_grad=True), T.tensor(B),
                                    out=T.empty(4, dtype=T.bool if name in _BOOL_RESULTS else
                                                T.float32)))


@pytest.mark.parametrize("name", ["floor_divide", "heaviside"])
def test_out_through_torchs_autograd_fallback(name):
    """floor_divide/heaviside have no formula: their ``out=`` records torch's NotImplemented
    node with edges to the tensors requiring grad (inputs, then ``out``), whose backward raises;
    a leaf ``out`` requiring grad is refused."""
    def program(T):
        f = getattr(T, name)
        a, w = T.tensor(A, requires_grad=True), T.ones(4, requires_grad=True)
        results = [f(a, T.tensor(B), out=T.empty(4)), f(T.tensor(B), a, out=T.empty(0)),
                   f(T.tensor(B), T.tensor(A), out=w * 1), f(a, T.tensor(B), out=w * 2),
                   f(a, T.tensor(B), out=T.zeros(2, 4)[1])]
        with T.no_grad():
            results.append(f(a, T.tensor(B), out=T.empty(4)))
        return (results, [next_functions(r.grad_fn) for r in results],
                attempt(lambda: results[0].sum().backward()),
                attempt(lambda: f(a, T.tensor(B), out=T.ones(4, requires_grad=True))))
    ok(program)


@pytest.mark.parametrize("name", ["logical_not", "signbit", "isposinf", "isneginf"])
def test_out_of_a_one_input_test_with_an_input_requiring_grad(name):
    ok(lambda T: getattr(T, name)(T.tensor(A, requires_grad=True), out=T.empty(4,
                                                                                dtype=T.bool)))


# --- binary ops ------------------------------------------------------------------------------

A = [-2.5, -1.0, 0.75, 3.0]
B = [1.5, -0.75, -2.0, 2.0]

BINARY = {
    "fmod": lambda T, a, b: T.fmod(a, b),
    "fmod_method": lambda T, a, b: a.fmod(b),
    "remainder": lambda T, a, b: T.remainder(a, b),
    "remainder_method": lambda T, a, b: a.remainder(b),
    "mod_operator": lambda T, a, b: a % b,
    "floor_divide": lambda T, a, b: T.floor_divide(a, b),
    "floordiv_operator": lambda T, a, b: a // b,
    "atan2": lambda T, a, b: T.atan2(a, b),
    "arctan2": lambda T, a, b: T.arctan2(a, b),
    "multiply": lambda T, a, b: T.multiply(a, b),
    "divide": lambda T, a, b: T.divide(a, b),
    "divide_floor": lambda T, a, b: a.divide(b, rounding_mode="floor"),
    "subtract": lambda T, a, b: T.subtract(a, b, alpha=2),
    "atan2_method": lambda T, a, b: a.atan2(b),
    "hypot": lambda T, a, b: T.hypot(a, b),
    "logaddexp": lambda T, a, b: T.logaddexp(a, b),
    "logaddexp2": lambda T, a, b: a.logaddexp2(b),
    "xlogy": lambda T, a, b: T.xlogy(a, b),
    "xlogy_method": lambda T, a, b: a.xlogy(b),
    "heaviside": lambda T, a, b: T.heaviside(a, b),
    "clamp_min": lambda T, a, b: T.clamp_min(a, b),
    "clamp_max": lambda T, a, b: a.clamp_max(b),
    "logical_and": lambda T, a, b: T.logical_and(a, b),
    "logical_or": lambda T, a, b: a.logical_or(b),
    "logical_xor": lambda T, a, b: T.logical_xor(a, b),
    "bitwise_and": lambda T, a, b: T.bitwise_and(a, b),
    "bitwise_or": lambda T, a, b: a | b,
    "bitwise_xor": lambda T, a, b: a ^ b,
    "and_operator": lambda T, a, b: a & b,
}


@pytest.mark.parametrize("name", BINARY)
def test_binary_tensor_tensor(name):
    def program(T):
        a = T.tensor(A, requires_grad=True)
        b = T.tensor(B, requires_grad=True)
        out = BINARY[name](T, a, b)
        result = [out, next_functions(out.grad_fn), _saved(T, out)]
        if out.requires_grad:
            (out * _weights(T, out)).sum().backward()
            result += [val(a.grad), val(b.grad)]
        return result

    same(program)


@pytest.mark.parametrize("other", [2, 2.5, -1, 0, True, "0d", "0d_int"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_with_a_number_or_a_0d_tensor(name, dtype, other):
    """A Python number ``other`` (torch's Scalar overloads and their nodes, result dtypes,
    argument errors, integer division by zero) or a 0-d tensor (which does not lift the
    dtype of a dimensioned tensor)."""

    def program(T):
        values = [0, 1, 3, 2] if dtype in ("uint8", "bool") else [-3, 0, 1, 5]
        a = T.tensor(values).to(getattr(T, dtype))
        if a.dtype.is_floating_point:
            a = (a * 0.75).requires_grad_()
        b = (T.tensor(2.5) if other == "0d" else T.tensor(3) if other == "0d_int" else other)
        out = BINARY[name](T, a, b)
        result = [out, next_functions(out.grad_fn), _saved(T, out)]
        if out.requires_grad:
            (out * _weights(T, out)).sum().backward()
            result.append(val(a.grad))
        return result

    same(program)


@pytest.mark.parametrize("name", BINARY)
def test_binary_mixed_dtypes_and_zero_divisors(name):
    def program(T):
        i = T.tensor([-3, 0, 5, 7])
        j = T.tensor([2, 3, -2, 4], dtype=T.int32)
        z = T.tensor([2, 0, -2, 4])
        x = T.tensor(A, dtype=T.float64)
        b = T.tensor([True, False, True, True])
        return [attempt_(lambda p=p, q=q: BINARY[name](T, p, q))
                for p, q in ((i, j), (i, z), (x, i), (i, x), (b, i), (b, b), (j, b))]

    same(program)


def attempt_(f):
    try:
        return f()
    except Exception as exc:  # compared by class and message
        return (type(exc).__name__, str(exc).replace("torch", "jaxgrad"))


@pytest.mark.parametrize("name", ["remainder", "floor_divide", "xlogy", "bitwise_and",
                                  "bitwise_or", "bitwise_xor", "fmod", "atan2", "clamp_min",
                                  "logical_and"])
@pytest.mark.parametrize("first", [2, 2.5, -3])
def test_number_as_first_argument(name, first):
    """torch's ``remainder.Scalar_Tensor``, ``xlogy.Scalar_Self``, the symmetric bitwise ops;
    ``fmod``/``atan2``/... refuse a number there."""

    def program(T):
        x = T.tensor(A, requires_grad=True)
        i = T.tensor([-3, 1, 5, 7])
        out = [attempt_(lambda t=t: getattr(T, name)(first, t)) for t in (x, i)]
        graph = [next_functions(o.grad_fn) if isinstance(o, T.Tensor) else o for o in out]
        return out, graph

    if name in ("fmod", "clamp_min"):  # torch lists its overloads; jaxgrad names the argument
        ta = program(torch)
        assert all(isinstance(o, tuple) and o[0] == "TypeError" for o in ta[0])
        jb = program(__import__("jaxgrad"))
        assert all(isinstance(o, tuple) and o[0] == "TypeError" for o in jb[0])
        return
    same(program)


def test_not_implemented_nodes_raise_in_backward():
    def program(T, f):
        x = T.tensor(A, requires_grad=True)
        out = f(T, x)
        try:
            out.sum().backward()
        except RuntimeError as exc:
            return type(out.grad_fn).__name__, str(exc)
        return "no error"

    for f in (lambda T, x: x // 2, lambda T, x: 3 // x, lambda T, x: T.floor_divide(x, x),
              lambda T, x: 2.5 % x, lambda T, x: T.heaviside(x, x),
              lambda T, x: (x * 1).floor_divide_(2), lambda T, x: (x * 1).heaviside_(x)):
        same(lambda T, f=f: program(T, f))


@pytest.mark.parametrize("name,other", [
    ("fmod", 2.5), ("fmod", "t"), ("remainder", -1.5), ("remainder", "t"), ("floor_divide", 2),
    ("floor_divide", "t"), ("atan2", "t"), ("arctan2", "t"), ("hypot", "t"), ("xlogy", 2.0),
    ("xlogy", "t"), ("heaviside", "t"), ("clamp_min", 0.5), ("clamp_min", "t"),
    ("clamp_max", 0.5), ("clamp_max", "t"), ("logical_and", "t"), ("logical_or", "t"),
    ("logical_xor", "t"), ("bitwise_and", 6), ("bitwise_or", "i"), ("bitwise_xor", "i"),
    ("xlogy", 0), ("clamp_min", 2), ("multiply", "t"), ("divide", 2.0), ("subtract", "t")])
def test_binary_inplace(name, other):
    def program(T):
        x = T.tensor(A, requires_grad=True)
        y = x * 1.0 if not name.startswith("bitwise") else T.tensor([12, 5, -3, 0])
        o = T.tensor(B) if other == "t" else T.tensor([6, 3, 1, 2]) if other == "i" else other
        out = getattr(y, name + "_")(o)
        result = [out is y, y, y._version, next_functions(y.grad_fn)]
        if y.requires_grad:
            (y * _weights(T, y)).sum().backward()
            result.append(val(x.grad))
        return result

    def function_form(T):
        y = T.tensor(A)
        o = T.tensor(B) if other == "t" else T.tensor([6, 3, 1, 2]) if other == "i" else other
        f = getattr(T, name + "_", None)
        return "none" if f is None else attempt_(lambda: f(y, o))

    def integral(T):  # a float result does not fit an integral tensor
        o = T.tensor(B) if other == "t" else T.tensor([6, 3, 1, 2]) if other == "i" else other
        return getattr(T.tensor([3, 4, 6, 7]), name + "_")(o)

    def broadcast(T):
        return getattr(T.tensor([3, 4, 6, 7]), name + "_")(T.tensor([[1, 2, 3, 4]]))

    same(program)
    same(function_form)
    same(integral)
    same(broadcast)


@pytest.mark.parametrize("name", ["fmod", "remainder", "floor_divide", "atan2", "hypot",
                                  "logaddexp", "logaddexp2", "xlogy", "clamp_min", "clamp_max",
                                  "logical_and", "bitwise_xor", "heaviside"])
def test_binary_out(name):
    def program(T):
        a = T.tensor([3, 4, 6, 7]) if name.startswith("bitwise") else T.tensor(A)
        b = T.tensor([1, 2, 3, 5]) if name.startswith("bitwise") else T.tensor(B)
        out = T.empty(0, dtype=T.bool if name == "logical_and" else a.dtype)
        r = getattr(T, name)(a, b, out=out)
        return r is out, out, out._version

    def requires_grad(T):
        return getattr(T, name)(T.tensor(A, requires_grad=True), T.tensor(B), out=T.empty(4))

    ok(program)
    if name not in NOT_DIFFERENTIABLE:
        same(requires_grad)


def test_operators_and_their_result_dtypes():
    def program(T):
        i = T.tensor([-3, 0, 5, 7])
        u = T.tensor([3, 4, 200, 1], dtype=T.uint8)
        b = T.tensor([True, False, True, False])
        x = T.tensor(A, requires_grad=True)
        return [i % 2, i % 2.5, i % -3, 5 % T.tensor([3, -2, 4, 1]), x % 2, x % -1.5, 2.5 % x,
                i // 2, i // 2.5, 7 // T.tensor([3, -2, 4, 1]), x // 2, 3 // x, i // -2,
                u // 3, u % 7, b & b, b | b, b ^ b, ~b, ~i, ~u, i & 3, 3 & i, i | b, b & True,
                i ^ 1, True ^ b, u & -1, u | 256 - 1, attempt_(lambda: x & x),
                attempt_(lambda: ~x), attempt_(lambda: i % 0), attempt_(lambda: i // 0),
                attempt_(lambda: 5 % T.tensor([0, 1])), x % 0, x // 0]

    same(program)


def test_inplace_operators():
    def program(T):
        i = T.tensor([-3, 0, 5, 7])
        b = T.tensor([True, False, True, False])
        x = T.tensor(A, requires_grad=True)
        y = x * 1.0
        y %= 2
        y //= 0.5
        i %= 4
        j = T.tensor([12, 5, -3, 0])
        j &= 6
        k = T.tensor([12, 5, -3, 0])
        k |= 3
        m = T.tensor([12, 5, -3, 0])
        m ^= T.tensor([1, 2, 3, 4])
        b &= T.tensor([True, True, False, False])
        return [y, y._version, next_functions(y.grad_fn), i, i._version, j, k, m, b,
                attempt_(lambda: i.__ifloordiv__(2.5)), attempt_(lambda: b.__ior__(2))]

    same(program)


def test_xlogy_saved_values_and_grad_at_zero():
    """derivatives.yaml: xlogy's self-gradient is masked to 0 where self == 0 and other <= 0."""

    def program(T):
        a = T.tensor([0.0, 0.0, 2.0, 1.5], requires_grad=True)
        b = T.tensor([0.0, 3.0, 0.5, -1.0], requires_grad=True)
        out = T.xlogy(a, b)
        scalar_other = T.xlogy(a, 0)
        scalar_self = T.xlogy(2.5, b)
        (out.sum() + scalar_other.sum() + scalar_self.sum()).backward()
        return [out, scalar_other, scalar_self, val(a.grad), val(b.grad), _saved(T, out),
                _saved(T, scalar_other), getattr(scalar_other.grad_fn, "_saved_other", None),
                getattr(scalar_self.grad_fn, "_saved_self", None), _saved(T, scalar_self)]

    same(program)


def test_clamp_min_max_gradients_at_ties_and_nan():
    def program(T):
        x = T.tensor([0.0, 1.0, 2.0, float("nan")], requires_grad=True)
        m = T.tensor([1.0, 1.0, 1.0, 0.0], requires_grad=True)
        out = T.clamp_min(x, 1.0) + T.clamp_max(x, 1.0) + T.clamp_min(x, m) + x.clamp_max(m)
        out.sum().backward()
        return out, val(x.grad), val(m.grad), next_functions(out.grad_fn)

    same(program)


def test_fmod_remainder_gradients_of_the_divisor():
    def program(T):
        a = T.tensor([-7.5, 7.5, 3.0, -1.0], requires_grad=True, dtype=T.float64)
        b = T.tensor([2.0, -2.0, 1.5, 4.0], requires_grad=True, dtype=T.float64)
        out = T.fmod(a, b) * 2 + T.remainder(a, b)
        out.sum().backward()
        return out, val(a.grad), val(b.grad)

    same(program)


def test_kl_div_still_uses_xlogy():
    def program(T):
        x = T.tensor([[0.2, 0.3, 0.5]], requires_grad=True).log()
        t = T.tensor([[0.0, 0.4, 0.6]], requires_grad=True)
        loss = T.nn.functional.kl_div(x, t, reduction="batchmean")
        loss.backward()
        return loss, next_functions(loss.grad_fn), val(t.grad)

    same(program)


def test_argument_errors():
    def program(T):
        x = T.tensor(A)
        return [attempt_(f) for f in (
            lambda: T.atan2(x, 2), lambda: T.atan2(2, x), lambda: T.hypot(x, 1.0),
            lambda: T.logaddexp(x, 2), lambda: T.logical_and(x, 2), lambda: T.heaviside(x, 2),
            lambda: T.tan(3), lambda: T.floor([1.5]),
            lambda: T.heaviside(x, T.tensor([1])),
            lambda: T.atan2(x, T.ones(3)), lambda: T.fmod(x, T.ones(2)))]

    same(program)


def test_nextafter_values_and_grads():
    def program(T):
        a = T.tensor([1.0, 2.0, 3.0, 0.0], requires_grad=True)
        b = T.tensor([0.0, 2.0, 5.0, 0.0], requires_grad=True)
        y = T.nextafter(a, b)
        (y * T.tensor([3.0, 5.0, 7.0, 11.0])).sum().backward()
        z = a.detach().clone().requires_grad_().clone()
        z.nextafter_(T.tensor(0.0))
        return y, val(a.grad), val(b.grad), z
    ok(program)
    raises(lambda T: T.nextafter(T.tensor([1, 2]), T.tensor([3, 4])))


@pytest.mark.parametrize("base", ["zeros", "scalar zero", "scalar two"])
def test_pow_gradient_of_exponent_at_zero_base(base):
    def program(T):
        b = T.tensor([-1.0, 0.0, 1.0], requires_grad=True)
        if base == "zeros":
            out = T.zeros(3) ** b
        else:
            out = (0 if base == "scalar zero" else 2) ** b
        out.sum().backward()
        return out, val(b.grad)
    ok(program)


@pytest.mark.parametrize("create_graph", [False, True])
def test_atan2_gradient_is_zero_where_both_inputs_are_zero(create_graph):
    def program(T):
        x = T.tensor([0.0, 1.0, 0.0, -0.0], dtype=T.float64, requires_grad=True)
        y = T.tensor([0.0, 0.0, 2.0, -0.0], dtype=T.float64, requires_grad=True)
        gx, gy = T.autograd.grad(T.atan2(x, y).sum(), (x, y), create_graph=create_graph)
        # (the double-backward node's name is the engine's business, not atan2's)
        return gx.detach(), gy.detach(), gx.requires_grad
    ok(program)


@pytest.mark.parametrize("alias,target", [("greater", "gt"), ("greater_equal", "ge"),
                                          ("less", "lt"), ("less_equal", "le"),
                                          ("not_equal", "ne")])
def test_comparison_aliases(alias, target):
    def program(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        inplace = x.detach().clone()
        getattr(inplace, alias + "_")(T.tensor([2.0, 2.0, 2.0]))
        return (getattr(T, alias)(x, 2), getattr(x, alias)(T.tensor([3.0, 2.0, 1.0])),
                inplace, inplace._version, getattr(T, alias).__name__,
                hasattr(T, alias + "_"), getattr(T, alias)(x, 2).equal(getattr(T, target)(x, 2)))
    ok(program)


# --- broadcasting and dtypes with hypothesis ------------------------------------------------

DIFFERENTIABLE = ["fmod", "remainder", "atan2", "hypot", "logaddexp", "logaddexp2", "xlogy",
                  "clamp_min", "clamp_max"]


@pytest.mark.parametrize("name", DIFFERENTIABLE)
@FAST
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3,
                                                max_side=3),
       seed=st.integers(0, 2**31 - 1), dtypes=st.sampled_from([
           ("float32", "float32"), ("float64", "float32"), ("float32", "float64")]))
def test_binary_broadcasting_vs_torch(name, shapes, seed, dtypes):
    rs = np.random.RandomState(seed)
    a_shape, b_shape = shapes.input_shapes
    a = rs.uniform(-3, 3, a_shape)
    b = rs.uniform(0.5, 2, b_shape) * rs.choice([-1, 1], b_shape)
    if name == "xlogy":
        b = np.abs(b)

    def program(T):
        x = T.tensor(a, dtype=getattr(T, dtypes[0]), requires_grad=True)
        y = T.tensor(b, dtype=getattr(T, dtypes[1]), requires_grad=True)
        out = getattr(T, name)(x, y)
        (out * 2).sum().backward()
        return out, next_functions(out.grad_fn), val(x.grad), val(y.grad)

    same(program, rtol=1e-5)


@FAST
@given(values=hnp.arrays(np.float32, st.integers(1, 6),  # (XLA on CPU flushes subnormals: README)
                         elements=st.floats(-1e3, 1e3, width=32, allow_subnormal=False)),
       decimals=st.integers(-2, 3))
def test_rounding_values_vs_torch(values, decimals):
    def program(T):
        x = T.tensor(values)
        return [T.floor(x), T.ceil(x), T.trunc(x), T.round(x), T.frac(x),
                T.round(x, decimals=decimals), x % 1.5, x // 1.5, T.fmod(x, -1.5)]

    same(program, rtol=1e-5)


@FAST
@given(a=hnp.arrays(np.int64, st.integers(1, 6), elements=st.integers(-50, 50)),
       b=st.integers(-7, 7).filter(bool))
def test_integer_division_vs_torch(a, b):
    def program(T):
        x = T.tensor(a)
        return [x % b, x // b, T.fmod(x, b), T.remainder(b * 3, x.clamp_min(1)), x & b, x | b,
                x ^ b, ~x]

    same(program)


def test_lgamma_is_exact_at_its_zeros():
    """lgamma(1) and lgamma(2) are exactly 0 in torch's float32 and float16 (XLA's float32
    lgamma alone is ~5e-7 off there)."""
    for dtype in ("float32", "float16"):
        same(lambda T, dtype=dtype: T.lgamma(T.tensor([1.0, 2.0], dtype=getattr(T, dtype))),
             rtol=0)
