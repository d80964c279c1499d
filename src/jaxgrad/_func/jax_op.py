"""``jax_op``: any JAX function of arrays as a differentiable jaxgrad op.

The function becomes an op-table row (``_ops._table.Op``) made for one call signature and run
through the one choke point, ``dispatch``, like every built-in op: its forward is one jitted
call, its node is ``<CamelName>Backward`` (as torch names a custom ``Function``'s node) and
saves every input with its version, its backward is the row's formula ``jax.vjp`` of the
function, jitted and cached per signature, and under ``create_graph=True`` that backward runs as
an op whose own backward is ``jax.vjp`` of it, to any order.

How an argument reaches the function (leaves of the ``args``/``kwargs`` pytrees):

- a ``Tensor``: a traced operand and a differentiable input (it gets a gradient when it
  requires grad and has a floating or complex dtype);
- a ``jax.Array``, numpy array or Python number: a traced operand, not differentiated (as
  ``jax.jit`` traces them);
- anything else (strings, ``None``, callables), and every leaf of an argument named in
  ``static_argnums``/``static_argnames``: static, part of the cache key (must be hashable).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core.caches import cache
from .._core.tensor import Tensor
from .._engine import dispatch as _dispatch
from .._engine import profiling as _profiler
from .._ops._table import Op

_TRACED = (jax.Array, np.ndarray, np.generic, bool, int, float, complex)
_TENSOR, _ARRAY, _STATIC = 0, 1, 2


def jax_op(fn: Callable | None = None, *, name: str | None = None,
           static_argnums: int | tuple[int, ...] = (),
           static_argnames: str | tuple[str, ...] = ()) -> Callable:
    """Make a JAX function of arrays a differentiable jaxgrad op (also a decorator).

    Tensors anywhere in the arguments' pytrees are the op's differentiable inputs; the result
    (a pytree of arrays) comes back as the same pytree of tensors, all outputs of one node
    called ``<CamelCaseName>Backward`` (``name`` overrides the function's name). The backward is
    ``jax.vjp`` of ``fn``, so a ``jax.custom_vjp`` inside it is respected; ``create_graph=True``
    works to any order. JAX arrays and Python numbers are traced but not differentiated; other
    leaves, and the arguments named by ``static_argnums``/``static_argnames``, are static.

    >>> import jax.numpy as jnp, jaxgrad
    >>> @jaxgrad.jax_op
    ... def scaled_sin(x, scale):
    ...     return jnp.sin(x) * scale
    >>> x = jaxgrad.tensor([0.0, 1.0], requires_grad=True)
    >>> y = scaled_sin(x, 2.0)
    >>> type(y.grad_fn).__name__
    'ScaledSinBackward'
    >>> y.sum().backward()
    >>> x.grad
    tensor([2.0000, 1.0806])
    """
    if fn is None:
        return functools.partial(jax_op, name=name, static_argnums=static_argnums,
                                 static_argnames=static_argnames)
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    node = _camel(name or _name_of(fn)) + "Backward"

    @functools.wraps(fn)
    def op(*args: Any, **kwargs: Any) -> Any:
        return _call(fn, node, nums, names, args, kwargs)

    return op


def _name_of(fn: Callable) -> str:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return getattr(fn, "__name__", None) or type(fn).__name__


def _camel(name: str) -> str:
    """``rnn_cell`` -> ``RnnCell`` (as a torch Function class would be called)."""
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[^0-9A-Za-z]+", name)) or "JaxOp"


def _is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


def _call(fn: Callable, node: str, nums: tuple, names: tuple, args: tuple,
          kwargs: dict) -> Any:
    static_args = tuple((i, args[i]) for i in nums if i < len(args))
    static_kwargs = tuple((k, kwargs[k]) for k in names if k in kwargs)
    args = tuple(None if i in nums else a for i, a in enumerate(args))
    kwargs = {k: None if k in names else v for k, v in kwargs.items()}
    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_tensor)
    kinds, operands, statics, meta = [], [], [], []
    for leaf in leaves:
        if isinstance(leaf, Tensor):
            kinds.append(_TENSOR)
            operands.append(leaf)
            value = leaf._value
            meta.append((value.shape, value.dtype))
        elif isinstance(leaf, _TRACED):
            kinds.append(_ARRAY)
            operands.append(leaf)
            meta.append((np.shape(leaf), getattr(leaf, "dtype", type(leaf))))
        else:
            kinds.append(_STATIC)
            statics.append(leaf)
    statics = tuple(statics)
    key = (fn, node, treedef, tuple(kinds), statics, static_args, static_kwargs,
           _types((statics, static_args, static_kwargs)), tuple(meta))
    try:
        row = _row(*key)
    except TypeError as exc:
        if "unhashable" not in str(exc):
            raise
        raise ValueError(f"jax_op({_name_of(fn)}): static arguments must be hashable (pass "
                         f"arrays as Tensors or JAX arrays): {exc}") from None
    op, out_tree = row
    if _profiler.active:  # one range named as torch names a Function's (no aten:: range: the
        # forward is one XLA call)
        results = _profiler.record_op(node[: -len("Backward")], tuple(operands),
                                      lambda: _dispatch._apply(op, tuple(operands), (), {}))
    else:
        results = _dispatch.apply(op, *operands)
    return jax.tree_util.tree_unflatten(out_tree[0], results)


@cache(maxsize=1024)
def _row(fn: Callable, node: str, treedef: Any, kinds: tuple, statics: tuple,
         static_args: tuple, static_kwargs: tuple, types: tuple,
         meta: tuple) -> tuple[Op, list]:
    """The op row for one call signature of ``fn`` (``types``: the static values' types, which
    the key needs: ``1``, ``1.0`` and ``True`` are equal), and a cell that its first trace fills
    with the output's tree structure."""
    out_tree: list = [None]

    def forward(*operands: Any) -> tuple:
        it, st = iter(operands), iter(statics)
        leaves = [next(st) if k == _STATIC else next(it) for k in kinds]
        args, kwargs = jax.tree_util.tree_unflatten(treedef, leaves)
        args = list(args)
        for i, v in static_args:
            args[i] = v
        out = fn(*args, **dict(kwargs, **dict(static_kwargs)))
        flat, out_tree[0] = jax.tree_util.tree_flatten(out)
        return tuple(jnp.asarray(o) for o in flat)

    tensors = [i for i, k in enumerate(k for k in kinds if k != _STATIC) if k == _TENSOR]
    diff = tuple(i for i in tensors if _inexact(meta[i][1]))

    def pullback(inputs: tuple, grads: tuple) -> tuple:
        """torch's VJP of ``forward`` for the inexact tensor inputs: ``conj`` of JAX's VJP of
        the conjugate cotangent (the two differ by a conjugate on complex values)."""
        def of_diff(*xs: Any) -> tuple:
            full = list(inputs)
            for i, x in zip(diff, xs):
                full[i] = x
            return tuple(o for o in forward(*full) if _inexact(o.dtype))

        outs, vjp = jax.vjp(of_diff, *[inputs[i] for i in diff])
        cts = tuple(jnp.conj(g).astype(o.dtype) for g, o in
                    zip((g for g in grads if _inexact(g.dtype)), outs))
        found = dict(zip(diff, (jnp.conj(c) for c in vjp(cts))))
        return tuple(found.get(i) for i in range(len(inputs)))

    op = Op(_name_of(fn), node, forward, inputs=None, variadic=pullback)
    return op, out_tree


def _types(value: Any) -> Any:
    return tuple(_types(v) for v in value) if type(value) is tuple else type(value)


def _inexact(dtype: Any) -> bool:
    return jnp.issubdtype(dtype, jnp.inexact)
