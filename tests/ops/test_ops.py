"""Differential tests of every op: forward values, input grads, grad_fn names and graph shape.

Each case builds identical inputs for torch and jaxgrad from a seeded ``numpy.random.RandomState``,
runs the op, back-propagates a random upstream gradient and hands everything observable to
``differential.same`` (torch is the oracle; nothing is hand-typed).
"""

from __future__ import annotations

import numpy as np
import pytest

from differential import bug, cases, next_functions, ok, same

torch = pytest.importorskip("torch")


# --- helpers ----------------------------------------------------------------------------------------


class S:
    """How to build one input: shape, dtype, value range, requires_grad."""

    def __init__(self, *shape, dtype=None, rg=True, kind="randn", low=-3, high=3):
        if dtype is None:
            dtype = "int64" if kind == "int" else "float32"
        self.shape, self.dtype, self.rg, self.kind = shape, dtype, rg, kind
        self.low, self.high = low, high

    def build(self, T, rs):
        if self.kind == "randn":
            a = np.asarray(rs.randn(*self.shape))
        elif self.kind == "pos":  # bounded away from 0: for log, sqrt, pow, div
            a = np.asarray(rs.uniform(0.5, 2.0, size=self.shape))
        elif self.kind == "away":  # |x| >= 0.2: away from kinks at 0
            a = np.asarray(rs.uniform(0.2, 2.0, size=self.shape)) * rs.choice([-1, 1],
                                                                                self.shape)
        elif self.kind == "int":
            a = np.asarray(rs.randint(self.low, self.high, size=self.shape))
        elif self.kind == "bool":
            a = np.asarray(rs.rand(*self.shape) > 0.5)
        else:
            raise AssertionError(self.kind)
        dtype = "bool" if self.kind == "bool" else self.dtype
        t = T.tensor(a.astype(dtype))
        if self.rg:
            t.requires_grad_(True)
        return t


def _spec(s):
    if isinstance(s, S):
        return s
    return S(*s)


def _upstream(T, rs, out):
    """A random gradient shaped like ``out`` (same on both libraries)."""
    return T.tensor(np.asarray(rs.randn(*tuple(out.shape))).astype(str(out.dtype).split(".")[-1]))


def _grad_without_version(g):
    """``.grad`` with everything but its ``_version`` (which ``test_grad_version`` covers)."""
    if g is None:
        return None
    return (g.detach().clone(), g.requires_grad, g.is_leaf, g.grad_fn is None)


def G(x):
    return _grad_without_version(x.grad)


def report(T, rs, out, xs, backward=True, versions=False):
    """Everything observable after back-propagating a random gradient through the first output.

    ``.grad`` tensors are compared in full except for their ``_version`` (torch's buffer-stealing
    detail), which is compared on its own in ``test_grad_version`` when ``versions`` is set.
    """
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    first = outs[0]
    graph = next_functions(first.grad_fn)
    if backward and first.requires_grad:
        first.backward(_upstream(T, rs, first))
    if versions:
        return [None if x.grad is None else x.grad._version for x in xs]
    return {"outs": outs, "graph": graph, "grads": [_grad_without_version(x.grad) for x in xs]}


def check(fn, *specs, seed=0, rtol=None, backward=True, versions=False):
    """Differential check of ``fn(T, *inputs)``: outputs, graph, and grads of all inputs."""

    def program(T):
        rs = np.random.RandomState(seed)
        xs = [_spec(s).build(T, rs) for s in specs]
        return report(T, rs, fn(T, *xs), xs, backward, versions)

    return same(program, rtol=rtol)


def check_raises(fn, *specs, seed=0):
    """Both libraries raise the same class with the same message; asserts that they do raise."""

    def program(T):
        rs = np.random.RandomState(seed)
        xs = [_spec(s).build(T, rs) for s in specs]
        return fn(T, *xs)

    ta, jb = same(program)
    assert type(ta).__name__ == "Raised", f"torch did not raise: {ta!r}"
    return ta, jb



def grid(keys_a, keys_b, xfail=None, id_b=str):
    """The product of two key lists as (a, b) params; ``xfail`` maps (a, b) -> reason."""
    xfail = xfail or {}
    return [pytest.param(a, b, id=f"{a}-{id_b(b)}",
                         marks=[bug(xfail[a, id_b(b)])] if (a, id_b(b)) in xfail else [])
            for a in keys_a for b in keys_b]


# --- known jaxgrad bugs (each xfail below names one) ------------------------------------------------

PROD_TUPLE = "prod accepts a tuple dim; torch raises TypeError (prod takes one int dim)"
KEEPDIM_NO_DIM = "sum/mean/prod(x, keepdim=...) without dim is accepted; torch raises TypeError"
GRAD_VERSION_BUG = ("leaf .grad _version after backward differs from torch's (buffer stealing / "
                "in-place accumulation is not modelled for this op's backward)")


# --- arithmetic -------------------------------------------------------------------------------------

BINARY = {
    "add": lambda T, a, b: a + b,
    "sub": lambda T, a, b: a - b,
    "mul": lambda T, a, b: a * b,
    "div": lambda T, a, b: a / b,
}

BINARY_FN = {
    "add_alpha": lambda T, a, b: T.add(a, b, alpha=2.5),
    "sub_alpha": lambda T, a, b: T.sub(a, b, alpha=-1.5),
    "add_fn": lambda T, a, b: T.add(a, b),
    "sub_fn": lambda T, a, b: T.sub(a, b),
    "mul_fn": lambda T, a, b: T.mul(a, b),
    "div_fn": lambda T, a, b: T.div(a, b),
    "true_divide": lambda T, a, b: T.true_divide(a, b),
    "add_method": lambda T, a, b: a.add(b),
    "sub_method": lambda T, a, b: a.sub(b, alpha=2),
    "mul_method": lambda T, a, b: a.mul(b),
    "div_method": lambda T, a, b: a.div(b),
}

SHAPE_PAIRS = [
    ((3,), (3,)),
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((3,), (2, 3)),
    ((2, 1), (1, 3)),
    ((4, 1, 3), (2, 1)),
    ((), (2, 3)),
    ((2, 3), ()),
]


@pytest.mark.parametrize(("op", "shapes"), grid(list(BINARY), SHAPE_PAIRS))
def test_binary_tensor_tensor(op, shapes):
    a, b = shapes
    kind_b = "pos" if "div" in op else "randn"
    check(BINARY[op], S(*a), S(*b, kind=kind_b))


@pytest.mark.parametrize("op", list(BINARY_FN))
def test_binary_functional_and_methods(op):
    kind_b = "pos" if "div" in op else "randn"
    check(BINARY_FN[op], S(2, 3), S(3, kind=kind_b))


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_only_one_requires_grad(op):
    kind_b = "pos" if "div" in op else "randn"
    check(BINARY[op], S(2, 3, rg=False), S(3, kind=kind_b))
    check(BINARY[op], S(2, 3), S(3, kind=kind_b, rg=False))


@pytest.mark.parametrize("op", ["add", "mul", "div"])
def test_binary_float64(op):
    check(BINARY[op], S(2, 3, dtype="float64"), S(3, kind="pos", dtype="float64"))


SCALAR_OPS = {
    "add_r": lambda T, a: a + 2.5,
    "add_l": lambda T, a: 2.5 + a,
    "add_int": lambda T, a: a + 3,
    "sub_r": lambda T, a: a - 2.5,
    "sub_l": lambda T, a: 2.5 - a,
    "sub_l_int": lambda T, a: 3 - a,
    "mul_r": lambda T, a: a * 2.5,
    "mul_l": lambda T, a: 2.5 * a,
    "mul_int": lambda T, a: 3 * a,
    "div_r": lambda T, a: a / 2.5,
    "div_l": lambda T, a: 2.5 / a,
    "div_int_l": lambda T, a: 1 / a,
    "add_bool": lambda T, a: a + True,
    "add_numpy_scalar": lambda T, a: a + np.float64(1.5),
    "mul_numpy_scalar_l": lambda T, a: np.float64(1.5) * a,
    "add_numpy_float32_l": lambda T, a: np.float32(1.5) + a,
    "sub_numpy_int_l": lambda T, a: np.int64(2) - a,
    "sub_numpy_float64_l": lambda T, a: np.float64(2.5) - a,
    "sub_numpy_bool_l": lambda T, a: np.bool_(True) - a,
    "div_numpy_float64_l": lambda T, a: np.float64(2.5) / a,
    "pow_numpy_float64_r": lambda T, a: a ** np.float64(2.0),
    "add_numpy_float64_r": lambda T, a: a + np.float64(2.5),
    "rsub_fn": lambda T, a: T.rsub(a, 2.0),
    "sub_alpha_scalar": lambda T, a: T.sub(a, 2.0, alpha=3),
    "add_alpha_scalar": lambda T, a: T.add(a, 2.0, alpha=3),
}


@pytest.mark.parametrize("op", list(SCALAR_OPS))
def test_binary_tensor_scalar(op):
    check(SCALAR_OPS[op], S(2, 3, kind="pos"))


def test_numpy_scalar_then_equal_python_scalar():
    """A numpy float64 operand computes like the Python float it equals (and caches nothing
    that a later Python float would reuse)."""
    check(lambda T, a: [np.float64(3.25) - a, 3.25 - a, np.float64(1.75) ** a, 1.75 ** a,
                        a * np.float64(0.5), a * 0.5], S(2, 3, kind="pos"))


@pytest.mark.parametrize("op", ["add_r", "sub_l", "mul_l", "div_l", "add_bool", "rsub_fn"])
def test_binary_0d_tensor_scalar(op):
    check(SCALAR_OPS[op], S(kind="pos"))


def test_binary_same_tensor_twice():
    check(lambda T, a: a * a + a / a - a, S(2, 3, kind="pos"))


def test_binary_chain_graph():
    check(lambda T, a, b: (a * b - b / a) * 2 + (a - 1), S(2, 3, kind="pos"), S(3, kind="pos"))


def test_binary_broadcast_mismatch_error():
    check_raises(lambda T, a, b: a + b, S(2, 3), S(4))


def test_binary_broadcast_mismatch_error_mul():
    check_raises(lambda T, a, b: a * b, S(2, 3), S(3, 2))


BROADCAST_ERRORS = {
    "add_leading": (lambda T, a, b: a + b, (5, 2, 3), (4, 1, 3)),
    "rsub": (lambda T, a, b: T.rsub(a, b), (2, 3), (4,)),
    "div_floor": (lambda T, a, b: T.div(a, b, rounding_mode="floor"), (2, 3), (4,)),
    "pow": (lambda T, a, b: a ** b, (2, 3), (4,)),
    "eq": (lambda T, a, b: a == b, (2, 3), (4,)),
    "lt": (lambda T, a, b: a < b, (2, 3), (4,)),
    "isclose": (lambda T, a, b: T.isclose(a, b), (2, 3), (4,)),
    "where_input": (lambda T, a, b: T.where(a > 0, b, a), (2, 3), (4,)),
    "where_condition": (lambda T, a, b: T.where(b > 0, a, a), (2, 3), (4,)),
    "where_condition_scalar": (lambda T, a, b: T.where(b > 0, a, 0.0), (2, 3), (4,)),
    "where_third": (lambda T, a, b: T.where(a[0] > 0, a, b), (2, 3), (5, 1, 4)),
    "clamp_min": (lambda T, a, b: T.clamp(a, b), (2, 3), (4,)),
    "clamp_max": (lambda T, a, b: T.clamp(a, None, b), (2, 3), (4,)),
    "maximum": (lambda T, a, b: T.maximum(a, b), (2, 3), (4,)),
    "add_": (lambda T, a, b: a.detach().add_(b), (2, 3), (4,)),
    "add_grows_output": (lambda T, a, b: a.detach().add_(b), (3,), (2, 3)),
    "mul_grows_output": (lambda T, a, b: a.detach().mul_(b), (3,), (2, 3)),
    "pow_grows_output": (lambda T, a, b: a.detach().pow_(b), (3,), (2, 3)),
    "copy_": (lambda T, a, b: a.detach().copy_(b), (3,), (4,)),
    "copy_grows_output": (lambda T, a, b: a.detach().copy_(b), (3,), (2, 3)),
    "matmul_batch": (lambda T, a, b: a @ b, (2, 5, 2, 3), (3, 3, 2)),
}


@pytest.mark.parametrize("case", list(BROADCAST_ERRORS))
def test_broadcast_mismatch_errors(case):
    fn, a, b = BROADCAST_ERRORS[case]
    check_raises(fn, S(*a), S(*b))


# --- unary ------------------------------------------------------------------------------------------

UNARY = {
    "neg": (lambda T, a: -a, "randn"),
    "neg_fn": (lambda T, a: T.neg(a), "randn"),
    "abs": (lambda T, a: T.abs(a), "away"),
    "abs_builtin": (lambda T, a: abs(a), "away"),
    "exp": (lambda T, a: T.exp(a), "randn"),
    "log": (lambda T, a: T.log(a), "pos"),
    "sqrt": (lambda T, a: T.sqrt(a), "pos"),
    "sin": (lambda T, a: T.sin(a), "randn"),
    "cos": (lambda T, a: T.cos(a), "randn"),
    "tanh": (lambda T, a: T.tanh(a), "randn"),
    "sigmoid": (lambda T, a: T.sigmoid(a), "randn"),
    "relu": (lambda T, a: T.relu(a), "away"),
    "reciprocal": (lambda T, a: T.reciprocal(a), "pos"),
    "sign": (lambda T, a: T.sign(a), "away"),
}

UNARY_METHODS = {
    "neg": lambda T, a: a.neg(),
    "abs": lambda T, a: a.abs(),
    "exp": lambda T, a: a.exp(),
    "log": lambda T, a: a.log(),
    "sqrt": lambda T, a: a.sqrt(),
    "sin": lambda T, a: a.sin(),
    "cos": lambda T, a: a.cos(),
    "tanh": lambda T, a: a.tanh(),
    "sigmoid": lambda T, a: a.sigmoid(),
    "relu": lambda T, a: a.relu(),
    "reciprocal": lambda T, a: a.reciprocal(),
}


@pytest.mark.parametrize(("op", "shape"), grid(list(UNARY), [(), (2, 3)]))
def test_unary(op, shape):
    fn, kind = UNARY[op]
    check(fn, S(*shape, kind=kind))


@pytest.mark.parametrize("op", list(UNARY_METHODS))
def test_unary_method(op):
    check(UNARY_METHODS[op], S(4, kind=UNARY[op][1]))


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_float64(op):
    fn, kind = UNARY[op]
    check(fn, S(2, 3, kind=kind, dtype="float64"))


def _special(T, values, dtype="float32"):
    return T.tensor(np.array(values, dtype=dtype), requires_grad=True)


SPECIAL_POINTS = {
    "abs_at_zero": (lambda T, x: x.abs(), [0.0, -1.0, 2.0]),
    "relu_at_zero": (lambda T, x: x.relu(), [0.0, -1.0, 2.0]),
    "sqrt_at_zero": (lambda T, x: x.sqrt(), [0.0, 1.0, 4.0]),
    "log_at_zero": (lambda T, x: x.log(), [0.0, 1.0, 4.0]),
    "log_negative": (lambda T, x: x.log(), [-1.0, 1.0]),
    "sqrt_negative": (lambda T, x: x.sqrt(), [-1.0, 1.0]),
    "reciprocal_zero": (lambda T, x: x.reciprocal(), [0.0, 2.0]),
    "div_by_zero": (lambda T, x: x / 0.0, [0.0, 2.0, -1.0]),
    "sign_at_zero": (lambda T, x: x.sign(), [0.0, -1.0, 2.0]),
    "sigmoid_large": (lambda T, x: x.sigmoid(), [-100.0, 100.0, 0.0]),
    "tanh_large": (lambda T, x: x.tanh(), [-30.0, 30.0, 0.0]),
    "exp_large": (lambda T, x: x.exp(), [100.0, -100.0]),
}


@pytest.mark.parametrize("case", list(SPECIAL_POINTS))
def test_unary_special_points(case):
    fn, values = SPECIAL_POINTS[case]

    def program(T):
        x = _special(T, values)
        out = fn(T, x)
        out.backward(T.ones_like(out))
        return out, G(x), next_functions(out.grad_fn)

    same(program)


# --- pow --------------------------------------------------------------------------------------------

POW = {
    "square": (lambda T, a: a ** 2, "randn"),
    "cube_fn": (lambda T, a: T.pow(a, 3), "randn"),
    "half": (lambda T, a: a ** 0.5, "pos"),
    "neg_one": (lambda T, a: a ** -1, "pos"),
    "neg_float": (lambda T, a: a ** -1.5, "pos"),
    "zero": (lambda T, a: a ** 0, "randn"),
    "one": (lambda T, a: a ** 1, "randn"),
    "method": (lambda T, a: a.pow(2.5), "pos"),
    "scalar_base": (lambda T, a: 2 ** a, "randn"),
    "scalar_base_float": (lambda T, a: 1.5 ** a, "randn"),
    "scalar_base_fn": (lambda T, a: T.pow(2.0, a), "randn"),
    "scalar_base_numpy": (lambda T, a: np.float64(np.e) ** a, "randn"),
}


@pytest.mark.parametrize(("op", "shape"), grid(list(POW), [(), (2, 3)]))
def test_pow_scalar(op, shape):
    fn, kind = POW[op]
    check(fn, S(*shape, kind=kind))


POW_SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 3), ())]


@pytest.mark.parametrize("shapes", POW_SHAPES, ids=str)
def test_pow_tensor_exponent(shapes):
    a, b = shapes
    check(lambda T, x, y: x ** y, S(*a, kind="pos"), S(*b))


@pytest.mark.parametrize("shapes", POW_SHAPES, ids=str)
def test_pow_tensor_exponent_one_requires_grad(shapes):
    a, b = shapes
    check(lambda T, x, y: T.pow(x, y), S(*a, kind="pos"), S(*b, rg=False))
    check(lambda T, x, y: x.pow(y), S(*a, kind="pos", rg=False), S(*b))


def test_pow_tensor_exponent_zero_base():
    def program(T):
        x = _special(T, [0.0, 0.0, 2.0, 0.0])
        y = _special(T, [2.0, 0.0, 3.0, 0.5])
        out = x ** y
        out.backward(T.ones_like(out))
        return out, G(x), G(y), next_functions(out.grad_fn)

    same(program)


def test_pow_scalar_exponent_at_zero():
    def program(T):
        x = _special(T, [0.0, 1.0])
        outs = [x ** 2, x ** 0, x ** 0.5, x ** -1]
        return [(o, T.autograd.grad(o.sum(), x)[0]) for o in outs]

    same(program)


def test_pow_negative_base_fractional_exponent():
    check(lambda T, a: a ** 0.5, S(4))
    check(lambda T, a, b: a ** b, S(4), S(4))


# --- clamp ------------------------------------------------------------------------------------------

CLAMP = {
    "min_max": lambda T, a: T.clamp(a, -0.5, 0.5),
    "min_max_kw": lambda T, a: a.clamp(min=-0.5, max=0.5),
    "min_only": lambda T, a: a.clamp(min=0.0),
    "max_only": lambda T, a: a.clamp(max=0.3),
    "int_bounds": lambda T, a: a.clamp(-1, 1),
    "clip": lambda T, a: T.clip(a, -0.5, 0.5),
    "clip_method": lambda T, a: a.clip(-0.5, 0.5),
    "min_gt_max": lambda T, a: a.clamp(0.5, -0.5),
}


@pytest.mark.parametrize("op", list(CLAMP))
def test_clamp_scalar(op):
    check(CLAMP[op], S(3, 4))


CLAMP_T = {
    "min_max": lambda T, a, lo, hi: T.clamp(a, lo, hi),
    "min_only": lambda T, a, lo, hi: T.clamp(a, min=lo),
    "max_only": lambda T, a, lo, hi: T.clamp(a, max=hi),
    "method": lambda T, a, lo, hi: a.clamp(lo, hi),
}


@pytest.mark.parametrize("op", list(CLAMP_T))
def test_clamp_tensor_bounds(op):
    fn = CLAMP_T[op]

    def build(T, a, lo, hi):
        return fn(T, a, lo - 1.0, hi + 1.0)

    check(build, S(3, 4), S(3, 4), S(4))
    check(build, S(3, 4), S(3, 4, rg=False), S(4, rg=False))


def test_clamp_at_boundaries():
    def program(T):
        x = _special(T, [-1.0, -0.5, 0.0, 0.5, 1.0])
        out = x.clamp(-0.5, 0.5)
        out.backward(T.ones_like(out))
        y = _special(T, [-1.0, -0.5, 0.0, 0.5, 1.0])
        out2 = y.clamp(min=-0.5)
        out2.backward(T.ones_like(out2))
        return out, G(x), out2, G(y)

    same(program)


def test_clamp_no_bounds_error():
    check_raises(lambda T, a: T.clamp(a), S(3))


# --- where ------------------------------------------------------------------------------------------

def test_where_tensor_tensor():
    check(lambda T, c, a, b: T.where(c, a, b), S(2, 3, kind="bool", rg=False), S(2, 3), S(2, 3))


def test_where_broadcast():
    check(lambda T, c, a, b: T.where(c, a, b), S(2, 3, kind="bool", rg=False), S(3), S(2, 1))
    check(lambda T, c, a, b: T.where(c, a, b), S(3, kind="bool", rg=False), S(2, 3), S())


def test_where_from_comparison():
    check(lambda T, a, b: T.where(a > b, a, b), S(2, 3), S(2, 3))
    check(lambda T, a: T.where(a > 0, a, T.zeros_like(a)), S(2, 3))


def test_where_scalar_other():
    check(lambda T, c, a: T.where(c, a, 0.0), S(2, 3, kind="bool", rg=False), S(2, 3))
    check(lambda T, c, a: T.where(c, 1.5, a), S(2, 3, kind="bool", rg=False), S(2, 3))


def test_where_method():
    check(lambda T, c, a, b: a.where(c, b), S(2, 3, kind="bool", rg=False), S(2, 3), S(2, 3))


def test_where_dtype_promotion():
    check(lambda T, c, a, b: T.where(c, a, b), S(2, 3, kind="bool", rg=False),
          S(2, 3), S(2, 3, dtype="float64"))


# --- matrix products --------------------------------------------------------------------------------

MATMUL_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((5, 2, 3), (3,)),
    ((3,), (5, 3, 4)),
    ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (5, 3, 4)),
    ((5, 2, 3), (1, 3, 4)),
    ((1, 2, 3), (5, 3, 4)),
    ((2, 5, 2, 3), (2, 5, 3, 4)),
    ((3,), (2, 5, 3, 4)),
    ((2, 3), (2, 5, 3, 4)),
    ((2, 5, 2, 3), (3,)),
    ((0, 2, 3), (3, 4)),
    ((3,), (0, 3, 4)),
    ((2, 3), (0, 3, 4)),
]
MATMUL_FORMS = {
    "fn": lambda T, x, y: T.matmul(x, y),
    "operator": lambda T, x, y: x @ y,
}


@pytest.mark.parametrize(("form", "shapes"), grid(list(MATMUL_FORMS), MATMUL_SHAPES))
def test_matmul(form, shapes):
    a, b = shapes
    check(MATMUL_FORMS[form], S(*a), S(*b), rtol=1e-5)


MATMUL_BY_ID = {str(s): s for s in MATMUL_SHAPES}


@pytest.mark.parametrize("shapes", [str(s) for s in MATMUL_SHAPES])
def test_matmul_lhs_requires_grad_only(shapes):
    a, b = MATMUL_BY_ID[shapes]
    check(lambda T, x, y: x.matmul(y), S(*a), S(*b, rg=False), rtol=1e-5)  # method form


@pytest.mark.parametrize("shapes", [str(s) for s in MATMUL_SHAPES])
def test_matmul_rhs_requires_grad_only(shapes):
    a, b = MATMUL_BY_ID[shapes]
    check(lambda T, x, y: x.matmul(y), S(*a, rg=False), S(*b), rtol=1e-5)


def test_matmul_non_contiguous_3d_at_2d():
    check(lambda T, x, y: x.transpose(0, 1) @ y, S(2, 5, 3), S(3, 4), rtol=1e-5)


def test_matmul_non_contiguous_3d_at_2d_rhs_no_grad():
    check(lambda T, x, y: x.transpose(0, 1) @ y, S(2, 5, 3), S(3, 4, rg=False), rtol=1e-5)


# strided operands: torch folds into mm/mv through reshape (view, _reshape_alias or a copy)
# depending on the strides and on which operand requires grad
MATMUL_STRIDED = {
    "transposed_3d_at_1d": (lambda T, x, y: x.transpose(0, 1) @ y, (2, 5, 3), (3,)),
    "mT_3d_at_2d": (lambda T, x, y: x.mT @ y, (5, 3, 2), (3, 4)),
    "permuted_3d_at_2d": (lambda T, x, y: x.permute(1, 0, 2) @ y, (2, 5, 3), (3, 4)),
    "expanded_3d_at_2d": (lambda T, x, y: x.expand(5, 2, 3) @ y, (2, 3), (3, 4)),
    "3d_at_mT_3d": (lambda T, x, y: x @ y.mT, (5, 2, 3), (5, 4, 3)),
    "2d_at_transposed_3d": (lambda T, x, y: x @ y.transpose(0, 1), (2, 3), (3, 5, 4)),
    "1d_at_transposed_3d": (lambda T, x, y: x @ y.transpose(0, 1), (3,), (3, 5, 4)),
    "2d_at_mT_3d": (lambda T, x, y: x @ y.mT, (2, 3), (5, 4, 3)),
    "1d_at_mT_3d": (lambda T, x, y: x @ y.mT, (3,), (5, 4, 3)),
}


@pytest.mark.parametrize(("case", "grads"), grid(
    list(MATMUL_STRIDED), ["both", "lhs", "rhs"]))
def test_matmul_strided(case, grads):
    fn, a, b = MATMUL_STRIDED[case]
    check(fn, S(*a, rg=grads != "rhs"), S(*b, rg=grads != "lhs"), rtol=1e-5)


def test_matmul_result_versions_and_strides():
    """1-D @ 2-D ends in an in-place squeeze_ (version 1); folded 2-D @ 3-D ends in a copy."""
    def program(T):
        rs = np.random.RandomState(0)
        v, m = T.tensor(rs.randn(3)), T.tensor(rs.randn(3, 4), requires_grad=True)
        outs = [v @ m, T.tensor(rs.randn(2, 3)) @ T.tensor(rs.randn(5, 3, 4)), v @ m.detach()]
        with T.no_grad():
            outs.append(v @ m)
        return [(o, o._version, o.stride(), o.is_contiguous()) for o in outs]

    same(program)


def test_matmul_float64():
    check(lambda T, x, y: x @ y, S(5, 2, 3, dtype="float64"), S(3, 4, dtype="float64"))


MM_FORMS = {
    "mm": (lambda T, x, y: T.mm(x, y), (2, 3), (3, 4)),
    "mm_method": (lambda T, x, y: x.mm(y), (2, 3), (3, 4)),
    "bmm": (lambda T, x, y: T.bmm(x, y), (5, 2, 3), (5, 3, 4)),
    "bmm_method": (lambda T, x, y: x.bmm(y), (5, 2, 3), (5, 3, 4)),
    "mv": (lambda T, x, y: T.mv(x, y), (2, 3), (3,)),
    "mv_method": (lambda T, x, y: x.mv(y), (2, 3), (3,)),
    "dot": (lambda T, x, y: T.dot(x, y), (3,), (3,)),
    "dot_method": (lambda T, x, y: x.dot(y), (3,), (3,)),
    "mm_of_transposed": (lambda T, x, y: x.t().mm(y.t()), (3, 2), (4, 3)),
}


@pytest.mark.parametrize("op", list(MM_FORMS))
def test_mm_bmm_mv_dot(op):
    fn, a, b = MM_FORMS[op]
    check(fn, S(*a), S(*b), rtol=1e-5)


MATMUL_ERRORS = {
    "mm_mismatch": (lambda T, x, y: T.mm(x, y), (2, 3), (4, 5)),
    "mm_not_matrix": (lambda T, x, y: T.mm(x, y), (2, 3, 4), (4, 5)),
    "mm_vector": (lambda T, x, y: T.mm(x, y), (2, 3), (3,)),
    "bmm_not_3d": (lambda T, x, y: T.bmm(x, y), (2, 3), (3, 4)),
    "bmm_mismatch": (lambda T, x, y: T.bmm(x, y), (2, 2, 3), (2, 4, 5)),
    "bmm_batch_mismatch": (lambda T, x, y: T.bmm(x, y), (2, 2, 3), (3, 3, 5)),
    "mv_mismatch": (lambda T, x, y: T.mv(x, y), (2, 3), (4,)),
    "dot_mismatch": (lambda T, x, y: T.dot(x, y), (3,), (4,)),
    "dot_2d": (lambda T, x, y: T.dot(x, y), (3, 1), (3,)),
    "matmul_0d": (lambda T, x, y: T.matmul(x, y), (), (3,)),
    "matmul_2d_mismatch": (lambda T, x, y: x @ y, (2, 3), (4, 5)),
    "matmul_1d_mismatch": (lambda T, x, y: x @ y, (3,), (4,)),
    "matmul_3d_mismatch": (lambda T, x, y: x @ y, (5, 2, 3), (5, 4, 2)),
    "matmul_batch_mismatch": (lambda T, x, y: x @ y, (5, 2, 3), (4, 3, 2)),
    "matmul_3d_1d_mismatch": (lambda T, x, y: x @ y, (5, 2, 3), (4,)),
    "mv_not_matrix": (lambda T, x, y: T.mv(x, y), (2, 3, 1), (4,)),
    "mv_not_vector": (lambda T, x, y: T.mv(x, y), (2, 3), (3, 1)),
}


@pytest.mark.parametrize("case", list(MATMUL_ERRORS))
def test_matmul_errors(case):
    fn, a, b = MATMUL_ERRORS[case]
    check_raises(fn, S(*a), S(*b))


MATMUL_DTYPE_ERRORS = {
    "mm": (lambda T, x, y: T.mm(x, y), (2, 3), (3, 4)),
    "bmm": (lambda T, x, y: T.bmm(x, y), (2, 2, 3), (2, 3, 4)),
    "bmm_swapped": (lambda T, x, y: T.bmm(y.double(), x.float()), (2, 3, 4), (2, 2, 3)),
    "mv": (lambda T, x, y: T.mv(x, y), (2, 3), (3,)),
    "mv_swapped": (lambda T, x, y: T.mv(x.double(), y.float()), (2, 3), (3,)),
    "dot": (lambda T, x, y: T.dot(x, y), (3,), (3,)),
    "matmul_1d_1d": (lambda T, x, y: x @ y, (3,), (3,)),
    "matmul_1d_2d": (lambda T, x, y: x @ y, (3,), (3, 2)),
    "matmul_3d_1d": (lambda T, x, y: x @ y, (4, 2, 3), (3,)),
    "matmul_3d_3d": (lambda T, x, y: x @ y, (4, 2, 3), (4, 3, 2)),
}


@pytest.mark.parametrize("case", list(MATMUL_DTYPE_ERRORS))
def test_matmul_dtype_mismatch_errors(case):
    fn, a, b = MATMUL_DTYPE_ERRORS[case]
    check_raises(fn, S(*a), S(*b, dtype="float64"))


# --- reductions -------------------------------------------------------------------------------------

REDUCE_ARGS = [
    {},
    {"dim": 1},
    {"dim": -1},
    {"dim": (0, 2)},
    {"dim": (-1, 0)},
    {"dim": 1, "keepdim": True},
    {"dim": (0, 1), "keepdim": True},
]

REDUCTIONS = {
    "sum": (lambda T, x, kw: T.sum(x, **kw), "randn"),
    "mean": (lambda T, x, kw: T.mean(x, **kw), "randn"),
    "prod": (lambda T, x, kw: T.prod(x, **kw), "pos"),
    "amax": (lambda T, x, kw: T.amax(x, **kw), "randn"),
    "amin": (lambda T, x, kw: T.amin(x, **kw), "randn"),
    "var": (lambda T, x, kw: T.var(x, **kw), "randn"),
    "std": (lambda T, x, kw: T.std(x, **kw), "randn"),
}

REDUCTION_METHODS = {
    "sum": lambda x: x.sum(dim=(0, -1), keepdim=True),
    "mean": lambda x: x.mean(1),
    "prod": lambda x: x.prod(-1, True),
    "amax": lambda x: x.amax((0, 1)),
    "amin": lambda x: x.amin(-2),
    "var": lambda x: x.var(1, keepdim=True),
    "std": lambda x: x.std((0, 2)),
    "sum_all": lambda x: x.sum(),
    "mean_all": lambda x: x.mean(),
}


def _reduce_ids(kw):
    return ",".join(f"{k}={v}" for k, v in kw.items()) or "all"


def _is_tuple_dim(kw):
    return isinstance(kw.get("dim"), tuple)


@pytest.mark.parametrize(("op", "kw"), grid(
    list(REDUCTIONS), REDUCE_ARGS,
    {("prod", _reduce_ids(kw)): PROD_TUPLE for kw in REDUCE_ARGS if _is_tuple_dim(kw)},
    id_b=_reduce_ids))
def test_reduction(op, kw):
    fn, kind = REDUCTIONS[op]
    if op == "prod" and _is_tuple_dim(kw):
        # torch.prod takes a single int dim: the same TypeError is expected from both
        check_raises(lambda T, x: fn(T, x, kw), S(2, 3, 4, kind=kind))
        return
    check(lambda T, x: fn(T, x, kw), S(2, 3, 4, kind=kind), rtol=1e-5)


@pytest.mark.parametrize("op", list(REDUCTION_METHODS))
def test_reduction_method(op):
    kind = "pos" if op == "prod" else "randn"
    check(lambda T, x: REDUCTION_METHODS[op](x), S(2, 3, 4, kind=kind), rtol=1e-5)


@pytest.mark.parametrize("op", cases(["sum", "mean", "prod"], {
    "sum": KEEPDIM_NO_DIM, "mean": KEEPDIM_NO_DIM, "prod": KEEPDIM_NO_DIM}))
def test_reduction_keepdim_without_dim_is_type_error(op):
    check_raises(lambda T, x: getattr(T, op)(x, keepdim=True), S(2, 3))


@pytest.mark.parametrize("op", ["sum", "mean", "prod", "amax", "amin", "var", "std"])
def test_reduction_0d(op):
    fn, _ = REDUCTIONS[op]
    check(lambda T, x: fn(T, x, {}), S(kind="pos"))


@pytest.mark.parametrize("op", ["sum", "mean", "prod", "amax", "amin", "var", "std"])
def test_reduction_0d_dim(op):
    fn, _ = REDUCTIONS[op]
    check(lambda T, x: fn(T, x, {"dim": 0}), S(kind="pos"))
    check(lambda T, x: fn(T, x, {"dim": -1, "keepdim": True}), S(kind="pos"))


VAR_ARGS = [
    {"unbiased": False},
    {"unbiased": True},
    {"correction": 0},
    {"correction": 2},
    {"dim": 1, "unbiased": False},
    {"dim": (0, 2), "correction": 0, "keepdim": True},
    {"dim": -1, "keepdim": True},
    {"dim": 1, "correction": 3},
    {"dim": 1, "correction": 5},
    {"correction": 24},
    {"correction": 30},
]


@pytest.mark.parametrize(("op", "kw"), grid(["var", "std"], VAR_ARGS, id_b=_reduce_ids))
def test_var_std_correction(op, kw):
    check(lambda T, x: getattr(T, op)(x, **kw), S(2, 3, 4), rtol=1e-5)


@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_positional_unbiased(op):
    check(lambda T, x: getattr(x, op)(False), S(2, 3), rtol=1e-5)
    check(lambda T, x: getattr(x, op)(1, False), S(2, 3), rtol=1e-5)


@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_single_element(op):
    check(lambda T, x: getattr(T, op)(x), S(1))


@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_single_element_along_dim(op):
    check(lambda T, x: getattr(T, op)(x, dim=0), S(1, 3))


MAXMIN_DIM = [
    {"dim": 0},
    {"dim": 1},
    {"dim": -1},
    {"dim": 2, "keepdim": True},
    {"dim": -3, "keepdim": True},
]


@pytest.mark.parametrize(("op", "kw"), grid(["max", "min"], MAXMIN_DIM, id_b=_reduce_ids))
def test_max_min_dim(op, kw):
    check(lambda T, x: getattr(T, op)(x, **kw), S(2, 3, 4))


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_dim_method_positional(op):
    check(lambda T, x: getattr(x, op)(1, True), S(2, 3, 4))


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_dim_named_fields(op):
    def program(T):
        x = T.tensor(np.random.RandomState(0).randn(3, 4).astype("float32"), requires_grad=True)
        r = getattr(x, op)(dim=1)
        (r.values * 2).sum().backward()
        values, indices = r
        return r.values, r.indices, values, indices, G(x), len(r), isinstance(r, tuple)

    same(program)


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_dim_return_type_name(op):
    same(lambda T: type(getattr(T.ones(2, 3), op)(dim=1)).__name__)


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_dim_return_type_repr(op):
    same(lambda T: (repr(getattr(T.tensor([[1.0, 3.0]]), op)(1)),
                    type(getattr(T.ones(2, 3), op)(dim=1)) is getattr(T.return_types, op)))


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_dim_0d(op):
    check(lambda T, x: tuple(getattr(T, op)(x, 0)), S())
    check(lambda T, x: tuple(getattr(x, op)(-1, keepdim=True)), S())


def test_reduction_repeated_dim_error():
    check_raises(lambda T, x: T.sum(x, (1, -2)), S(2, 3, 4))
    check_raises(lambda T, x: T.mean(x, (0, 2, -1, 0)), S(2, 3, 4))
    check_raises(lambda T, x: T.sum(x, (0, -1)), S())


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_all(op):
    check(lambda T, x: getattr(T, op)(x), S(2, 3, 4))
    check(lambda T, x: getattr(x, op)(), S(5))


@pytest.mark.parametrize("op", ["max", "min", "maximum", "minimum"])
def test_max_min_binary(op):
    check(lambda T, x, y: getattr(T, op)(x, y), S(2, 3), S(3))
    check(lambda T, x, y: getattr(x, op)(y), S(2, 3), S(2, 1, rg=False))
    check(lambda T, x, y: getattr(T, op)(x, y), S(3, rg=False), S(2, 3, dtype="float64"))


BINARY_TIES = {
    "maximum": lambda T, x, y: T.maximum(x, y),
    "minimum": lambda T, x, y: T.minimum(x, y),
    "max": lambda T, x, y: T.max(x, y),
    "min_method": lambda T, x, y: x.min(y),
}


@pytest.mark.parametrize("case", list(BINARY_TIES))
def test_max_min_binary_ties_and_nan(case):
    """Ties split the gradient in half; NaN propagates and its gradient reaches both inputs."""
    def program(T):
        x = _special(T, [[1.0, 2.0, 3.0, float("nan")], [0.0, -1.0, 5.0, 1.0]])
        y = _special(T, [1.0, 5.0, 0.0, 1.0])
        out = BINARY_TIES[case](T, x, y)
        out.backward(T.tensor(np.arange(1.0, 9.0, dtype="float32").reshape(2, 4)))
        return out, G(x), G(y), next_functions(out.grad_fn)

    same(program)


def test_max_min_binary_int_promotion():
    ok(lambda T: (T.maximum(T.tensor([1, 5, 3]), T.tensor([2.5, 0.5, 3.0])),
                  T.minimum(T.tensor([1, 5]), T.tensor([2, 0])),
                  T.maximum(T.tensor([True, False]), T.tensor([False, False]))))


TIES = {
    "amax": lambda T, x: x.amax(),
    "amin": lambda T, x: x.amin(),
    "amax_dim": lambda T, x: x.amax(dim=1),
    "max_all": lambda T, x: x.max(),
    "min_all": lambda T, x: x.min(),
    "max_dim": lambda T, x: x.max(dim=1),
    "min_dim": lambda T, x: x.min(dim=1),
    "maximum": lambda T, x: T.maximum(x, x.detach()),
    "argmax": lambda T, x: x.argmax(),
    "argmax_dim": lambda T, x: x.argmax(dim=1),
    "argmin_dim": lambda T, x: x.argmin(dim=1),
}


@pytest.mark.parametrize("case", list(TIES))
def test_reduction_ties(case):
    fn = TIES[case]

    def program(T):
        x = _special(T, [[3.0, 1.0, 3.0, 3.0], [-1.0, -1.0, 0.0, -5.0]])
        out = fn(T, x)
        first = out[0] if isinstance(out, tuple) else out
        if first.requires_grad:
            first.backward(T.ones_like(first) * 2)
        return out, G(x), next_functions(first.grad_fn)

    same(program)


def test_prod_with_zeros():
    def program(T):
        res = []
        for vals in ([2.0, 0.0, 3.0], [0.0, 0.0, 4.0], [1.5, 2.0, 3.0], [0.0]):
            x = _special(T, vals)
            p = x.prod()
            p.backward()
            res.append((p, G(x)))
        y = _special(T, [[2.0, 0.0, 3.0], [0.0, 0.0, 1.0], [1.0, 2.0, 3.0]])
        q = y.prod(dim=1)
        q.backward(T.tensor([1.0, 2.0, 3.0]))
        res.append((q, G(y)))
        return res

    same(program)


def test_reduction_dtypes():
    def program(T):
        i = T.tensor([[1, 2, 3], [4, 5, 6]])
        b = T.tensor([True, False, True])
        i32 = T.tensor([1, 2], dtype=T.int32)
        return [i.sum(), i.sum(dim=0), i.prod(), i.amax(), i.max(), i.max(dim=1), b.sum(),
                i32.sum(), i32.prod(), i.sum(dtype=T.float64), i.float().mean(),
                T.tensor([1.0, 2.0]).sum(dtype=T.float64)]

    same(program)


def test_mean_of_int_error():
    check_raises(lambda T, x: x.mean(), S(3, kind="int", rg=False))


def test_mean_of_int_error_dim():
    check_raises(lambda T, x: x.mean(dim=0), S(3, kind="int", rg=False))


REDUCE_DIM_ERRORS = {
    "sum": lambda T, x: x.sum(dim=3),
    "sum_neg": lambda T, x: x.sum(dim=-3),
    "mean_tuple": lambda T, x: x.mean(dim=(0, 5)),
    "max": lambda T, x: x.max(dim=2),
    "var": lambda T, x: x.var(dim=2),
    "amax": lambda T, x: x.amax(dim=2),
    "argmax": lambda T, x: x.argmax(dim=2),
}


@pytest.mark.parametrize("case", list(REDUCE_DIM_ERRORS))
def test_reduction_dim_out_of_range(case):
    check_raises(REDUCE_DIM_ERRORS[case], S(2, 3))


def test_max_empty_error():
    check_raises(lambda T, x: x.max(), S(0))


def test_argmax_argmin():
    def program(T):
        x = T.tensor(np.random.RandomState(3).randn(3, 4).astype("float32"), requires_grad=True)
        return [x.argmax(), x.argmin(), T.argmax(x, dim=1), T.argmin(x, dim=0),
                x.argmax(dim=-1, keepdim=True), x.argmin(dim=0, keepdim=True)]

    same(program)


def test_argmax_keepdim_without_dim():
    same(lambda T: T.tensor(np.random.RandomState(3).randn(3, 4)).argmax(keepdim=True))
    same(lambda T: T.argmin(T.tensor(np.random.RandomState(3).randn(3, 4, 2)), keepdim=True))


def test_argmax_argmin_0d():
    same(lambda T: [T.argmax(T.tensor(2.0), 0), T.argmin(T.tensor(2.0), -1, keepdim=True),
                    T.tensor(2.0).argmax(keepdim=True)])


# --- softmax ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("op", "dim"), grid(["softmax", "log_softmax"], [0, 1, 2, -1, -2]))
def test_softmax(op, dim):
    check(lambda T, x: getattr(T, op)(x, dim), S(2, 3, 4), rtol=1e-5)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_method(op):
    check(lambda T, x: getattr(x, op)(-1), S(2, 3, 4), rtol=1e-5)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_dtype_arg_and_large_values(op):
    check(lambda T, x: getattr(T, op)(x, 0, dtype=T.float64), S(3, 2))
    check(lambda T, x: getattr(T, op)(x * 100, -1), S(3, 4), rtol=1e-5)
    check(lambda T, x: getattr(T, op)(x, 0), S(4, dtype="float64"))


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_dim_out_of_range(op):
    check_raises(lambda T, x: getattr(T, op)(x, 2), S(2, 3))


# --- shapes and views -------------------------------------------------------------------------------

VIEWS = {
    "reshape": (lambda T, x: x.reshape(4, 6), (2, 3, 4)),
    "reshape_tuple": (lambda T, x: x.reshape((3, -1)), (2, 3, 4)),
    "reshape_fn": (lambda T, x: T.reshape(x, (-1,)), (2, 3, 4)),
    "reshape_same": (lambda T, x: x.reshape(2, 3, 4), (2, 3, 4)),
    "reshape_noncontig": (lambda T, x: x.t().reshape(-1), (3, 4)),
    "reshape_0d": (lambda T, x: x.reshape(1, 1), ()),
    "reshape_viewable_noncontig": (lambda T, x: x.expand(3, 4).reshape(3, 2, 2), (3, 1)),
    "reshape_viewable_noncontig_2": (lambda T, x: x.t().reshape(1, 3, 2), (2, 3)),
    "reshape_to_0d": (lambda T, x: x.reshape(()), (1,)),
    "reshape_same_noncontig": (lambda T, x: x.t().reshape(3, 2), (2, 3)),
    "reshape_empty_noncontig": (lambda T, x: x.mT.reshape(0, 12), (0, 3, 4)),
    "view_0d": (lambda T, x: x.view(1, 1), ()),
    "view_empty_same": (lambda T, x: x.mT.view(0, 4, 3), (0, 3, 4)),
    "view": (lambda T, x: x.view(6, 4), (2, 3, 4)),
    "view_neg": (lambda T, x: x.view(-1, 2), (2, 3, 4)),
    "view_tuple": (lambda T, x: x.view((4, 3, 2)), (2, 3, 4)),
    "view_as": (lambda T, x: x.view_as(T.zeros(6, 4)), (2, 3, 4)),
    "reshape_as": (lambda T, x: x.reshape_as(T.zeros(6, 4)), (2, 3, 4)),
    "flatten": (lambda T, x: x.flatten(), (2, 3, 4)),
    "flatten_partial": (lambda T, x: x.flatten(1), (2, 3, 4)),
    "flatten_range": (lambda T, x: T.flatten(x, 0, 1), (2, 3, 4)),
    "flatten_neg": (lambda T, x: x.flatten(-2, -1), (2, 3, 4)),
    "flatten_same": (lambda T, x: x.flatten(1, 1), (2, 3, 4)),
    "flatten_0d": (lambda T, x: x.flatten(), ()),
    "flatten_noncontig": (lambda T, x: x.transpose(0, 2).flatten(), (2, 3, 4)),
    "squeeze": (lambda T, x: x.squeeze(), (1, 3, 1, 2)),
    "squeeze_dim": (lambda T, x: x.squeeze(0), (1, 3, 1, 2)),
    "squeeze_neg": (lambda T, x: x.squeeze(-2), (1, 3, 1, 2)),
    "squeeze_noop": (lambda T, x: x.squeeze(1), (1, 3, 1, 2)),
    "squeeze_dims": (lambda T, x: x.squeeze((0, 2)), (1, 3, 1, 2)),
    "squeeze_fn": (lambda T, x: T.squeeze(x, 2), (1, 3, 1, 2)),
    "squeeze_nothing": (lambda T, x: x.squeeze(), (2, 3)),
    "unsqueeze": (lambda T, x: x.unsqueeze(0), (2, 3)),
    "unsqueeze_mid": (lambda T, x: x.unsqueeze(1), (2, 3)),
    "unsqueeze_end": (lambda T, x: x.unsqueeze(2), (2, 3)),
    "unsqueeze_neg": (lambda T, x: x.unsqueeze(-1), (2, 3)),
    "unsqueeze_0d": (lambda T, x: T.unsqueeze(x, 0), ()),
    "transpose": (lambda T, x: x.transpose(0, 2), (2, 3, 4)),
    "transpose_neg": (lambda T, x: T.transpose(x, -1, -2), (2, 3, 4)),
    "transpose_same": (lambda T, x: x.transpose(1, 1), (2, 3, 4)),
    "swapaxes": (lambda T, x: T.swapaxes(x, 0, 1), (2, 3, 4)),
    "permute": (lambda T, x: x.permute(2, 0, 1), (2, 3, 4)),
    "permute_tuple": (lambda T, x: x.permute((1, 2, 0)), (2, 3, 4)),
    "permute_neg": (lambda T, x: T.permute(x, (-1, 0, 1)), (2, 3, 4)),
    "t": (lambda T, x: x.t(), (2, 3)),
    "t_fn": (lambda T, x: T.t(x), (2, 3)),
    "t_1d": (lambda T, x: x.t(), (3,)),
    "T": (lambda T, x: x.T, (2, 3)),
    "T_3d": (lambda T, x: x.T, (2, 3, 4)),
    "mT": (lambda T, x: x.mT, (2, 3, 4)),
    "expand": (lambda T, x: x.expand(2, 3, 4), (3, 1)),
    "expand_neg": (lambda T, x: x.expand(5, -1, 4), (3, 1)),
    "expand_tuple": (lambda T, x: x.expand((2, 3)), (3,)),
    "expand_same": (lambda T, x: x.expand(3, 1), (3, 1)),
    "expand_0d": (lambda T, x: x.expand(2, 2), ()),
    "expand_as": (lambda T, x: x.expand_as(T.zeros(2, 3, 4)), (3, 1)),
    "clone": (lambda T, x: x.clone(), (2, 3)),
    "clone_fn": (lambda T, x: T.clone(x), (2, 3)),
    "contiguous_noop": (lambda T, x: (x * 1).contiguous(), (2, 3)),
    "contiguous_copy": (lambda T, x: x.t().contiguous(), (2, 3)),
    "select": (lambda T, x: x.select(1, -1), (2, 3)),
    "select_fn": (lambda T, x: T.select(x, 0, 1), (2, 3)),
    "chain": (lambda T, x: x.t().unsqueeze(0).expand(2, 3, 2).reshape(6, 2), (2, 3)),
}


@pytest.mark.parametrize("op", list(VIEWS))
def test_view_ops(op):
    fn, shape = VIEWS[op]
    check(fn, S(*shape))


def test_views_report_contiguity_and_strides():
    def program(T):
        x = T.tensor(np.arange(24.0, dtype="float32")).reshape(2, 3, 4)
        vs = [x.transpose(0, 2), x.permute(1, 2, 0), x[:, ::2], x.expand(3, 2, 3, 4), x[0].t(),
              x.unsqueeze(1), x[1], x.squeeze(), x.reshape(4, 6), x[:, 1:, 1::2]]
        return [(v.stride(), v.is_contiguous(), v.storage_offset(), v._is_view()) for v in vs]

    same(program)


def test_empty_and_0d_views_report_contiguity_and_strides():
    def program(T):
        e, s = T.zeros(0, 3, 4), T.tensor(1.0)
        vs = [e.mT, e.mT.reshape(0, 12), e.mT.view(0, 4, 3), e[:, ::2], s.view(1, 1),
              s.reshape(1), s.flatten()]
        return [(v.stride(), v.is_contiguous(), v._is_view()) for v in vs]

    same(program)


VIEW_ERRORS = {
    "view_noncontig": (lambda T, x: x.t().view(-1), (3, 4)),
    "view_bad_size": (lambda T, x: x.view(5, 5), (3, 4)),
    "view_two_neg": (lambda T, x: x.view(-1, -1), (3, 4)),
    "reshape_bad_size": (lambda T, x: x.reshape(7), (3, 4)),
    "reshape_bad_infer": (lambda T, x: x.reshape(5, -1), (3, 4)),
    "expand_incompatible": (lambda T, x: x.expand(2, 4), (3,)),
    "expand_incompatible_2d": (lambda T, x: x.expand(3, 3), (2, 1)),
    "expand_fewer_dims": (lambda T, x: x.expand(3), (2, 3)),
    "squeeze_out_of_range": (lambda T, x: x.squeeze(3), (2, 3)),
    "unsqueeze_out_of_range": (lambda T, x: x.unsqueeze(4), (2, 3)),
    "unsqueeze_neg_out_of_range": (lambda T, x: x.unsqueeze(-4), (2, 3)),
    "transpose_out_of_range": (lambda T, x: x.transpose(0, 2), (2, 3)),
    "permute_wrong_len": (lambda T, x: x.permute(1, 0), (2, 3, 4)),
    "permute_duplicate": (lambda T, x: x.permute(0, 0, 1), (2, 3, 4)),
    "permute_out_of_range": (lambda T, x: x.permute(0, 1, 3), (2, 3, 4)),
    "t_3d": (lambda T, x: x.t(), (2, 3, 4)),
    "flatten_bad_range": (lambda T, x: x.flatten(2, 1), (2, 3, 4)),
    "flatten_out_of_range": (lambda T, x: x.flatten(0, 3), (2, 3, 4)),
    "select_out_of_range": (lambda T, x: x.select(0, 2), (2, 3)),
    "select_dim_out_of_range": (lambda T, x: x.select(2, 0), (2, 3)),
    "select_negative_out_of_range": (lambda T, x: x.select(-1, -4), (2, 3)),
    "select_0d": (lambda T, x: x.select(0, 0), ()),
}


@pytest.mark.parametrize("case", list(VIEW_ERRORS))
def test_view_errors(case):
    fn, shape = VIEW_ERRORS[case]
    check_raises(fn, S(*shape))


# --- indexing ---------------------------------------------------------------------------------------

INDEX = {
    "int": lambda T, x: x[1],
    "neg_int": lambda T, x: x[-1],
    "int_int": lambda T, x: x[1, -2],
    "int_int_int": lambda T, x: x[0, 1, 2],
    "slice": lambda T, x: x[1:3],
    "slice_step": lambda T, x: x[::2],
    "slice_neg": lambda T, x: x[-2:],
    "slice_full": lambda T, x: x[:],
    "slice_full_2": lambda T, x: x[:, :],
    "slice_full_tuple": lambda T, x: x[(slice(None),)],
    "slice_full_range": lambda T, x: x[0:3, 0:100],
    "slice_full_ellipsis": lambda T, x: x[..., :],
    "ellipsis_slice_full": lambda T, x: x[:, ...],
    "slice_empty": lambda T, x: x[3:1],
    "slice_past_end": lambda T, x: x[1:100],
    "slice_2d": lambda T, x: x[1:, ::2],
    "slice_neg_step_start": lambda T, x: x[:, -3:-1, 1::2],
    "int_slice": lambda T, x: x[1, 1:],
    "slice_int": lambda T, x: x[:, 2],
    "none": lambda T, x: x[None],
    "none_mid": lambda T, x: x[:, None],
    "none_twice": lambda T, x: x[None, :, None],
    "ellipsis": lambda T, x: x[...],
    "ellipsis_int": lambda T, x: x[..., 0],
    "int_ellipsis": lambda T, x: x[1, ...],
    "ellipsis_none": lambda T, x: x[..., None],
    "ellipsis_mid": lambda T, x: x[0, ..., 1],
    "list": lambda T, x: x[[0, 2]],
    "list_dupes": lambda T, x: x[[0, 0, 2, 0]],
    "list_neg": lambda T, x: x[[-1, 0]],
    "tensor_idx": lambda T, x: x[T.tensor([2, 0])],
    "tensor_idx_2d": lambda T, x: x[T.tensor([[0, 1], [2, 2]])],
    "tensor_0d_int": lambda T, x: x[T.tensor(1)],
    "two_lists": lambda T, x: x[[0, 1], [1, 3]],
    "list_broadcast": lambda T, x: x[T.tensor([[0], [2]]), T.tensor([1, 3])],
    "slice_list": lambda T, x: x[:, [0, 2]],
    "int_list": lambda T, x: x[1, [0, 2]],
    "list_int": lambda T, x: x[[0, 2], 1],
    "list_slice_list": lambda T, x: x[[0, 1], :, [1, 0]],
    "slice_list_slice": lambda T, x: x[1:, [0, 2], :],
    "ellipsis_list": lambda T, x: x[..., [0, 3]],
    "none_list": lambda T, x: x[None, [0, 1]],
    "bool_mask_full": lambda T, x: x[x > 0],
    "bool_mask_rows": lambda T, x: x[T.tensor([True, False, True])],
    "bool_mask_2d": lambda T, x: x[(x > 0).any(dim=2)],
    "bool_mask_then_slice": lambda T, x: x[T.tensor([False, True, True]), 1:],
    "slice_bool_mask": lambda T, x: x[:, T.tensor([True, False, True, True])],
    "bool_list": lambda T, x: x[[True, False, True]],
    "python_bool": lambda T, x: x[True],
    "python_false": lambda T, x: x[False],
    "bool_then_int": lambda T, x: x[True, 0],
    "int_then_bool": lambda T, x: x[1, True],
    "ellipsis_bool": lambda T, x: x[..., True],
    "bool_then_list": lambda T, x: x[True, [0, 2]],
    "tensor_0d_bool": lambda T, x: x[T.tensor(True)],
    "tensor_0d_false": lambda T, x: x[T.tensor(False)],
    "step_then_list": lambda T, x: x[::2, [1, 2]],
    "numpy_int": lambda T, x: x[np.int64(1)],
}


@pytest.mark.parametrize("case", cases(INDEX))
def test_getitem(case):
    check(INDEX[case], S(3, 4, 5))


INDEX_1D = {
    "int": lambda T, x: x[2],
    "slice_step": lambda T, x: x[1::3],
    "list": lambda T, x: x[[4, 0, 4]],
    "mask": lambda T, x: x[x > 0.3],
    "none_ellipsis": lambda T, x: x[None, ...],
    "tensor_idx_1elem": lambda T, x: x[T.tensor([1])],
}


@pytest.mark.parametrize("case", list(INDEX_1D))
def test_getitem_1d(case):
    check(INDEX_1D[case], S(6))


INDEX_0D = {
    "none": lambda T, x: x[None],
    "ellipsis": lambda T, x: x[...],
    "empty_tuple": lambda T, x: x[()],
    "python_bool": lambda T, x: x[True],
    "python_false": lambda T, x: x[False],
    "ellipsis_tuple": lambda T, x: x[(Ellipsis,)],
}


@pytest.mark.parametrize("case", list(INDEX_0D))
def test_getitem_0d(case):
    check(INDEX_0D[case], S())


INDEX_ERRORS = {
    "int_out_of_range": lambda T, x: x[3],
    "neg_int_out_of_range": lambda T, x: x[-4],
    "too_many": lambda T, x: x[0, 0, 0],
    "list_out_of_range": lambda T, x: x[[0, 5]],
    "float_index": lambda T, x: x[T.tensor([0.0, 1.0])],
    "mask_shape": lambda T, x: x[T.tensor([True, False])],
    "zero_step": lambda T, x: x[::0],
    "zero_step_second_dim": lambda T, x: x[:, ::0],
    "neg_step": lambda T, x: x[::-1],
    "int_out_of_range_second_dim": lambda T, x: x[0, 5],
    "int_out_of_range_after_none": lambda T, x: x[None, 1, None, 7],
    "int_out_of_range_after_bool": lambda T, x: x[True, 1, 7],
    "int_out_of_range_after_ellipsis": lambda T, x: x[..., 4],
    "float": lambda T, x: x[1.5],
    "numpy_bool": lambda T, x: x[np.bool_(True)],
}


@pytest.mark.parametrize("case", list(INDEX_ERRORS))
def test_getitem_errors(case):
    check_raises(INDEX_ERRORS[case], S(3, 4))


# --- cat / stack / unbind ---------------------------------------------------------------------------

CAT = {
    "dim0": (lambda T, a, b: T.cat([a, b]), [S(2, 3), S(4, 3)]),
    "dim1": (lambda T, a, b: T.cat([a, b], dim=1), [S(2, 3), S(2, 1)]),
    "neg_dim_tuple": (lambda T, a, b: T.cat((a, b), -1), [S(2, 3), S(2, 2)]),
    "three_mixed_rg": (lambda T, a, b, c: T.cat([a, b, c], dim=0),
                       [S(1, 3), S(2, 3, rg=False), S(3, 3)]),
    "single": (lambda T, a: T.cat([a]), [S(2, 3)]),
    "repeated": (lambda T, a, b: T.cat([a, b, a]), [S(2), S(3)]),
    "concat": (lambda T, a, b: T.concat([a, b], dim=2), [S(2, 3, 1), S(2, 3, 2)]),
    "promote_float64": (lambda T, a, b: T.cat([a, b]), [S(2, 3), S(1, 3, dtype="float64")]),
    "promote_int": (lambda T, a, b: T.cat([a, b]), [S(2, 3), S(1, 3, kind="int", rg=False)]),
}


@pytest.mark.parametrize("case", list(CAT))
def test_cat(case):
    fn, specs = CAT[case]
    check(fn, *specs)


STACK = {
    "dim0": (lambda T, a, b: T.stack([a, b]), [S(2, 3), S(2, 3)]),
    "dim1": (lambda T, a, b: T.stack([a, b], dim=1), [S(2, 3), S(2, 3)]),
    "neg_dim_tuple": (lambda T, a, b: T.stack((a, b), dim=-1), [S(2, 3), S(2, 3)]),
    "three_mixed_rg": (lambda T, a, b, c: T.stack([a, b, c], 2),
                       [S(2, 3), S(2, 3, rg=False), S(2, 3)]),
    "repeated": (lambda T, a: T.stack([a, a]), [S(4)]),
    "0d": (lambda T, a, b: T.stack([a, b]), [S(), S()]),
}


@pytest.mark.parametrize("case", list(STACK))
def test_stack(case):
    fn, specs = STACK[case]
    check(fn, *specs)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unbind(dim):
    def program(T):
        rs = np.random.RandomState(0)
        x = S(3, 2, 4).build(T, rs)
        parts = x.unbind(dim) if dim != 1 else T.unbind(x, dim)
        out = parts[0] * 2 + parts[-1] * parts[1]
        out.backward(_upstream(T, rs, out))
        return (list(parts), G(x), next_functions(out.grad_fn),
                [p._is_view() for p in parts], [p.stride() for p in parts])

    same(program)


CAT_ERRORS = {
    "cat_empty": lambda T, a, b: T.cat([]),
    "cat_shape_mismatch": lambda T, a, b: T.cat([a, b], dim=1),
    "cat_ndim_mismatch": lambda T, a, b: T.cat([a, b[0]]),
    "cat_dim_out_of_range": lambda T, a, b: T.cat([a, a], dim=2),
    "cat_empty_tuple": lambda T, a, b: T.cat(()),
    "cat_shape_mismatch_neg_dim": lambda T, a, b: T.cat([a.t(), b], dim=-2),
    "cat_third_mismatch": lambda T, a, b: T.cat([a, a, b], dim=1),
    "cat_third_ndim_mismatch": lambda T, a, b: T.cat([a, a, b[None]]),
    "cat_0d": lambda T, a, b: T.cat([a[0, 0], a[0, 1]]),
    "cat_0d_second": lambda T, a, b: T.cat([a[0], a[0, 1]], dim=3),
    "stack_empty": lambda T, a, b: T.stack([]),
    "stack_shape_mismatch": lambda T, a, b: T.stack([a, b]),
    "stack_dim_out_of_range": lambda T, a, b: T.stack([a, a], dim=3),
    "unbind_dim_out_of_range": lambda T, a, b: T.unbind(a, 2),
}


@pytest.mark.parametrize("case", list(CAT_ERRORS))
def test_cat_stack_errors(case):
    check_raises(CAT_ERRORS[case], S(2, 3), S(3, 3))


# --- .grad _version after backward ------------------------------------------------------------------

GRAD_VERSION = {
    "add_same_shape": (lambda T, a, b: a + b, [S(2, 3), S(2, 3)]),
    "add_broadcast": (lambda T, a, b: a + b, [S(2, 3), S(3)]),
    "sub": (lambda T, a, b: a - b, [S(2, 3), S(2, 3)]),
    "mul": (lambda T, a, b: a * b, [S(2, 3), S(3)]),
    "div": (lambda T, a, b: a / b, [S(2, 3), S(3, kind="pos")]),
    "neg": (lambda T, a: -a, [S(2, 3)]),
    "exp": (lambda T, a: a.exp(), [S(2, 3)]),
    "pow": (lambda T, a: a ** 2, [S(2, 3)]),
    "where": (lambda T, a, b: T.where(a > 0, a, b), [S(2, 3), S(2, 3)]),
    "clamp": (lambda T, a: a.clamp(-0.5, 0.5), [S(2, 3)]),
    "mm": (lambda T, a, b: a @ b, [S(2, 3), S(3, 4)]),
    "sum": (lambda T, a: a.sum(), [S(2, 3)]),
    "sum_dim": (lambda T, a: a.sum(1), [S(2, 3)]),
    "mean": (lambda T, a: a.mean(0), [S(2, 3)]),
    "sum_0d": (lambda T, a: a.sum(), [S()]),
    "prod": (lambda T, a: a.prod(), [S(2, 3)]),
    "amax": (lambda T, a: a.amax(1), [S(2, 3)]),
    "max_all": (lambda T, a: a.max(), [S(2, 3)]),
    "max_dim": (lambda T, a: a.max(1), [S(2, 3)]),
    "var": (lambda T, a: a.var(1), [S(2, 3)]),
    "softmax": (lambda T, a: a.softmax(1), [S(2, 3)]),
    "reshape": (lambda T, a: a.reshape(6), [S(2, 3)]),
    "view": (lambda T, a: a.view(3, 2), [S(2, 3)]),
    "unsqueeze": (lambda T, a: a.unsqueeze(0), [S(2, 3)]),
    "squeeze": (lambda T, a: a.squeeze(), [S(1, 3)]),
    "transpose": (lambda T, a: a.t(), [S(2, 3)]),
    "expand": (lambda T, a: a.expand(2, 3), [S(3)]),
    "clone": (lambda T, a: a.clone(), [S(2, 3)]),
    "select": (lambda T, a: a[1], [S(2, 3)]),
    "slice": (lambda T, a: a[:, 1:], [S(2, 3)]),
    "index_list": (lambda T, a: a[[0, 0]], [S(2, 3)]),
    "index_mask": (lambda T, a: a[a > 0], [S(2, 3)]),
    "prod_0d": (lambda T, a: a.prod(), [S()]),
    "cat": (lambda T, a, b: T.cat([a, b]), [S(2, 3), S(2, 3)]),
    "cat_dim1": (lambda T, a, b: T.cat([a, b], 1), [S(2, 3), S(2, 3)]),
    "cat_repeated": (lambda T, a, b: T.cat([a, b, a]), [S(2), S(3)]),
    "stack": (lambda T, a, b: T.stack([a, b]), [S(2, 3), S(2, 3)]),
    "stack_dim1": (lambda T, a, b: T.stack([a, b], 1), [S(2, 3), S(2, 3)]),
    "stack_repeated": (lambda T, a: T.stack([a, a]), [S(4)]),
    "chain_views": (lambda T, a: a.t().unsqueeze(0).expand(2, 3, 2).reshape(6, 2), [S(2, 3)]),
}


@pytest.mark.parametrize("case", cases(GRAD_VERSION, {
    k: GRAD_VERSION_BUG for k in ("sum_0d", "prod_0d", "reshape", "view",
                                  "unsqueeze", "squeeze", "cat_dim1", "stack_dim1",
                                  "chain_views")}))
def test_grad_version(case):
    fn, specs = GRAD_VERSION[case]
    check(fn, *specs, versions=True)


# --- grad_output of another dtype --------------------------------------------------------------------

GRAD_OUTPUT_OPS = {
    "sum": lambda x: x.sum(),
    "prod": lambda x: x.prod(),
    "mean": lambda x: x.mean(),
    "mul": lambda x: (x * x).sum(),
    "exp": lambda x: x.exp().sum(),
    "amax": lambda x: x.amax(),
    "max": lambda x: x.max(),
    "var": lambda x: x.var(),
    "softmax": lambda x: x.softmax(1)[0, 1],
    "elementwise": lambda x: x.sin(),
}


@pytest.mark.parametrize("op", list(GRAD_OUTPUT_OPS))
def test_float32_grad_output_for_float64_output(op):
    def program(T):
        x = T.tensor(np.random.RandomState(0).uniform(0.5, 2.0, (2, 3)), requires_grad=True)
        out = GRAD_OUTPUT_OPS[op](x)
        g = T.tensor(np.full(tuple(out.shape), 2.0, dtype="float32"))
        (gx,) = T.autograd.grad(out, x, grad_outputs=g)
        return out, _grad_without_version(gx)

    same(program)


# --- comparisons (non-differentiable) ---------------------------------------------------------------

COMPARE = {
    "eq": lambda T, a, b: a == b,
    "ne": lambda T, a, b: a != b,
    "lt": lambda T, a, b: a < b,
    "le": lambda T, a, b: a <= b,
    "gt": lambda T, a, b: a > b,
    "ge": lambda T, a, b: a >= b,
    "eq_fn": lambda T, a, b: T.eq(a, b),
    "ne_fn": lambda T, a, b: T.ne(a, b),
    "lt_fn": lambda T, a, b: T.lt(a, b),
    "le_fn": lambda T, a, b: T.le(a, b),
    "gt_fn": lambda T, a, b: T.gt(a, b),
    "ge_fn": lambda T, a, b: T.ge(a, b),
    "ge_method": lambda T, a, b: a.ge(b),
    "lt_method": lambda T, a, b: a.lt(b),
}


@pytest.mark.parametrize("op", list(COMPARE))
def test_comparison(op):
    fn = COMPARE[op]

    def program(T):
        rs = np.random.RandomState(1)
        a = T.tensor(rs.randint(-2, 3, size=(2, 3)).astype("float32"), requires_grad=True)
        b = T.tensor(rs.randint(-2, 3, size=(3,)).astype("float32"), requires_grad=True)
        i = T.tensor(rs.randint(-2, 3, size=(2, 3)))
        return [fn(T, a, b), fn(T, a, 1.0), fn(T, a, 1), fn(T, b, a), fn(T, i, a), fn(T, i, 0),
                fn(T, i, 0.5), fn(T, a.detach(), b.detach())]

    same(program)


def test_comparison_reverse_scalar():
    def program(T):
        a = T.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        return [1.0 < a, 0 == a, 2 >= a, 0.0 != a]  # noqa: SIM300 - the reflected forms

    same(program)


def test_comparison_with_none_is_python_bool():
    # used by list.index / `in` on lists of tensors (torch's _make_grads relies on it)
    def program(T):
        a = T.tensor([-1.0, 0.0, 2.0])
        return [a == None, a != None, None == a, None != a]  # noqa: E711, SIM300 - on purpose

    same(program)


def test_comparison_then_float_has_no_grad():
    def program(T):
        a = T.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        m = (a > 0).float()
        return m, (a * m).sum()

    same(program)


def test_logical_not_and_invert():
    def program(T):
        a = T.tensor([-1.0, 0.0, 2.0])
        return [~(a > 0), T.logical_not(a > 0), T.logical_not(a)]

    same(program)


# --- dtype promotion --------------------------------------------------------------------------------

def _t(T, values, dtype):
    return T.tensor(np.array(values), dtype=getattr(T, dtype))


PROMOTION = {
    "int_times_float_scalar": lambda T: _t(T, [1, 2, 3], "int64") * 1.5,
    "int_plus_int_scalar": lambda T: _t(T, [1, 2, 3], "int64") + 2,
    "int32_plus_int_scalar": lambda T: _t(T, [1, 2, 3], "int32") + 2,
    "uint8_plus_int_scalar": lambda T: _t(T, [1, 2, 3], "uint8") + 3,
    "int_plus_bool_scalar": lambda T: _t(T, [1, 2, 3], "int64") + True,
    "float32_plus_float64": lambda T: _t(T, [1.0, 2.0], "float32") + _t(T, [1.0, 2.0], "float64"),
    "float64_plus_float32": lambda T: _t(T, [1.0, 2.0], "float64") * _t(T, [1.0, 2.0], "float32"),
    "float32_plus_0d_float64": lambda T: _t(T, [1.0, 2.0], "float32") + _t(T, 3.0, "float64"),
    "0d_float64_plus_float32": lambda T: _t(T, 3.0, "float64") - _t(T, [1.0, 2.0], "float32"),
    "int_plus_0d_float": lambda T: _t(T, [1, 2], "int64") + _t(T, 3.5, "float64"),
    "int32_plus_0d_int64": lambda T: _t(T, [1, 2], "int32") + _t(T, 3, "int64"),
    "0d_plus_0d": lambda T: _t(T, 1.0, "float32") + _t(T, 3, "float64"),
    "int32_plus_int64": lambda T: _t(T, [1, 2], "int32") + _t(T, [1, 2], "int64"),
    "uint8_plus_int8": lambda T: _t(T, [1, 2], "uint8") + _t(T, [1, -2], "int8"),
    "int16_times_uint8": lambda T: _t(T, [1, 2], "int16") * _t(T, [1, 2], "uint8"),
    "bool_plus_int": lambda T: _t(T, [True, False], "bool") + _t(T, [1, 2], "int64"),
    "bool_plus_bool": lambda T: _t(T, [True, False], "bool") + _t(T, [True, True], "bool"),
    "bool_times_bool": lambda T: _t(T, [True, False], "bool") * _t(T, [True, True], "bool"),
    "bool_plus_int_scalar": lambda T: _t(T, [True, False], "bool") + 1,
    "bool_plus_float_scalar": lambda T: _t(T, [True, False], "bool") + 1.5,
    "bool_times_float": lambda T: _t(T, [True, False], "bool") * _t(T, [1.5, 2.5], "float32"),
    "int_div_int": lambda T: _t(T, [1, 2, 3], "int64") / _t(T, [2, 2, 2], "int64"),
    "int_div_int_scalar": lambda T: _t(T, [1, 2, 3], "int64") / 2,
    "int_scalar_div_int": lambda T: 3 / _t(T, [1, 2, 3], "int64"),
    "int_div_zero": lambda T: _t(T, [1, 0, -1], "int64") / 0,
    "int_floordiv_mode": lambda T: T.div(_t(T, [7, -7], "int64"), 2, rounding_mode="floor"),
    "int_trunc_mode": lambda T: T.div(_t(T, [7, -7], "int64"), 2, rounding_mode="trunc"),
    "float_floor_mode": lambda T: T.div(_t(T, [7.5, -7.5], "float32"), 2, rounding_mode="floor"),
    "int_pow_int": lambda T: _t(T, [1, 2, 3], "int64") ** 2,
    "int_pow_float": lambda T: _t(T, [1, 2, 3], "int64") ** 0.5,
    "int_pow_neg_int": lambda T: _t(T, [1, 2, 3], "int64") ** -1,
    "int32_pow_neg_int_fn": lambda T: T.pow(_t(T, [1, 2, 3], "int32"), -2),
    "bool_pow_neg_int": lambda T: _t(T, [True], "bool") ** -2,
    "int_pow_neg_int_inplace": lambda T: _t(T, [1, 2, 3], "int64").pow_(-1),
    "int_pow_neg_float": lambda T: _t(T, [1, 2, 3], "int64") ** -1.0,
    "int_scalar_pow_int": lambda T: 2 ** _t(T, [1, 2, 3], "int64"),
    "float_scalar_pow_int": lambda T: 2.0 ** _t(T, [1, 2, 3], "int64"),
    "int_pow_int_tensor": lambda T: _t(T, [1, 2, 3], "int64") ** _t(T, [2, 0, 1], "int64"),
    "float_pow_int_tensor": lambda T: _t(T, [1.5, 2, 3], "float32") ** _t(T, [2, 0, 1], "int64"),
    "int_sub_float_scalar": lambda T: 1.5 - _t(T, [1, 2, 3], "int64"),
    "int_sub_int_scalar": lambda T: 1 - _t(T, [1, 2, 3], "int32"),
    "bool_sub": lambda T: _t(T, [True, False], "bool") - _t(T, [True, True], "bool"),
    "bool_neg": lambda T: -_t(T, [True, False], "bool"),
    "bool_neg_inplace": lambda T: _t(T, [True, False], "bool").neg_(),
    "bool_sub_bool_scalar": lambda T: _t(T, [True, False], "bool") - True,
    "bool_scalar_rsub_bool": lambda T: True - _t(T, [True, False], "bool"),
    "bool_sub_int_scalar": lambda T: _t(T, [True, False], "bool") - 1,
    "int_scalar_rsub_bool": lambda T: 1 - _t(T, [True, False], "bool"),
    "float_sub_bool_scalar": lambda T: _t(T, [1.0, 2.0], "float32") - True,
    "float_sub_bool_tensor": lambda T: T.sub(_t(T, [1.0, 2.0], "float32"), _t(T, True, "bool")),
    "bool_sub_inplace": lambda T: _t(T, [True, False], "bool").sub_(_t(T, [True, True], "bool")),
    "int_sub_bool_inplace": lambda T: _t(T, [1, 2], "int64").sub_(True),
    "int_neg": lambda T: -_t(T, [1, -2], "int32"),
    "int_abs": lambda T: _t(T, [1, -2], "int64").abs(),
    "int_exp": lambda T: _t(T, [1, 2], "int64").exp(),
    "int_sqrt": lambda T: _t(T, [1, 4], "int32").sqrt(),
    "bool_sigmoid": lambda T: _t(T, [True, False], "bool").sigmoid(),
    "int_relu": lambda T: _t(T, [1, -2], "int64").relu(),
    "int_clamp_float": lambda T: _t(T, [1, -2, 5], "int64").clamp(0.5, 3.5),
    "int_clamp_int": lambda T: _t(T, [1, -2, 5], "int64").clamp(0, 3),
    "int_matmul": lambda T: _t(T, [[1, 2], [3, 4]], "int64") @ _t(T, [1, 1], "int64"),
    "matmul_mixed_dtype": lambda T: _t(T, [[1.0, 2.0]], "float32") @ _t(T, [1.0, 1.0], "float64"),
    "where_int_float": lambda T: T.where(_t(T, [True, False], "bool"), _t(T, [1, 2], "int64"),
                                         _t(T, [0.5, 1.5], "float32")),
    "where_int_scalar": lambda T: T.where(_t(T, [True, False], "bool"), _t(T, [1, 2], "int64"),
                                          0.5),
    "cat_int_bool": lambda T: T.cat([_t(T, [1, 2], "int32"), _t(T, [True], "bool")]),
    "float16_plus_scalar": lambda T: _t(T, [1.0, 2.0], "float16") + 1.5,
    "float16_plus_float32": lambda T: _t(T, [1.0, 2.0], "float16") + _t(T, [1.0, 2.0], "float32"),
    "float64_plus_int_tensor": lambda T: _t(T, [1.0, 2.0], "float64") + _t(T, [1, 2], "int64"),
    "eq_int_float": lambda T: _t(T, [1, 2], "int64") == _t(T, [1.0, 2.5], "float32"),
    "lt_bool_float_scalar": lambda T: _t(T, [True, False], "bool") < 0.5,
}


@pytest.mark.parametrize("case", list(PROMOTION))
def test_dtype_promotion(case):
    same(PROMOTION[case])


def test_promotion_grads_flow_back_in_input_dtype():
    def program(T):
        a = T.tensor([1.0, 2.0], dtype=T.float32, requires_grad=True)
        b = T.tensor([3.0, 4.0], dtype=T.float64, requires_grad=True)
        c = T.tensor(2.0, dtype=T.float64, requires_grad=True)
        out = a * b + a * c
        out.backward(T.tensor([1.0, -1.0], dtype=T.float64))
        return out, G(a), G(b), G(c), next_functions(out.grad_fn)

    same(program)


def test_promotion_int_tensor_with_float_leaf():
    def program(T):
        a = T.tensor([1.5, 2.5], requires_grad=True)
        i = T.tensor([1, 2])
        out = (i * a + i / a - a ** i).sum()
        out.backward()
        return out, G(a), next_functions(out.grad_fn)

    same(program)


def test_requires_grad_int_error():
    check_raises(lambda T: T.tensor([1, 2]).requires_grad_())


def test_requires_grad_int_error_in_constructor():
    check_raises(lambda T: T.tensor([1, 2], requires_grad=True))


@pytest.mark.parametrize("p", [2, 1, 3, float("inf"), 0, "fro", 0.5])
def test_vector_norm(p):
    def program(T):
        out = []
        for dim, keepdim in [(None, False), (1, False), ((0, 1), True)]:
            x = T.tensor([[3.0, -4.0, 0.0], [1.0, 2.0, -2.0]], dtype=T.float64,
                         requires_grad=True)
            y = x.norm(p=p, dim=dim, keepdim=keepdim)
            y.sum().backward()
            out.append((y, x.grad))
        zero = T.zeros(3, dtype=T.float64, requires_grad=True)
        zero.norm(p=p).backward()
        return out, zero.grad, T.norm(T.tensor([3.0, 4.0]), p)

    ok(program)
