"""Differential tests of torch.special's orthogonal polynomials (Chebyshev T/U/V/W and their
shifted forms, Hermite H/He, Laguerre L, Legendre P): values in float32 and float64 over a
grid of x (every ``|x| == 1`` / ``x in {0, 1}`` branch) and n (negative, 0, 1, the closed-form
thresholds 4/6/8, large, the Hermite limits 128/512), ``n`` truncated to an integer (2.7,
-0.5, NaN, inf, 1e20), the three overloads (a number x or n: int, float, bool), dtype
promotion and broadcasting, ``out=``, torch's non-differentiable handling, refused dtypes and
argument errors, and the kernels under ``jax.jit``/``jax.vmap`` with traced degrees.

Tolerances: the recurrences agree bit for bit. The closed forms (``cos(n acos x)`` ...) multiply
the arc cosine by ``n``, and glibc's ``acosf`` (which torch's float32 kernel calls) is not
correctly rounded: one ulp of the angle shows n-fold, so values are compared with an absolute
tolerance of ``16 (|n| + 1) eps max(|P|, 1)``, and for n up to 1000 the float32 results are
judged against torch's float64 ones (jaxgrad's error no worse than torch's own, within that
tolerance). Where x is NaN and n >= 2, torch's recurrence returns an uninitialized value (its
loop stops before its first step): those points are left out (jaxgrad returns NaN).
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

NAMES = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p"]

INF, NAN = float("inf"), float("nan")
XS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.25, 0.75, 0.3, -0.7, 0.999, -0.999, 1.0001, 1.5, -1.5,
      2.0, -3.0, 7.5, 1e-8, INF, -INF] + np.linspace(-1.1, 1.1, 23).tolist()
NS = [-3, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 20, 31]
N_TRUNCATED = [2.7, 6.9, 8.5, -0.5, -1.5, NAN, INF, -INF, 1e20, -1e20]
EPS = {"float32": float(np.finfo(np.float32).eps), "float64": float(np.finfo(np.float64).eps)}


def _fn(T, name):
    return getattr(T.special, name)


def _grid(ns, xs=XS):
    x, n = np.meshgrid(np.asarray(xs, np.float64), np.asarray(ns, np.float64))
    return x.ravel(), n.ravel()


def _compare(name, x, n, dtype, scale=16.0):
    """jaxgrad's values against torch's in ``dtype``, to ``scale (|n| + 1) eps max(|P|, 1)``."""
    tdtype, jdtype = getattr(torch, dtype), getattr(jaxgrad, dtype)
    expected = _fn(torch, name)(torch.tensor(x, dtype=tdtype), torch.tensor(n, dtype=tdtype))
    got = _fn(jaxgrad, name)(jaxgrad.tensor(x, dtype=jdtype), jaxgrad.tensor(n, dtype=jdtype))
    assert got.dtype == jdtype and not got.requires_grad
    expected, got = expected.numpy(), np.asarray(got._value)
    degree = np.where(np.isfinite(n), np.abs(n), 0)
    atol = scale * (np.minimum(degree, 1e6) + 1) * EPS[dtype] * np.maximum(np.abs(expected), 1)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(expected))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(expected))
    finite = np.isfinite(expected)
    error = np.abs(got[finite] - expected[finite])
    assert np.all(error <= atol[finite]), np.max(error / atol[finite])
    return got


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_values_on_a_grid_of_x_and_n(name, dtype):
    x, n = _grid(NS)
    _compare(name, x, n, dtype)
    nan_x, ns = _grid([-1, 0, 1], [NAN])  # (n >= 2 at NaN: torch's value is uninitialized)
    _compare(name, nan_x, ns, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_n_is_truncated_to_an_integer_like_atens_cast(name, dtype):
    x, n = _grid(N_TRUNCATED, [0.0, 0.3, -0.6, 1.0, -1.0, 2.0])
    _compare(name, x, n, dtype)


@pytest.mark.parametrize("name", NAMES)
def test_large_degrees_judged_against_float64(name):
    """Closed forms, overflowing recurrences and the Hermite limits (128 in float32, 512 in
    float64): float64 against torch's float64; float32 no further from torch's float64 than
    torch's float32 is (within the closed forms' tolerance)."""
    x, n = _grid([50, 100, 127, 128, 129, 200, 511, 512, 513, 1000],
                 [0.3, -0.7, 0.999, 0.05, 0.5, 0.95, 1.0, -1.0, 1.01, -2.0, 0.0])
    _compare(name, x, n, "float64")
    got = _compare(name, x, n, "float32")
    reference = _fn(torch, name)(torch.tensor(x), torch.tensor(n)).numpy()
    theirs = _fn(torch, name)(torch.tensor(x, dtype=torch.float32),
                              torch.tensor(n, dtype=torch.float32)).numpy()
    finite = np.isfinite(theirs) & np.isfinite(reference) & np.isfinite(got)
    got, theirs, reference, n = got[finite], theirs[finite], reference[finite], n[finite]
    slack = 16 * (n + 1) * EPS["float32"] * np.maximum(np.abs(reference), 1)
    assert np.all(np.abs(got - reference) <= np.abs(theirs - reference) + slack)


@pytest.mark.parametrize("name", NAMES)
def test_overloads_promotion_and_broadcasting(name):
    def program(T):
        f = _fn(T, name)
        x = T.tensor([[-0.5], [0.25], [1.0]])
        n = T.tensor([0, 1, 3, 9])
        return (f(x, n), f(x, 3), f(x, 3.9), f(x, -2), f(x, True), f(0.5, n), f(2, n),
                f(True, n), f(-1.0, n), f(x.double(), n), f(x, n.double()),
                f(T.tensor(0.5, dtype=T.float64), n.float()), f(x, T.tensor(4)),
                f(T.tensor([1, 2]), T.tensor([2, 3])), f(T.tensor([1, 2]), 2.0),
                f(T.tensor([True, False]), 2), f(x.double(), 2.5), f(x, n.to(T.int32)),
                f(T.tensor([1, 2], dtype=T.uint8), n.reshape(4, 1)))

    ok(program, rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_non_differentiable_like_torch(name):
    def program(T):
        f = _fn(T, name)
        x = T.tensor([0.3, -0.6, 2.0], dtype=T.float64, requires_grad=True)
        n = T.tensor([2.0, 3.0, 5.0], dtype=T.float64, requires_grad=True)
        y, z, w = f(x, n), f(x, 4), f(0.5, n)
        out = T.empty(3, dtype=T.float64)
        leaf_out = T.empty(3, dtype=T.float64, requires_grad=True)
        fw = T.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(T.tensor([0.5]), T.tensor([1.0]))
            tangent = fw.unpack_dual(f(d, 3)).tangent
        return (y, z, w, attempt(lambda: y.sum().backward()),
                attempt(lambda: w.sum().backward()), f(x, n, out=out), out,
                attempt(lambda: f(x.detach(), 2, out=leaf_out)), leaf_out, tangent,
                T.func.grad(lambda t: (f(t, 3) + t).sum())(x.detach()))

    ok(program)


@pytest.mark.parametrize("name", NAMES)
def test_out_refused_dtypes_and_argument_errors(name):
    def program(T):
        f = _fn(T, name)
        x = T.tensor([0.5, 1.5])
        wide = T.empty(0, dtype=T.float64)
        return (f(x, 3, out=wide), wide, f(0.5, T.tensor([2, 3]), out=T.empty(2)),
                attempt(lambda: f(x.double(), 2, out=T.empty(2, dtype=T.int64))),
                attempt(lambda: f(x, 2, out=3)),
                attempt(lambda: f(1, 2)), attempt(lambda: f(0.5, 2)),
                attempt(lambda: f(x.half(), 2)), attempt(lambda: f(x.bfloat16(), T.tensor([2]))),
                f(x, T.tensor([2, 3]).half()), attempt(lambda: f(x.to(T.complex64), 2)),
                attempt(lambda: f(x, 2 + 1j)), attempt(lambda: f(T.ones(2), T.ones(3))),
                f(x=x, n=T.tensor([2.0])), f.__name__)

    same(program)


@pytest.mark.parametrize("name", NAMES)
def test_under_jax_jit_and_vmap_with_traced_degrees(name):
    """The recurrence runs to each element's own n inside one ``while_loop``: jit with n
    traced, vmap over rows, and a number n, all give the eager (torch-matching) values."""
    x = jaxgrad.tensor([[-0.5, 0.3, 1.0, 2.0], [0.999, -1.0, 0.0, -0.2]], dtype=jaxgrad.float64)
    n = jaxgrad.tensor([[0.0, 3.0, 9.0, 25.0], [40.0, 7.0, 2.0, -1.0]], dtype=jaxgrad.float64)
    f = _fn(jaxgrad, name)
    eager = np.asarray(f(x, n)._value)
    expected = _fn(torch, name)(torch.tensor(np.asarray(x._value)),
                                torch.tensor(np.asarray(n._value))).numpy()
    np.testing.assert_allclose(eager, expected, rtol=1e-12, atol=1e-12)
    for transformed in (jax.jit(f), jax.vmap(f), jax.jit(jax.vmap(f))):
        got = transformed(x, n)
        assert not got.requires_grad
        np.testing.assert_allclose(np.asarray(got._value), eager, rtol=1e-14)
    with_number = jax.jit(lambda t: f(t, 9))(x)
    np.testing.assert_allclose(np.asarray(with_number._value),
                               _fn(torch, name)(torch.tensor(np.asarray(x._value)), 9).numpy(),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
@FAST
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3,
                                                max_side=3),
       seed=st.integers(0, 2**31 - 1), dtype=st.sampled_from(["float32", "float64"]))
def test_random_broadcast_shapes_and_values_vs_torch(name, shapes, seed, dtype):
    rs = np.random.RandomState(seed)
    x_shape, n_shape = shapes.input_shapes
    x = rs.choice([rs.uniform(-1.2, 1.2), 1.0, -1.0, 0.0, 0.5], x_shape)
    x = np.where(rs.uniform(size=x_shape) < 0.7, rs.uniform(-1.3, 1.3, x_shape), x)
    n = np.floor(rs.uniform(-2, 40, n_shape)) + rs.choice([0.0, 0.5], n_shape)
    got = _fn(jaxgrad, name)(jaxgrad.tensor(x, dtype=getattr(jaxgrad, dtype)),
                             jaxgrad.tensor(n, dtype=getattr(jaxgrad, dtype)))
    assert tuple(got.shape) == shapes.result_shape
    xb, nb = np.broadcast_arrays(x, n)
    _compare(name, xb.ravel(), nb.ravel(), dtype)
