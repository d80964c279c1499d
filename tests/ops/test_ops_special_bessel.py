"""Differential tests of torch.special's Bessel family (``airy_ai``, ``bessel_j0/j1/y0/y1``,
``modified_bessel_i0/i1/k0/k1``, ``scaled_modified_bessel_k0/k1``, ``spherical_bessel_j0``):
values in float32 and float64 on every branch boundary and special point, integral and bool
inputs, ``out=``, torch's non-differentiable handling (no grad_fn, backward's error, ``out=``
allowed on inputs that require grad, no forward-AD tangent, zero gradients under ``func``),
refused dtypes, argument errors, and the kernels under ``jax.jit`` and ``jax.vmap``.

XLA on CPU flushes subnormal numbers to zero: results in that range are 0 here (the tolerance
covers them), and inputs within a factor ~2 of the smallest normal number are left out.

Tolerances: both libraries evaluate the same Cephes approximations in the input's dtype, so
results agree to a few ulps (float64 rtol 1e-12; float32 rtol 2e-6). The absolute part of the
tolerance (equal to rtol, as ``differential.same`` applies it) covers two things: XLA on CPU
flushes float32 subnormal results to zero where torch keeps them (K0/K1 and Ai near their
underflow), and Ai(x) for x < -2.09 is ``A(x) sin(t)`` with ``t ~ x^1.5``: an ulp of ``t``
shows in absolute terms near the zeros (float64: ~1e-14 of the amplitude).
"""

from __future__ import annotations

import numpy as np
import pytest

from differential import attempt, ok, same

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
import jax  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import jaxgrad  # noqa: E402

FAST = settings(max_examples=8, deadline=None, database=None)

NAMES = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
         "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
         "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0"]

INF, NAN = float("inf"), float("nan")
# special points and each kernel's branch boundaries (J: 1e-5 and 5; I: 8; K: 2; Ai: +-2.09,
# 8.3203353, 103.892; spherical j0: 0.5), both signs, huge and tiny magnitudes
SPECIAL = [0.0, -0.0, NAN, INF, -INF, 1e-30, -1e-30, 1e-6, 9.99e-6, 1e-5, 0.3, 0.5, -0.5, 0.4999,
           1.0, -1.0, 2.0, -2.0, 2.09, -2.09, 2.0899, -2.0899, 3.7, 5.0, -5.0, 5.0001, 8.0, -8.0,
           8.0001, 8.3203353, 8.33, 12.5, -12.5, 30.0, -38.0, 85.0, 100.0, -100.0, 103.892,
           103.9, 500.0, 1e4, -1e4, 1e8]
GRID = np.concatenate([np.linspace(-12, 12, 241), np.linspace(-120, 120, 97),
                       np.logspace(-8, 2.5, 40)]).tolist()
TOL = {"float32": 2e-6, "float64": 1e-12}


def _fn(T, name):
    return getattr(T.special, name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_values_on_special_points_and_a_grid(name, dtype):
    def program(T):
        d = getattr(T, dtype)
        return _fn(T, name)(T.tensor(SPECIAL, dtype=d)), _fn(T, name)(T.tensor(GRID, dtype=d))

    ok(program, rtol=TOL[dtype])


@pytest.mark.parametrize("name", NAMES)
def test_values_are_relatively_close_away_from_underflow(name):
    """Beyond ``differential``'s rtol == atol: relative agreement of every normal result."""
    x = np.concatenate([GRID, SPECIAL])
    for dtype, rtol in ((np.float32, 2e-6), (np.float64, 1e-12)):
        expected = _fn(torch, name)(torch.tensor(x, dtype=getattr(torch, dtype.__name__)))
        got = _fn(jaxgrad, name)(jaxgrad.tensor(x, dtype=getattr(jaxgrad, dtype.__name__)))
        expected, got = expected.numpy(), np.asarray(got._value)
        normal = ~(np.abs(expected) < np.finfo(dtype).tiny)
        atol = 1e-13 if name == "airy_ai" and dtype is np.float64 else 0.0
        np.testing.assert_allclose(got[normal], expected[normal], rtol=rtol, atol=atol,
                                   equal_nan=True)


@pytest.mark.parametrize("name", NAMES)
def test_integral_and_bool_inputs_compute_in_the_default_float_dtype(name):
    def program(T):
        f = _fn(T, name)
        return (f(T.tensor([0, 1, 2, 7, -3])), f(T.tensor([True, False])),
                f(T.tensor([1, 3], dtype=T.int32)), f(T.tensor([1, 3], dtype=T.uint8)))

    ok(program, rtol=2e-6)
    ok(lambda T: (T.set_default_dtype(T.float64), _fn(T, name)(T.tensor([1, 2])),
                  T.set_default_dtype(T.float32))[1], rtol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_non_differentiable_like_torch(name):
    """torch's result of an input that requires grad has no history: backward raises its
    error, ``out=`` is allowed, and torch.func sees a constant."""
    def program(T):
        x = T.tensor([0.5, 1.5, 3.0], dtype=T.float64, requires_grad=True)
        y = _fn(T, name)(x)
        out = T.empty(3, dtype=T.float64)
        written = _fn(T, name)(x, out=out)
        leaf_out = T.empty(3, dtype=T.float64, requires_grad=True)
        return (y, attempt(lambda: y.sum().backward()), written, out, x.grad,
                attempt(lambda: _fn(T, name)(x.detach(), out=leaf_out)), leaf_out,
                T.func.grad(lambda t: _fn(T, name)(t).sum())(x.detach()),
                T.func.grad(lambda t: (_fn(T, name)(t) + t).sum())(x.detach()))

    ok(program)


@pytest.mark.parametrize("name", NAMES)
def test_forward_ad_gives_no_tangent(name):
    def program(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(T.tensor([0.5, 2.5]), T.tensor([1.0, -1.0]))
            y = _fn(T, name)(d)
            written = _fn(T, name)(d, out=T.empty(2))
            return y, fw.unpack_dual(y).tangent, written, fw.unpack_dual(written).tangent

    ok(program)


@pytest.mark.parametrize("name", NAMES)
def test_out_casts_resizes_and_refuses_like_torch(name):
    def program(T):
        f = _fn(T, name)
        x = T.tensor([0.5, 1.5])
        wide = T.empty(0, dtype=T.float64)
        return (f(x, out=wide), wide, attempt(lambda: f(x, out=T.empty(2, dtype=T.int64))),
                attempt(lambda: f(x.double(), out=T.empty(2))),
                attempt(lambda: f(x, out=3)), f(T.tensor([1, 2]), out=T.empty(2)))

    ok(program, rtol=2e-6)


@pytest.mark.parametrize("name", NAMES)
def test_refused_dtypes_and_argument_errors(name):
    param = "x" if name in ("airy_ai", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
                            "spherical_bessel_j0") else "input"

    def program(T):
        f = _fn(T, name)
        one = T.tensor([1.0])
        return (attempt(lambda: f(one.half())), attempt(lambda: f(one.bfloat16())),
                attempt(lambda: f(one.to(T.complex64))), attempt(lambda: f(one.double() * 1j)),
                attempt(lambda: f(3)), attempt(lambda: f([1.0])), f(**{param: one}),
                f.__name__)

    same(program)


@pytest.mark.parametrize("name", NAMES)
def test_under_jax_jit_and_vmap(name):
    """The kernels are pure JAX: jit and vmap give the eager (torch-matching) values."""
    x = jaxgrad.tensor([[-3.0, -0.5, 0.0, 0.25], [1.0, 2.5, 9.0, 110.0]], dtype=jaxgrad.float64)
    f = _fn(jaxgrad, name)
    eager = np.asarray(f(x)._value)
    expected = _fn(torch, name)(torch.tensor(np.asarray(x._value))).numpy()
    np.testing.assert_allclose(eager, expected, rtol=1e-12, atol=1e-300, equal_nan=True)
    for transformed in (jax.jit(f), jax.vmap(f), jax.jit(jax.vmap(f))):
        got = transformed(x)
        assert not got.requires_grad
        np.testing.assert_array_equal(np.asarray(got._value), eager)


@pytest.mark.parametrize("name", NAMES)
@FAST
@given(values=hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                         elements=st.floats(-60, 60).filter(lambda v: v == 0 or abs(v) > 1e-30)),
       dtype=st.sampled_from(["float32", "float64"]))
def test_random_shapes_and_values_vs_torch(name, values, dtype):
    """(Not near the subnormal range: XLA on CPU treats subnormal operands and intermediates
    as zero, so K1 or Y1 of the smallest normal float32 is NaN or inf where torch's is finite.)"""
    ok(lambda T: _fn(T, name)(T.tensor(values, dtype=getattr(T, dtype))), rtol=TOL[dtype])
