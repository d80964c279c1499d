"""torch's ``_foreach_*`` ops as rows made from the per-tensor rows.

``_foreach_exp([a, b])`` is ``exp`` applied to each tensor, recorded as one node
(``ForeachExpBackward0``) whose outputs are the results and whose inputs are every tensor of
every list (``self0, self1, ..., other0, other1, ...``). :func:`foreach_row` builds that row from
the per-tensor row: its forward runs the per-tensor forward on each group, and the formula for
input ``self1`` is the per-tensor formula for ``self`` with its names moved to group 1
(``result`` -> ``result1``, ``grad`` -> the gradient of output 1). So the foreach node saves
exactly what the per-tensor nodes would (exp its results, mul the other operand), and its
gradients are theirs.

Each group computes in its own dtype (torch runs the per-tensor op on each pair), handed to the
forward as the static ``compute`` (one numpy dtype, or None, per group).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import jax.numpy as jnp

from .._core.caches import cache
from ._table import Op, _params


def _group_name(name: str, base: Op, i: int) -> str:
    """The name, in the foreach row, of the per-tensor row's ``name`` for group ``i``."""
    if name in ("grad", "grads"):
        return "grads"
    if name in base.outputs:
        return f"result{i}"
    if name in base.inputs or name in base.aux:
        return f"{name}{i}"
    for suffix in ("_shape", "_dtype"):
        if name.endswith(suffix) and name[: -len(suffix)] in base.inputs:
            return f"{name[: -len(suffix)]}{i}{suffix}"
    return name  # a static argument, shared by every group


def _keyword_only(names: list[str]) -> inspect.Signature:
    return inspect.Signature([inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY)
                              for n in dict.fromkeys(names)])


def _group_formula(base: Op, formula: Callable, i: int) -> Callable:
    """``formula`` (a per-tensor backward formula) reading group ``i``'s values."""
    params = _params(formula)
    renamed = {p: _group_name(p, base, i) for p in params}

    def grouped(**env):
        kwargs = {}
        for p in params:
            value = env[renamed[p]]
            kwargs[p] = value[i] if p == "grad" else (value[i],) if p == "grads" else value
        return formula(**kwargs)

    grouped.__signature__ = _keyword_only(list(renamed.values()))
    return grouped


def _group_forward(base: Op, n: int) -> Callable:
    k, a = len(base.inputs), len(base.aux)
    static = list(base.static_names())

    def forward(*arrays, compute, **kwargs):
        inputs, aux = arrays[:k * n], arrays[k * n:]
        results = []
        for i in range(n):
            group = [inputs[j * n + i] for j in range(k)] + [aux[j * n + i] for j in range(a)]
            if compute[i] is not None:
                group = [g if g is None else g.astype(compute[i]) for g in group]
            results.append(base.forward(*group, **kwargs))
        return tuple(results)

    positional = [f"{x}{i}" for x in (*base.inputs, *base.aux) for i in range(n)]
    forward.__signature__ = inspect.Signature(
        [inspect.Parameter(p, inspect.Parameter.POSITIONAL_ONLY) for p in positional]
        + [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY) for p in ["compute", *static]])
    return forward


@cache(maxsize=1024)
def foreach_row(base: Op, node: str, n: int) -> Op:
    """The row of a foreach op over ``n`` groups, each computed by the per-tensor row ``base``,
    recorded under torch's node name ``node``.

    >>> from jaxgrad._ops import elementwise as E
    >>> from jaxgrad._ops.foreach import foreach_row
    >>> row = foreach_row(E.MUL, "ForeachMulBackward0List", 2)
    >>> row.inputs, row.outputs, row.saved_names((True, True, False, False))
    (('self0', 'self1', 'other0', 'other1'), ('result0', 'result1'), ('other0', 'other1'))
    """
    if base.inputs is None or base.outputs != ("result",):
        raise TypeError(f"{base}: a foreach row needs named inputs and one output")
    grads = {f"{x}{i}": _group_formula(base, base.grads[x], i)
             for x in base.inputs if x in base.grads for i in range(n)}
    return Op(f"_foreach_{base.name}", node, _group_forward(base, n),
              inputs=tuple(f"{x}{i}" for x in base.inputs for i in range(n)),
              aux=tuple(f"{a}{i}" for a in base.aux for i in range(n)),
              outputs=tuple(f"result{i}" for i in range(n)), grads=grads,
              saves=tuple(f"{s}{i}" for s in base.extra_saves for i in range(n)))


def _not_implemented(name: str):
    def formula(grad):
        raise RuntimeError(f"derivative for {name} is not implemented")
    return formula


# ``_foreach_maximum_(tensors, 2.0)``: torch records its NotImplemented node on each tensor
MAXIMUM_SCALAR_INPLACE = Op("maximum", "NotImplemented", lambda x, other: jnp.maximum(x, other),
                            aux=("other",), promote="common",
                            grads={"self": _not_implemented("_foreach_maximum_")})
MINIMUM_SCALAR_INPLACE = Op("minimum", "NotImplemented", lambda x, other: jnp.minimum(x, other),
                            aux=("other",), promote="common",
                            grads={"self": _not_implemented("_foreach_minimum_")})

# ``_foreach_copy_``: torch records its NotImplemented node on each written tensor
COPY_NOT_IMPLEMENTED = Op(
    "copy", "NotImplemented", lambda x, src: jnp.broadcast_to(src, x.shape).astype(x.dtype),
    inputs=("self", "src"), grads={"self": _not_implemented("_foreach_copy_"),
                                   "src": _not_implemented("_foreach_copy_")})
