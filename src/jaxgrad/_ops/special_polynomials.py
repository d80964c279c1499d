"""``torch.special``'s orthogonal polynomials of ``x`` and degree ``n``: Chebyshev T, U, V, W
(and their shifted forms on [0, 1]), Hermite H and He, Laguerre L and Legendre P.

Each has torch's three overloads, one row each: ``(Tensor x, Tensor n)``, ``(Scalar x,
Tensor n)`` and ``(Tensor x, Scalar n)``; the operands compute in their promoted dtype
(integral and bool in the default float dtype; half, bfloat16 and complex refused), and
derivatives.yaml marks them non-differentiable. As ATen's kernels, ``n`` is truncated to an
integer in that dtype (NaN, +-inf and values past int64 become negative: the result is 0), and
each function takes the same branches: the values at ``|x| == 1`` (or ``x`` 0 and 1 for the
shifted forms), a closed trigonometric form for larger ``n`` inside the interval (``cos(n
acos x)`` for T when ``n > 6``), else the three-term recurrence, stopped early where it turns
NaN, and for Hermite NaN past degree 128 (float32) or 512 (float64).

The recurrence runs to a per-element degree: one ``while_loop`` over ``k``, each lane frozen
once ``k`` passes its own ``n`` (so it runs under ``jit``, ``vmap`` and traced degrees).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._table import Op
from ._table import example_doc as _doc
from .special_bessel import libm as _libm
from .special_bessel import non_differentiable

_INT64_LIMIT = 2.0 ** 63
_LOOP_LIMIT = 2 ** 31 - 2  # the int32 loop counter's last value


def _degree(n):
    """``n`` as ATen's ``static_cast<int64_t>``: truncated; NaN, inf and out-of-range
    values (x86's "integer indefinite", INT64_MIN) negative."""
    finite = jnp.isfinite(n) & (jnp.abs(n) < _INT64_LIMIT)
    return jnp.where(finite, jnp.trunc(jnp.where(finite, n, 0)), -jnp.ones_like(n))


def _operands(x, n):
    dtype = jnp.result_type(x, n)
    x, n = jnp.broadcast_arrays(jnp.asarray(x, dtype), jnp.asarray(n, dtype))
    return x, _degree(n)


def _acos(x):
    return _libm(jnp.arccos, x)


def _cos(x):
    return _libm(jnp.cos, x)


def _sin(x):
    return _libm(jnp.sin, x)


def _even(n):
    return jnp.fmod(n, 2) == 0


def _recurrence(p, q, step, last, stop_on_nan=True):
    """``q`` after ``p, q = q, step(k, p, q)`` for k = 2, 3, ... up to each lane's ``last``
    (a lane with ``last < 2`` keeps its ``q``), stopping a lane whose ``q`` is NaN."""
    last = jnp.clip(last, -1, _LOOP_LIMIT).astype(jnp.int32)

    def active(k, q):
        going = k <= last
        return going & ~jnp.isnan(q) if stop_on_nan else going

    def body(state):
        k, p, q = state
        r = step(k.astype(q.dtype), p, q)
        moving = active(k, q)
        return k + 1, jnp.where(moving, q, p), jnp.where(moving, r, q)

    state = (jnp.asarray(2, jnp.int32), p, q)
    return jax.lax.while_loop(lambda s: jnp.any(active(s[0], s[2])), body, state)[2]


def _select(*pairs, default):
    """``where(c0, v0, where(c1, v1, ... default))``: the first condition that holds wins."""
    out = default
    for condition, value in reversed(pairs):
        out = jnp.where(condition, value, out)
    return out


def _pm(condition, value):
    """``value`` where ``condition`` holds, else ``-value``."""
    return jnp.where(condition, value, -value)


def _chebyshev(x, n, y, edges, closed_from, closed, first):
    """The Chebyshev family in the variable ``y`` (``x``, or ``2x - 1`` when shifted): n < 0 is
    0, the ``edges`` (condition, value) come first, ``closed(a)`` (``a = acos y``) for
    ``n > closed_from`` inside (-1, 1), then n = 0, n = 1 (``first``) and the recurrence
    ``r = 2y q - p``."""
    one = jnp.ones_like(x)
    inside = jnp.abs(y) < 1
    use_closed = (n > closed_from) & inside
    angle = _acos(jnp.where(inside, y, jnp.zeros_like(y)))
    plain = ~(n < 0) & ~use_closed
    for condition, _ in edges:
        plain = plain & ~condition
    last = jnp.where(plain & (n >= 2), n, -one)
    recurrence = _recurrence(one, first, lambda k, p, q: (y + y) * q - p, last)
    return _select((n < 0, jnp.zeros_like(x)), *edges, (use_closed, closed(angle)),
                   (n == 0, one), (n == 1, first), default=recurrence)


def _chebyshev_t(x, n):
    x, n = _operands(x, n)
    one = jnp.ones_like(x)
    edges = [(jnp.abs(x) == 1, _pm((x > 0) | _even(n), one))]
    return _chebyshev(x, n, x, edges, 6, lambda a: _cos(n * a), x)


def _u_closed(n, y, a):
    """``sin((n + 1) a) / sin(a)``, or ``(n + 1) cos((n + 1) a) / y`` where ``sin(a)`` is 0."""
    s = _sin(a)
    safe = jnp.where(s != 0, s, jnp.ones_like(s))
    return jnp.where(s != 0, _sin((n + 1) * a) / safe, (n + 1) * _cos((n + 1) * a) / y)


def _v_closed(n, a, fallback):
    """``cos((n + 1/2) a) / cos(a / 2)``, or ``fallback`` where ``sin(a / 2)`` is 1."""
    c = _cos(a / 2)
    ok = _sin(a / 2) != 1
    return jnp.where(ok, _cos((n + 0.5) * a) / jnp.where(ok, c, jnp.ones_like(c)), fallback)


def _w_closed(n, a, fallback):
    """``sin((n + 1/2) a) / sin(a / 2)``, or ``fallback`` where ``cos(a / 2)`` is 1."""
    s = _sin(a / 2)
    ok = _cos(a / 2) != 1
    return jnp.where(ok, _sin((n + 0.5) * a) / jnp.where(ok, s, jnp.ones_like(s)), fallback)


def _chebyshev_u(x, n):
    x, n = _operands(x, n)
    edges = [(jnp.abs(x) == 1, _pm((x > 0) | _even(n), n + 1))]
    return _chebyshev(x, n, x, edges, 8, lambda a: _u_closed(n, x, a), x + x)


def _chebyshev_v(x, n):
    x, n = _operands(x, n)
    odd_sign = _pm(_even(n), n + n + 1)
    edges = [(jnp.abs(x) == 1, jnp.where(x > 0, jnp.ones_like(x), odd_sign))]
    return _chebyshev(x, n, x, edges, 8, lambda a: _v_closed(n, a, odd_sign), x + x - 1)


def _chebyshev_w(x, n):
    x, n = _operands(x, n)
    at_ends = jnp.where(x > 0, n + n + 1, _pm(_even(n), jnp.ones_like(x)))
    edges = [(jnp.abs(x) == 1, at_ends)]
    return _chebyshev(x, n, x, edges, 8, lambda a: _w_closed(n, a, at_ends), x + x + 1)


def _shifted(x):
    return x + x - 1


def _shifted_chebyshev_t(x, n):
    x, n = _operands(x, n)
    y = _shifted(x)
    one = jnp.ones_like(x)
    edges = [(x == 1, one), (x == 0, _pm(_even(n), one))]
    return _chebyshev(x, n, y, edges, 6, lambda a: _cos(n * a), y)


def _shifted_chebyshev_u(x, n):
    x, n = _operands(x, n)
    y = _shifted(x)
    edges = [(x == 1, n + 1), (x == 0, _pm(_even(n), n + 1))]
    return _chebyshev(x, n, y, edges, 6, lambda a: _u_closed(n, y, a), y + y)


def _shifted_chebyshev_v(x, n):
    x, n = _operands(x, n)
    y = _shifted(x)
    odd_sign = _pm(_even(n), n + n + 1)
    edges = [(x == 1, jnp.ones_like(x)), (x == 0, odd_sign)]
    return _chebyshev(x, n, y, edges, 6, lambda a: _v_closed(n, a, odd_sign), y + y - 1)


def _shifted_chebyshev_w(x, n):
    x, n = _operands(x, n)
    y = _shifted(x)
    parity = _pm(_even(n), jnp.ones_like(x))
    edges = [(x == 1, n + n + 1), (x == 0, parity)]
    return _chebyshev(x, n, y, edges, 4, lambda a: _w_closed(n, a, parity), y + y + 1)


def _hermite(x, n, first, step):
    """Hermite H or He: 0, 1, ``first``, NaN past the dtype's degree limit, else the
    recurrence (no NaN stop: ATen's loop has none)."""
    limit = 128 if x.dtype == jnp.float32 else 512
    one = jnp.ones_like(x)
    beyond = n > limit
    last = jnp.where((n >= 2) & ~beyond, n, -one)
    recurrence = _recurrence(one, first, step, last, stop_on_nan=False)
    return _select((n < 0, jnp.zeros_like(x)), (n == 0, one), (n == 1, first),
                   (beyond, jnp.full_like(x, jnp.nan)), default=recurrence)


def _hermite_h(x, n):
    x, n = _operands(x, n)
    # ATen's k runs 2, 4, ..., 2n - 2: at step k here it is 2k - 2
    return _hermite(x, n, x + x, lambda k, p, q: (x + x) * q - (k + k - 2) * p)


def _hermite_he(x, n):
    x, n = _operands(x, n)
    return _hermite(x, n, x, lambda k, p, q: x * q - (k - 1) * p)


def _laguerre_l(x, n):
    x, n = _operands(x, n)
    one = jnp.ones_like(x)
    first = 1 - x
    zero_x = jnp.abs(x) == 0
    last = jnp.where(~zero_x & (n >= 2), n, -one)

    def step(k, p, q):  # ATen's k is one less
        j = k - 1
        return ((j + j) + (1 - x)) * q - j * p

    recurrence = _recurrence(one, first, lambda k, p, q: step(k, p, q) / k, last)
    return _select((n < 0, jnp.zeros_like(x)), (zero_x, one), (n == 0, one), (n == 1, first),
                   default=recurrence)


def _legendre_p(x, n):
    x, n = _operands(x, n)
    one = jnp.ones_like(x)
    at_ends = jnp.abs(x) == 1
    last = jnp.where(~at_ends & (n >= 2), n, -one)

    def step(k, p, q):  # ATen's k is one less
        j = k - 1
        return ((j + j + 1) * x * q - j * p) / k

    recurrence = _recurrence(one, x, step, last)
    return _select((n < 0, jnp.zeros_like(x)), (at_ends, _pm((x > 0) | _even(n), one)),
                   (n == 0, one), (n == 1, x), default=recurrence)


# --- the rows ----------------------------------------------------------------------------------

class Overloads:
    """The three rows of one polynomial: ``tensor`` (Tensor x, Tensor n), ``scalar_x`` (Scalar
    x, Tensor n) and ``scalar_n`` (Tensor x, Scalar n)."""

    __slots__ = ("doc", "name", "scalar_n", "scalar_x", "tensor")

    def __init__(self, name: str, fn, summary: str, call: str, output: str) -> None:
        forward = non_differentiable(name, fn)
        self.name = f"special_{name}"
        self.doc = _doc(summary, call, output)
        self.tensor = Op(f"{self.name}(Tensor x, Tensor n) -> Tensor", None, forward,
                         promote="float", doc=self.doc)
        self.scalar_x = Op(self.name, None, lambda n, x: forward(x, n), inputs=("n",),
                           aux=("x",), promote="float")
        self.scalar_n = Op(self.name, None, forward, inputs=("x",), aux=("n",),
                           promote="float")


def _overloads(name, fn, summary, output):
    call = f"jaxgrad.special.{name}(jaxgrad.tensor([0.5, 2.0]), 3)"
    return Overloads(name, fn, summary, call, output)


CHEBYSHEV_POLYNOMIAL_T = _overloads(
    "chebyshev_polynomial_t", _chebyshev_t,
    "The Chebyshev polynomial of the first kind T_n(x) (``n`` truncated to an integer).",
    "tensor([-1., 26.])")
CHEBYSHEV_POLYNOMIAL_U = _overloads(
    "chebyshev_polynomial_u", _chebyshev_u,
    "The Chebyshev polynomial of the second kind U_n(x) (``n`` truncated to an integer).",
    "tensor([-1., 56.])")
CHEBYSHEV_POLYNOMIAL_V = _overloads(
    "chebyshev_polynomial_v", _chebyshev_v,
    "The Chebyshev polynomial of the third kind V_n(x) (``n`` truncated to an integer).",
    "tensor([-1., 41.])")
CHEBYSHEV_POLYNOMIAL_W = _overloads(
    "chebyshev_polynomial_w", _chebyshev_w,
    "The Chebyshev polynomial of the fourth kind W_n(x) (``n`` truncated to an integer).",
    "tensor([-1., 71.])")
SHIFTED_CHEBYSHEV_POLYNOMIAL_T = _overloads(
    "shifted_chebyshev_polynomial_t", _shifted_chebyshev_t,
    "The shifted Chebyshev polynomial of the first kind T_n(2x - 1).", "tensor([-0., 99.])")
SHIFTED_CHEBYSHEV_POLYNOMIAL_U = _overloads(
    "shifted_chebyshev_polynomial_u", _shifted_chebyshev_u,
    "The shifted Chebyshev polynomial of the second kind U_n(2x - 1).", "tensor([ -0., 204.])")
SHIFTED_CHEBYSHEV_POLYNOMIAL_V = _overloads(
    "shifted_chebyshev_polynomial_v", _shifted_chebyshev_v,
    "The shifted Chebyshev polynomial of the third kind V_n(2x - 1).", "tensor([  1., 169.])")
SHIFTED_CHEBYSHEV_POLYNOMIAL_W = _overloads(
    "shifted_chebyshev_polynomial_w", _shifted_chebyshev_w,
    "The shifted Chebyshev polynomial of the fourth kind W_n(2x - 1).", "tensor([ -1., 239.])")
HERMITE_POLYNOMIAL_H = _overloads(
    "hermite_polynomial_h", _hermite_h,
    "The physicists' Hermite polynomial H_n(x) (NaN past degree 128 in float32, 512 in "
    "float64).", "tensor([-5., 40.])")
HERMITE_POLYNOMIAL_HE = _overloads(
    "hermite_polynomial_he", _hermite_he,
    "The probabilists' Hermite polynomial He_n(x) (NaN past degree 128 in float32, 512 in "
    "float64).", "tensor([-1.3750,  2.0000])")
LAGUERRE_POLYNOMIAL_L = _overloads(
    "laguerre_polynomial_l", _laguerre_l,
    "The Laguerre polynomial L_n(x) (``n`` truncated to an integer).",
    "tensor([-0.1458, -0.3333])")
LEGENDRE_POLYNOMIAL_P = _overloads(
    "legendre_polynomial_p", _legendre_p,
    "The Legendre polynomial P_n(x) (``n`` truncated to an integer).",
    "tensor([-0.4375, 17.0000])")

POLYNOMIALS = (CHEBYSHEV_POLYNOMIAL_T, CHEBYSHEV_POLYNOMIAL_U, CHEBYSHEV_POLYNOMIAL_V,
               CHEBYSHEV_POLYNOMIAL_W, SHIFTED_CHEBYSHEV_POLYNOMIAL_T,
               SHIFTED_CHEBYSHEV_POLYNOMIAL_U, SHIFTED_CHEBYSHEV_POLYNOMIAL_V,
               SHIFTED_CHEBYSHEV_POLYNOMIAL_W, HERMITE_POLYNOMIAL_H, HERMITE_POLYNOMIAL_HE,
               LAGUERRE_POLYNOMIAL_L, LEGENDRE_POLYNOMIAL_P)
