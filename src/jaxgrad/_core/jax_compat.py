"""JAX functions that work on explicitly 64-bit arrays whether or not ``jax_enable_x64`` is on.

jaxgrad does not enable JAX's global x64 mode (see ``jax_setup``); it asks for ``float64``/
``int64`` explicitly. A few JAX library functions build internal constants with JAX's default
dtypes and then fail on such arrays when x64 is off (``jnp.argmax`` of float64, ``jnp.max`` of
int64, ``jnp.roll``). jaxgrad's own kernels run with x64 enabled locally (``jax_setup.jit``),
where these work; inside a user's own ``jax.jit`` with x64 off they do not, so the core ops use
these replacements, which compute the same results with every constant's dtype stated. They
sit at the bottom layer: they import only jax and numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
from jax import lax
from jax._src.interpreters import partial_eval as _pe  # (dce_jaxpr; not public)
from jax.extend.core import Literal

from .jax_setup import x64_scope

Axis = int | Sequence[int] | None


def _axes(x: jax.Array, axis: Axis) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(x.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a % max(x.ndim, 1) for a in axes)


def _keep(result: jax.Array, x: jax.Array, axes: tuple[int, ...], keepdims: bool) -> jax.Array:
    if not keepdims:
        return result
    return result.reshape(tuple(1 if i in axes else n for i, n in enumerate(x.shape)))


def amax(x: jax.Array, axis: Axis = None, keepdims: bool = False) -> jax.Array:
    """``jnp.max`` (NaN propagates) for any dtype, 64-bit integers included."""
    axes = _axes(x, axis)
    return _keep(lax.reduce_max(x, axes), x, axes, keepdims)


def amin(x: jax.Array, axis: Axis = None, keepdims: bool = False) -> jax.Array:
    """``jnp.min`` (NaN propagates) for any dtype, 64-bit integers included."""
    axes = _axes(x, axis)
    return _keep(lax.reduce_min(x, axes), x, axes, keepdims)


def _arg_extreme(x: jax.Array, axis: int | None, keepdims: bool, largest: bool,
                 index_dtype) -> jax.Array:
    """The first index holding the extreme value (NaN counts as the extreme), computed with
    two plain reductions so that no 64-bit constant is needed."""
    if axis is None:
        flat = _arg_extreme(x.reshape(-1), 0, False, largest, index_dtype)
        return flat.reshape((1,) * x.ndim) if keepdims else flat
    if x.ndim == 0:
        return jnp.zeros((), index_dtype)
    axis = axis % x.ndim
    best = (amax if largest else amin)(x, axis, keepdims=True)
    hit = x == best
    if jnp.issubdtype(x.dtype, jnp.inexact):
        hit = hit | ((x != x) & (best != best))
    index = lax.broadcasted_iota(jnp.int32, x.shape, axis)
    size = jnp.asarray(x.shape[axis], jnp.int32)
    first = amin(jnp.where(hit, index, size), axis, keepdims)
    return first.astype(index_dtype)


def argmax(x: jax.Array, axis: int | None = None, keepdims: bool = False,
           index_dtype=jnp.int64) -> jax.Array:
    """``jnp.argmax``: the first index of the largest value (NaN is largest)."""
    return _arg_extreme(x, axis, keepdims, True, index_dtype)


def argmin(x: jax.Array, axis: int | None = None, keepdims: bool = False,
           index_dtype=jnp.int64) -> jax.Array:
    """``jnp.argmin``: the first index of the smallest value (NaN is smallest)."""
    return _arg_extreme(x, axis, keepdims, False, index_dtype)


def roll(x: jax.Array, shifts: int | Sequence[int], axes: int | Sequence[int]) -> jax.Array:
    """``jnp.roll`` with static shifts along the given axes."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    for shift, axis in zip(shifts, axes):
        size = x.shape[axis]
        if size == 0 or shift % size == 0:
            continue
        cut = size - shift % size
        x = lax.concatenate([lax.slice_in_dim(x, cut, size, axis=axis),
                             lax.slice_in_dim(x, 0, cut, axis=axis)], axis % x.ndim)
    return x


def conj_complex(a):
    """``jnp.conj`` of a complex array; anything else (a real array, None, an index tuple) as
    it is."""
    dtype = getattr(a, "dtype", None)
    return jnp.conj(a) if dtype is not None and jnp.issubdtype(dtype, jnp.complexfloating) else a


def torch_vjp(fn, *primals, has_aux: bool = False):
    """``jax.vjp`` whose pullback is torch's: torch's gradients are conjugate Wirtinger
    derivatives (a holomorphic op's VJP multiplies by the conjugate derivative, JAX's by the
    derivative), so the cotangents and the results are conjugated (a no-op on reals). The pullback
    runs in jaxgrad's 64-bit scope, as its kernels do.

    >>> import jax.numpy as jnp
    >>> from jaxgrad._core.jax_compat import torch_vjp
    >>> _, pullback = torch_vjp(lambda z: z * (2 + 3j), jnp.array(1 + 1j))
    >>> pullback(jnp.array(1 + 0j))
    (Array(2.-3.j, dtype=complex64, weak_type=True),)
    """
    result = jax.vjp(fn, *primals, has_aux=has_aux)
    pullback = result[1]

    def torch_pullback(cotangents):
        conj = lambda tree: jax.tree_util.tree_map(conj_complex, tree)
        with x64_scope():  # the transposition builds constants (a slice's pad value): 64-bit
            return conj(pullback(conj(cotangents)))

    return (result[0], torch_pullback, *result[2:])





def how_inputs_are_read(closed_jaxpr) -> list[str]:
    """Per input of ``closed_jaxpr`` (dead code aside): ``"value"`` where it reaches an output
    along a chain of floating (or complex) values, ``"mask"`` where it is read but reaches none
    that way, ``"unread"`` where only its shape is used. torch's ``requires_grad`` spreads
    through every op with a floating result (``sign`` and ``floor`` too) but not through a
    comparison's bools or an index's integers. An equation with inner programs is one op.

    >>> import jax
    >>> from jaxgrad._core.jax_compat import how_inputs_are_read
    >>> closed = jax.make_jaxpr(lambda g, x, y, z: (g * (x > 0), g * jax.numpy.sign(y) + 0 * z))(
    ...     1., 2., 3., 4.)
    >>> how_inputs_are_read(closed)
    ['value', 'mask', 'value', 'value']
    >>> how_inputs_are_read(jax.make_jaxpr(lambda g, x: g * jax.numpy.ones_like(x))(1., 2.))
    ['value', 'unread']
    """
    jaxpr, read_inputs = _pe.dce_jaxpr(closed_jaxpr.jaxpr, [True] * len(closed_jaxpr.out_avals))
    outputs = {v for v in jaxpr.outvars if not isinstance(v, Literal)}

    def floating(v) -> bool:
        return jnp.issubdtype(v.aval.dtype, jnp.inexact)

    live = iter(jaxpr.invars)  # (the inputs the program reads)
    result = []
    for read in read_inputs:
        if not read:
            result.append("unread")
            continue
        reached = {next(live)}
        for eqn in jaxpr.eqns:
            if any(not isinstance(v, Literal) and v in reached for v in eqn.invars):
                reached.update(v for v in eqn.outvars if floating(v))
        result.append("value" if reached & outputs else "mask")
    return result


def input_readers(closed_jaxpr, transparent: Callable) -> list[tuple | None]:
    """Per input of ``closed_jaxpr`` (dead code aside): how the program reads it, as
    ``(primitive name, operand position)`` pairs, one per read; a read by an equation for which
    ``transparent(eqn, position)`` holds counts as its result's reads instead (an ``add``: the
    gradient of its result is the input's). None where a transparent chain reaches an output or
    an input is unread.

    >>> import jax
    >>> from jaxgrad._core.jax_compat import input_readers
    >>> closed = jax.make_jaxpr(lambda g, x: (g + 1.0) * jax.numpy.sin(x))(1.0, 2.0)
    >>> input_readers(closed, lambda eqn, position: eqn.primitive.name == "add")
    [(('mul', 0),), (('sin', 0),)]
    """
    jaxpr, read_inputs = _pe.dce_jaxpr(closed_jaxpr.jaxpr, [True] * len(closed_jaxpr.out_avals))
    outputs = {v for v in jaxpr.outvars if not isinstance(v, Literal)}
    readers: dict = {}
    for eqn in jaxpr.eqns:
        for position, v in enumerate(eqn.invars):
            if not isinstance(v, Literal):
                readers.setdefault(v, []).append((eqn, position))

    def reads(v) -> tuple | None:
        if v in outputs:
            return None
        found: list = []
        for eqn, position in readers.get(v, ()):
            if transparent(eqn, position):
                inner = reads(eqn.outvars[0])
                if inner is None:
                    return None
                found.extend(inner)
            else:
                found.append((eqn.primitive.name, position))
        return tuple(found) or None

    live = iter(jaxpr.invars)
    return [reads(next(live)) if read else None for read in read_inputs]
