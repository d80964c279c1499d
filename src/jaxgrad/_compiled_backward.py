"""Cached compiled backward: one XLA program per graph *structure*.

An eager training loop builds the same graph every step. When a graph carries nothing that
runs user Python during backward (no tensor/node hooks, no retain_grad, no post-accumulate
hooks) and consists of op-table nodes and leaf accumulators, we:

1. compute a structural key (each node's op, static args, shapes, dtypes, what it saved, its
   edges and its rank in torch's execution order; each leaf's shape/dtype and whether it has a
   ``.grad``);
2. on a miss, build a *shadow* copy of the graph whose saved tensors and leaf gradients are JAX
   tracers and run the ordinary engine (``_engine.execute``) over it under ``jax.jit``. The very
   same engine code decides order, buffer accumulation and steal-or-copy, so the compiled
   backward cannot drift from the eager one;
3. on a hit, call the cached program with the saved arrays and replay its effect on each leaf's
   ``.grad`` (new tensor, or an in-place update of the existing one, with torch's version count).

Anything ineligible, or any saved tensor whose version moved (so that the eager engine raises
torch's error at the right moment), falls back to the eager engine.
"""

from __future__ import annotations

from collections.abc import Callable

import jax

from ._dispatch import OpNode, SavedConstant
from ._grad_mode import no_grad
from ._graph import AccumulateGrad, GraphRoot, SavedTensor
from ._tensor import Tensor

_cache: dict[tuple, tuple[Callable, tuple]] = {}
MAX_NODES = 5000


def _plain(fn) -> bool:
    return not (fn._tensor_hooks or fn._retains or fn._pre_hooks or fn._post_hooks)


def _analyse(root_edges: tuple):
    """(key, nodes, leaves) for an eligible graph, else None."""
    index: dict = {}
    nodes: list = []
    stack = [e[0] for e in reversed(root_edges) if e is not None]
    while stack:
        fn = stack.pop()
        if fn in index:
            continue
        index[fn] = len(nodes)
        nodes.append(fn)
        if len(nodes) > MAX_NODES or not _plain(fn):
            return None
        if isinstance(fn, AccumulateGrad):
            var = fn.variable
            if var._backward_hooks or var._post_acc_hooks:
                return None
            continue
        if not isinstance(fn, OpNode) or fn.saved is None:
            return None
        stack.extend(e[0] for e in reversed(fn.next_edges) if e is not None and e[0] not in index)
    order = sorted(range(len(nodes)), key=lambda i: nodes[i].seq)
    rank = {i: r for r, i in enumerate(order)}
    parts = []
    leaves = []
    for i, fn in enumerate(nodes):
        if isinstance(fn, AccumulateGrad):
            var = fn.variable
            grad = var._grad
            leaves.append(i)
            parts.append(("leaf", var._value.shape, var._value.dtype,
                          None if grad is None else (grad._value.shape, grad._value.dtype)))
            continue
        edges = tuple(None if e is None else (index[e[0]], e[1]) for e in fn.next_edges)
        saved = tuple((k, type(v)) for k, v in fn.saved.items())
        parts.append((fn.op, fn.static, fn.needs, fn.in_meta, fn.out_meta, saved, edges,
                      rank[i]))
    return tuple(parts), nodes, leaves


def _saved_values(nodes: list) -> list:
    values = []
    for fn in nodes:
        if isinstance(fn, OpNode):
            for s in fn.saved.values():
                values.append(s._value if isinstance(s, SavedConstant) else s.tensor._value)
    return values


def _versions_ok(nodes: list) -> bool:
    for fn in nodes:
        if isinstance(fn, OpNode):
            for s in fn.saved.values():
                if isinstance(s, SavedTensor) and s.tensor._vc.value != s.version:
                    return False
    return True


def _build(parts: tuple, root_slots: tuple) -> tuple[Callable, list]:
    """Trace the engine over a shadow graph built from ``parts``; returns (jitted fn, effects)."""
    from ._engine import execute

    effects: list = []

    def run(saved_values, root_arrays, old_grads):
        it = iter(saved_values)
        grads_it = iter(old_grads)
        shadow: list = [None] * len(parts)
        leaves = []
        # create every node first, then wire the edges (the graph is a DAG)
        for i, part in enumerate(parts):
            if part[0] == "leaf":
                _, shape, dtype, grad_meta = part
                var = Tensor._make(jax.numpy.zeros(shape, dtype), requires_grad=True)
                if grad_meta is not None:
                    var._grad = Tensor._make(next(grads_it))
                shadow[i] = AccumulateGrad(var)
                leaves.append((i, var, grad_meta))
            else:
                op, static, needs, in_meta, out_meta, saved, _, rank = part
                node = op.node_class((), out_meta, seq=rank)
                node.op, node.static, node.needs, node.in_meta = op, static, needs, in_meta
                node.saved = {
                    name: SavedConstant(next(it)) if kind is SavedConstant
                    else SavedTensor(Tensor._make(next(it)), None, 0)
                    for name, kind in saved}
                shadow[i] = node
        for i, part in enumerate(parts):
            if part[0] != "leaf":
                shadow[i].next_edges = tuple(
                    None if e is None else (shadow[e[0]], e[1]) for e in part[6])
        root_edges = tuple((shadow[i], slot) for i, slot in root_slots)
        roots = [Tensor._make(a) for a in root_arrays]
        with no_grad():
            execute(GraphRoot(root_edges, roots), True, False)
        effects.clear()
        outs = []
        for i, var, grad_meta in leaves:
            grad = var._grad  # shadow .grad: fresh tensors start at version 0
            effects.append((i, grad_meta is None, None if grad is None else grad._vc.value))
            outs.append(None if grad is None else grad._value)
        return outs

    return jax.jit(run), effects


def try_backward(root_edges: tuple, root_grads: list, keep_graph: bool) -> bool:
    """Run the backward as one cached XLA program if the graph allows; False to fall back."""
    if any(g is None for g in root_grads):
        return False
    analysis = _analyse(root_edges)
    if analysis is None:
        return False
    parts, nodes, leaves = analysis
    if not _versions_ok(nodes):
        return False
    index = {fn: i for i, fn in enumerate(nodes)}
    root_slots = tuple((index[e[0]], e[1]) for e in root_edges)
    key = (parts, root_slots, tuple((g._value.shape, g._value.dtype) for g in root_grads))
    entry = _cache.get(key)
    if entry is None:
        entry = _cache[key] = _build(parts, root_slots)
    program, effects = entry
    old = [nodes[i].variable._grad._value for i in leaves if nodes[i].variable._grad is not None]
    outs = program(_saved_values(nodes), [g._value for g in root_grads], old)
    for (i, was_none, version), array in zip(effects, outs):
        var = nodes[i].variable
        if was_none and version is not None:  # .grad created (stolen or copied)
            var._grad = Tensor._make(array)
            var._grad._vc.value = version
        elif not was_none and version:  # existing .grad updated in place `version` times
            var._grad._write(array)
            var._grad._vc.value += version
    if not keep_graph:
        for fn in nodes:
            fn.release_variables()
    return True
