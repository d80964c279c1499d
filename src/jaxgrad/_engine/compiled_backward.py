"""Cached compiled backward: one XLA program per graph *structure*.

An eager training loop builds the same graph every step. When a graph carries nothing that
runs user Python during backward (no tensor/node hooks, no retain_grad, no post-accumulate
hooks) and consists of op-table nodes and leaf accumulators, we:

1. compute a structural key (each node's op, static args, shapes, dtypes, what it saved, its
   edges and its rank in torch's execution order; each leaf's shape/dtype, its ``grad_dtype``
   and whether it has a ``.grad``);
2. on a miss, build a *shadow* copy of the graph whose saved tensors and leaf gradients are JAX
   tracers and run the ordinary engine over it under ``jax.jit`` (the engine hands its
   ``execute`` to ``try_backward``; this module does not import the engine). The very same
   engine code decides order, buffer accumulation and steal-or-copy, so the compiled backward
   cannot drift from the eager one;
3. on a hit, call the cached program with the saved arrays and replay its effect on each leaf's
   ``.grad`` (new tensor, or an in-place update of the existing one, with torch's version count).

Anything ineligible, or any saved tensor whose version moved (so that the eager engine raises
torch's error at the right moment), falls back to the eager engine.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import jax

from .._core.caches import Memo
from .._core.epoch import changed as structure_changed
from .._core.grad_mode import no_grad
from .._core.graph import AccumulateGrad, GraphRoot, SavedTensor
from .._core.jax_setup import jit
from .._core.placement import placed_like
from .._core.tensor import Tensor, dispatches_in_python
from .accumulate import with_strides
from .dispatch import OpNode, SavedConstant, node_class_for

# the engine's entry point: execute(root, keep_graph, create_graph) runs the graph below root
Execute = Callable[[GraphRoot, bool, bool], object]

_cache = Memo(maxsize=1024, kernels=True)  # structure -> (jitted backward, leaf slots)
MAX_NODES = 5000


def _analyse(root_edges: tuple):
    """(key, nodes, leaves, saved values) for an eligible graph, else None.

    One breadth-first walk numbers the nodes and describes each one; the key also holds the
    nodes' order by sequence number, which is what decides the engine's execution order.
    """
    index: dict = {}
    nodes: list = []
    for e in root_edges:
        if e[0] not in index:
            index[e[0]] = len(nodes)
            nodes.append(e[0])
    parts, leaves, values = [], [], []
    for i, fn in enumerate(nodes):  # the list grows while we walk it
        if fn._tensor_hooks or fn._retains or fn._pre_hooks or fn._post_hooks:
            return None
        if type(fn) is AccumulateGrad:
            var = fn.variable
            if var._grad_hooks or var._post_acc_hooks or (
                    dispatches_in_python(var)):
                return None  # (a __torch_dispatch__ subclass's backward dispatches: eager)
            grad = var._grad
            leaves.append(i)
            parts.append(("leaf", var._value.shape, var._value.dtype,
                          None if grad is None else (grad._value.shape, grad._value.dtype),
                          var.grad_dtype, var.stride()))
            continue
        saved = fn.saved if isinstance(fn, OpNode) else None
        if saved is None or len(nodes) > MAX_NODES or fn.op.backward_checks:
            return None
        kinds = []
        for s in saved.values():
            if type(s) is SavedConstant:
                values.append(s._value)
                kinds.append(SavedConstant)
            elif s.hooks is not None or s.tensor._vc.value != s.version or (
                    s.saved_original and not s.is_leaf and s.tensor._grad_node is None) or (
                    dispatches_in_python(s.tensor)):
                # unpack hooks are user Python; a moved version or a saved original detached in
                # place: let the eager engine raise torch's error at the right moment
                return None
            else:
                pending = s.tensor._pending_view()
                if pending is not None:  # a view not computed yet: computed inside
                    values.append(pending[1]._value)
                    kinds.append(pending[0])
                else:
                    values.append(s.tensor._value)
                    kinds.append(SavedTensor)
        edges = []
        for e in fn.next_edges:
            if e is None:
                edges.append(None)
                continue
            j = index.get(e[0])
            if j is None:
                j = index[e[0]] = len(nodes)
                nodes.append(e[0])
            edges.append((j, e[1]))
        parts.append((fn.op, fn.static, fn.needs, fn.in_meta, fn.out_meta, tuple(saved),
                      tuple(kinds), tuple(edges)))
    seqs = [fn.seq for fn in nodes]
    order = tuple(sorted(range(len(nodes)), key=seqs.__getitem__))
    return (tuple(parts), order), nodes, leaves, values


def _build(structure: tuple, root_slots: tuple, execute: Execute) -> tuple[Callable, list]:
    """Trace the engine (``execute``) over a shadow graph built from ``structure``;
    (jitted fn, effects)."""
    parts, order = structure
    rank = {i: r for r, i in enumerate(order)}
    effects: list = []

    def run(saved_values, root_arrays, old_grads):
        it = iter(saved_values)
        grads_it = iter(old_grads)
        shadow: list = [None] * len(parts)
        leaves = []
        # create every node first, then wire the edges (the graph is a DAG)
        for i, part in enumerate(parts):
            if part[0] == "leaf":
                _, shape, dtype, grad_meta, grad_dtype, strides = part
                var = with_strides(jax.numpy.zeros(shape, dtype), strides)  # the leaf's layout
                var._requires_grad = True
                var.grad_dtype = grad_dtype
                if grad_meta is not None:
                    var._grad = Tensor._make(next(grads_it))
                shadow[i] = AccumulateGrad(var)
                leaves.append((i, var, grad_meta))
            else:
                op, static, needs, in_meta, out_meta, names, kinds, _ = part
                node = node_class_for(op)((), out_meta, op, static, needs, in_meta, seq=rank[i])
                node.saved = {
                    name: SavedConstant(next(it)) if kind is SavedConstant
                    else SavedTensor(Tensor._make(next(it) if kind is SavedTensor
                                                  else kind(next(it))))  # a view's own kernel
                    for name, kind in zip(names, kinds)}
                shadow[i] = node
        for i, part in enumerate(parts):
            if part[0] != "leaf":
                shadow[i].next_edges = tuple(
                    None if e is None else (shadow[e[0]], e[1]) for e in part[7])
        root_edges = tuple((shadow[i], slot) for i, slot in root_slots)
        roots = [Tensor._make(a) for a in root_arrays]
        with no_grad():
            execute(GraphRoot(root_edges, roots), True, False)
        effects.clear()
        outs = []
        for i, var, grad_meta in leaves:
            grad = var._grad  # shadow .grad: fresh tensors start at version 0
            effects.append((i, grad_meta is None, None if grad is None else grad._vc.value,
                            None if grad is None else grad.stride()))
            outs.append(None if grad is None else grad._value)
        return outs

    return jit(run), effects


def try_backward(root_edges: tuple, root_grads: list, keep_graph: bool,
                 execute: Execute) -> bool:
    """Run the backward as one cached XLA program if the graph allows; False to fall back.

    ``execute(root, keep_graph, create_graph)`` is the engine, run over the shadow graph when a
    graph structure is first seen."""
    if any(g is None or dispatches_in_python(g) for g in root_grads):
        return False
    analysis = _analyse(root_edges)
    if analysis is None:
        return False
    structure, nodes, leaves, saved_values = analysis
    index = {fn: i for i, fn in enumerate(nodes[:len(root_edges)])}
    root_slots = tuple((index[e[0]], e[1]) for e in root_edges)
    key = (structure, root_slots, tuple((g._value.shape, g._value.dtype) for g in root_grads))
    entry = _cache.get(key)
    if entry is None:
        entry = _cache[key] = _build(structure, root_slots, execute)
    program, effects = entry
    # threads share leaves: hold every leaf's accumulator lock (in one global order) from reading
    # the old .grad to writing the new one, and run only if no .grad appeared or went meanwhile
    with contextlib.ExitStack() as held:
        for fn in sorted((nodes[i] for i in leaves), key=id):
            held.enter_context(fn.lock)
        parts = structure[0]
        if any((nodes[i].variable._grad is None) != (parts[i][3] is None) for i in leaves):
            return False
        _run_program(program, effects, nodes, leaves, saved_values, root_grads)
    if not keep_graph:
        for fn in nodes:
            fn.release_variables()
    return True


def _run_program(program: Callable, effects: list, nodes: list, leaves: list,
                 saved_values: list, root_grads: list) -> None:
    """Call the cached backward program and write its results into the leaves' ``.grad``."""
    old = [nodes[i].variable._grad._value for i in leaves if nodes[i].variable._grad is not None]
    outs = program(saved_values, [g._value for g in root_grads], old)
    for (i, was_none, version, strides), array in zip(effects, outs):
        var = nodes[i].variable
        if array is not None:  # .grad lives on the leaf's device and sharding
            array = placed_like(array, var)
        if was_none and version is not None:  # .grad created (stolen or copied)
            var._grad = with_strides(array, strides)  # torch's layout contract
            var._grad._vc.value = version
            structure_changed()
        elif not was_none and version:  # existing .grad updated in place `version` times
            var._grad._write_inplace(array, version)
