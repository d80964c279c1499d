"""The backward engine, following torch/csrc/autograd/engine.cpp.

1. Count, for every node reachable from the roots, how many edges point at it.
2. Start from a GraphRoot holding the root gradients; run ready nodes highest sequence number
   first (AccumulateGrad nodes have the highest, so leaves accumulate as soon as they can).
3. For a node: tensor hooks, then retain_grad hooks, then node pre-hooks, the node itself, then
   node post-hooks; free its saved tensors unless ``retain_graph``; hand each output gradient to
   the next node's input buffer (cast to the dtype that node expects, for a leaf its
   ``grad_dtype``; summing), and queue that node once all its inputs arrived.
With ``inputs`` (``autograd.grad`` or ``backward(inputs=...)``) only nodes on a path to the
inputs run, and the inputs' gradients are captured where they arrive.

One call's state lives in a ``GraphTask``; ``backward()`` and ``grad()`` share ``_make_grads``
and ``_task``.
The hooks run here, and AccumulateGrad nodes are run here (``accumulate_grad``).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core import anomaly as _anomaly
from .._core.caches import Memo
from .._core.dtypes import legacy_type_name
from .._core.epoch import changed as structure_changed
from .._core.grad_mode import is_grad_enabled, set_grad_enabled
from .._core.graph import (
    AccumulateGrad,
    GradientEdge,
    GraphRoot,
    HookDict,
    Node,
    current_graph_task,
    graph_task_running,
    running_graph_tasks,
)
from .._core.jax_setup import x64_scope
from .._core.tensor import Size, Tensor, dispatches_in_python
from .._core.tracing import call_user_hook
from .._core.transform_stack import BACKWARD_INSIDE_TRANSFORM, in_functorch_transform
from .._core.typename import type_name
from .._core.warn_once import warn_once
from .._ops import elementwise as E
from .._ops import reductions as R
from .._ops import views as V
from . import profiling as _profiler
from .accumulate import accumulate_into_leaf, leaf_grad_dtype
from .compiled_backward import try_backward
from .dispatch import apply, dispatch_function

# --- ready queue: libstdc++'s std::priority_queue, so ties break exactly as in torch -------

def _sift_up(heap: list, hole: int, top: int, item: Node) -> None:
    parent = (hole - 1) // 2
    while hole > top and heap[parent].seq < item.seq:
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = item


def _push(heap: list, item: Node) -> None:
    heap.append(item)
    _sift_up(heap, len(heap) - 1, 0, item)


def _pop(heap: list) -> Node:
    top = heap[0]
    last = heap.pop()
    n = len(heap)
    if n == 0:
        return top
    hole, child = 0, 0
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if heap[child].seq < heap[child - 1].seq:
            child -= 1
        heap[hole] = heap[child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        heap[hole] = heap[child - 1]
        hole = child - 1
    _sift_up(heap, hole, 0, last)
    return top


# --- hooks ---------------------------------------------------------------------------------------

def hook_name(hook: Callable) -> str:
    return getattr(hook, "__name__", type(hook).__name__)


def check_hook_result(hook: Callable, old: Tensor | None, new: Any) -> Tensor:
    """torch's checks on a tensor hook's return value (same class, dtype and size as ``old``)."""
    if old is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type_name(new)}'")
    name = hook_name(hook)
    if new.dtype is not old.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was "
                           f"jaxgrad.{legacy_type_name(old.dtype)} got "
                           f"jaxgrad.{legacy_type_name(new.dtype)})")
    if tuple(new.shape) != tuple(old.shape):
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return new


def check_node_hook_result(hook: Callable, old: tuple, new: Any) -> list:
    """torch's checks on a Node hook's return value: a tuple as long as ``old`` whose tensors
    each pass :func:`check_hook_result` (None entries are kept as None)."""
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type_name(new)}'")
    if len(new) != len(old):
        raise RuntimeError(f"hook '{hook_name(hook)}' has returned an incorrect number of values "
                           f"(got {len(new)}, but expected {len(old)})")
    return [n if n is None else check_hook_result(hook, o, n) for o, n in zip(old, new)]


def call_hook(hook: Callable, args: tuple, kept: dict | None) -> Any:
    """``hook(*args)``; adds to ``kept`` (id -> tensor: kept alive, so ids stay unique) the
    argument tensors the hook held on to.

    A hook that stores a gradient (or the tuple holding it) makes it shared: see
    Note [Gradient ownership and stealing] (``_engine/accumulate.py``).
    """
    if kept is None:
        return call_user_hook(hook, *args)
    watched = [a for a in args if a is not None]
    counts = [sys.getrefcount(w) for w in watched]
    out = call_user_hook(hook, *args)
    returned = out if isinstance(out, (tuple, list)) else (out,)
    for w, count in zip(watched, counts):
        if sys.getrefcount(w) - any(r is w for r in returned) > count:
            kept.update((id(t), t) for t in (w if isinstance(w, tuple) else (w,)))
    return out


def run_tensor_hooks(hooks: HookDict, grad: Tensor | None, kept: dict | None = None) -> Any:
    """Call each hook with the gradient (None if undefined); a returned tensor replaces it."""
    for hook in list(hooks.values()):
        out = call_hook(hook, (grad,), kept)
        if out is not None:
            grad = check_hook_result(hook, grad, out)
    return grad


def run_post_accumulate_hooks(variable: Tensor) -> None:
    """``hook(variable)`` after accumulation; they must return None (checked like torch)."""
    if variable._post_acc_hooks:
        for hook in list(variable._post_acc_hooks.values()):
            out = hook(variable)
            if out is not None:
                check_hook_result(hook, variable, out)
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")


_RETAIN_LOCK = threading.Lock()


def call_tensor_pre_hooks(fn: Node, grads: list, kept: dict | None = None) -> list:
    """The hooks registered on the tensors ``fn`` receives gradients for (user hooks, then
    retain_grad's); on an AccumulateGrad node, the leaf's hooks."""
    if isinstance(fn, AccumulateGrad):
        hooks = fn.variable._grad_hooks
        if hooks:
            grads = [run_tensor_hooks(hooks, grads[0], kept)]
        return grads
    if fn._tensor_hooks:  # torch calls them with None for an output that got no gradient
        for output_nr, hooks in fn._tensor_hooks:
            if hooks:
                grads[output_nr] = run_tensor_hooks(hooks, grads[output_nr], kept)
    if fn._retains:
        for output_nr, ref in list(fn._retains.items()):
            tensor, grad = ref(), grads[output_nr]
            if tensor is None or grad is None:
                continue
            with _RETAIN_LOCK:  # threads running backward on one graph share retained grads
                if tensor._grad is None:
                    tensor._grad = (apply(V.CLONE, grad) if grad.requires_grad
                                    else Tensor._make(grad._value))
                else:
                    tensor._grad = apply(E.ADD, tensor._grad, grad)
            structure_changed()
    return grads


# --- AccumulateGrad ------------------------------------------------------------------------------

def accumulate_grad(fn: AccumulateGrad, grad: Tensor | None, create_graph: bool,
                    stealable: bool) -> None:
    """Run an AccumulateGrad node: add ``grad`` (None: nothing arrived) into the leaf's
    ``.grad`` (``stealable``: the engine owns ``grad`` exclusively), then run the leaf's
    post-accumulate-grad hooks, holding the node's lock (threads share leaves, as in torch)."""
    with fn.lock:
        if grad is not None:
            accumulate_into_leaf(fn.variable, grad, create_graph, stealable)
        run_post_accumulate_hooks(fn.variable)


def accumulate_grad_apply(self: AccumulateGrad, grads: list, create_graph: bool,
                          wanted: tuple | None = None) -> list:
    """``AccumulateGrad.apply``, what a direct call (``acc(grad)``, torch's Python
    ``Node.__call__``) runs."""
    # torch accumulates out of place whenever grad mode is on (as under create_graph)
    accumulate_grad(self, grads[0], create_graph or is_grad_enabled(), stealable=False)
    return []


# AccumulateGrad is made by a leaf (layer 0) the first time it joins a graph, but accumulating
# runs ops, which only this layer can: the engine, which runs every other AccumulateGrad, gives
# the class its ``apply`` here, where that rule is written.
AccumulateGrad.apply = accumulate_grad_apply


graph_log = logging.getLogger("jaxgrad.autograd.graph")  # torch's torch.autograd.graph logger


def _log_node(fn: Node, grads: list) -> None:
    """torch's DEBUG record of a node about to run, after its pre-hooks: ``Executing: <node>
    with grad_outputs: [f32[2, 3]]``."""
    shapes = ",".join("None" if g is None else f"{g.dtype.abbr}[{', '.join(map(str, g.shape))}]"
                      for g in grads)
    graph_log.debug(f"Executing: {fn} with grad_outputs: [{shapes}]")


def _run_node(fn: Node, grads: list, run: Any) -> Any:
    return _profiler.record_node(fn.name(), fn.seq, grads, run) if _profiler.active else run()


# --- one backward call -----------------------------------------------------------------------

_task_ids = itertools.count()


def is_checkpoint_valid() -> bool:
    """False while a backward call that computes only some gradients (``autograd.grad``,
    ``backward(inputs=...)``) runs in this thread, or a backward nested in such a call
    (``torch.autograd._is_checkpoint_valid``: reentrant checkpointing needs every leaf's
    ``.grad``).

    >>> import jaxgrad
    >>> from jaxgrad._engine.engine import is_checkpoint_valid
    >>> seen = []
    >>> x = jaxgrad.ones(1, requires_grad=True)
    >>> _ = x.register_hook(lambda g: seen.append(is_checkpoint_valid()))
    >>> (x * 2).sum().backward(); _ = jaxgrad.autograd.grad((x * 2).sum(), x); seen
    [True, False]
    """
    return all(task.outputs is None for task in running_graph_tasks())


class GraphTask:
    """The state of one backward call (torch's GraphTask in engine.cpp).

    - ``keep_graph``, ``create_graph``: the call's flags (``retain_graph`` and ``create_graph``);
      the task runs with grad mode set to ``create_graph``;
    - ``root``: the GraphRoot holding the root edges and gradients;
    - ``outputs``, ``accumulate``: the edges to capture gradients at (``autograd.grad``'s or
      ``backward(inputs=...)``'s inputs), None for all leaves; ``accumulate``: into ``.grad``
      (backward) or returned (grad);
    - ``dependencies``: node -> number of edges into it not yet processed;
    - ``buffers``: node -> its input buffer, the gradients received so far (torch's not_ready);
    - ``needed``, ``captures`` (torch's exec_info): the nodes that must run to reach ``outputs``
      (None: every node), and per node the (input_nr, output index) pairs it captures;
    - ``captured``: the gradients captured for ``outputs`` (what ``run`` returns);
    - ``owned``, ``holders``, ``shared``, ``views``: ownership of gradient tensors (see
      ``_track_ownership``);
    - ``heap``: the ready queue, highest sequence number first;
    - ``final_callbacks``: what ``queue_callback`` queued while the task runs (None: nothing),
      run in order once every node has run.
    """

    __slots__ = ("accumulate", "buffers", "captured", "captures", "create_graph",
                 "dependencies", "final_callbacks", "heap", "holders", "id", "keep_graph",
                 "log_nodes", "needed", "outputs", "owned", "root", "shared", "views")

    def __init__(self, root: GraphRoot, keep_graph: bool, create_graph: bool,
                 outputs: list | None = None, accumulate: bool = True) -> None:
        self.root = root
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        self.outputs = outputs
        self.accumulate = accumulate
        self.dependencies: dict[Node, int] = {}
        self.buffers: dict[Node, list] = {}
        self.needed: set[Node] | None = None
        self.captures: dict[Node, list] = {}
        self.captured: list = [None] * (len(outputs) if outputs else 0)
        # Note [Gradient ownership and stealing] (_engine/accumulate.py): id -> tensor of the
        # gradients only the engine holds; id -> how many input buffers hold one (absent: one);
        # the ids of those a hook kept, and of those that are views of another gradient
        self.owned: dict[int, Tensor] = {}
        self.holders: dict[int, int] = {}
        self.shared: dict[int, Tensor] = {}  # id -> tensor (kept alive: ids stay unique)
        self.views: dict[int, Tensor] = {}  # id -> tensor (kept alive: ids stay unique)
        self.heap: list[Node] = []
        self.final_callbacks: list[Callable[[], Any]] | None = None
        self.id = next(_task_ids)  # torch's graph task id (what checkpoint keys recomputes by)
        self.log_nodes = graph_log.isEnabledFor(logging.DEBUG)  # (torch's logging prehooks)

    # -- preparation (torch's compute_dependencies and init_to_execute) ------------------------
    def _compute_dependencies(self) -> None:
        deps = self.dependencies
        root = self.root
        seen = {root}
        stack = [root]
        while stack:
            fn = stack.pop()
            for edge in fn.next_edges:
                if edge is None:
                    continue
                nxt = edge[0]
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)

    def _init_to_execute(self) -> None:
        """Nodes that must run to reach ``outputs``; and, per node, the captures it makes."""
        root = self.root
        captures = self.captures
        targets: set[Node] = set()
        for i, (fn, input_nr) in enumerate(self.outputs):
            if self.accumulate:
                targets.add(fn)
            else:
                captures.setdefault(fn, []).append((input_nr, i))
        needed: set[Node] = set(targets)
        wanted = targets | set(captures)
        # iterative post-order: a node is needed if any child is needed or wanted
        stack = [(root, iter(root.next_edges))]
        visited = {root}
        while stack:
            fn, it = stack[-1]
            for edge in it:
                if edge is None:
                    continue
                child = edge[0]
                if child not in visited:
                    visited.add(child)
                    stack.append((child, iter(child.next_edges)))
                    break
            else:
                stack.pop()
                if fn not in needed and any(
                        e is not None and (e[0] in needed or e[0] in wanted)
                        for e in fn.next_edges):
                    needed.add(fn)
        self.needed = needed

    # -- the loop ---------------------------------------------------------------------------------
    def run(self) -> list:
        """Run the graph below the root, then the final callbacks queued meanwhile (in grad mode
        ``create_graph``, this task being the thread's innermost running one); returns the
        captured gradients for ``outputs``."""
        reentrant = bool(running_graph_tasks())
        with (_reentrant_stack_room() if reentrant else contextlib.nullcontext()), \
                set_grad_enabled(self.create_graph), graph_task_running(self):
            captured = self._run()
            self._run_final_callbacks()
        return captured

    def will_execute(self, node: Node) -> bool:
        """torch's _will_engine_execute_node: whether this call runs ``node``."""
        if node not in self.dependencies:
            return False
        if self.needed is None or node in self.needed:
            captured = node in self.captures
        elif node in self.captures:
            captured = True
        else:
            return False
        if captured and not any(e is not None for e in node.next_edges):
            raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are "
                               "currently running autograd.grad(). This is currently not "
                               "supported.")
        return True

    def queue_callback(self, callback: Callable[[], Any]) -> None:
        """Queue ``callback()`` to run when every node of this task has run."""
        if self.final_callbacks is None:
            self.final_callbacks = []
        self.final_callbacks.append(callback)

    def _run_final_callbacks(self) -> None:
        callbacks = self.final_callbacks
        i = 0
        while callbacks is not None and i < len(callbacks):  # a callback may queue more
            callbacks[i]()
            i += 1
            callbacks = self.final_callbacks

    def _run(self) -> list:
        self._compute_dependencies()
        if self.outputs:
            self._init_to_execute()
        root, deps, buffers, needed, captures, captured, heap = (
            self.root, self.dependencies, self.buffers, self.needed, self.captures,
            self.captured, self.heap)
        heap.append(root)
        while heap:
            fn = _pop(heap)
            grads = buffers.pop(fn, None) or [None] * max(len(fn.out_meta), 1)
            if needed is not None:
                run = fn in needed or fn is root
                if fn in captures:
                    seen = grads if run else call_tensor_pre_hooks(fn, grads)
                    for input_nr, i in captures[fn]:
                        captured[i] = seen[input_nr]
                if not run:
                    continue
            wanted = None if needed is None else tuple(
                e is not None and (e[0] in needed or e[0] in captures) for e in fn.next_edges)
            if _anomaly.state.enabled:
                results = self._evaluate_in_anomaly_mode(fn, grads, wanted)
            else:
                results = self._evaluate(fn, grads, wanted)
            for edge, grad in zip(fn.next_edges, results):
                if edge is None:
                    continue
                nxt, slot = edge
                deps[nxt] -= 1
                if needed is not None and nxt not in needed and nxt not in captures:
                    continue
                buffer = buffers.get(nxt)
                if buffer is None:
                    buffer = buffers[nxt] = [None] * max(len(nxt.out_meta), 1)
                if grad is not None:
                    grad = self._fit_dtype(nxt, slot, grad)
                    self._accumulate(buffer, slot, grad)
                if deps[nxt] == 0:
                    _push(heap, nxt)
        return captured

    # -- one node (torch's evaluate_function / call_function) ------------------------------------
    def _evaluate_in_anomaly_mode(self, fn: Node, grads: list, wanted: tuple | None) -> list:
        """``_evaluate`` as torch's engine runs a node in anomaly mode: nodes made meanwhile
        record ``fn`` as their parent; NaN in an output gradient raises (with ``check_nan``);
        any error first warns the forward tracebacks that led to ``fn``."""
        previous = _anomaly.evaluating(fn)
        try:
            outputs = self._evaluate(fn, grads, wanted)
            if _anomaly.state.check_nan and not isinstance(fn, GraphRoot):
                _check_nan(fn, outputs)
            return outputs
        except Exception:
            if not isinstance(fn, GraphRoot):
                _anomaly.warn_forward_traces(fn)
            raise
        finally:
            _anomaly.evaluating(previous)

    def _evaluate(self, fn: Node, grads: list, wanted: tuple | None) -> list:
        owned, shared, create_graph = self.owned, self.shared, self.create_graph
        before = list(grads)
        grads = call_tensor_pre_hooks(fn, grads, shared)
        if fn._pre_hooks:
            for hook in list(fn._pre_hooks.values()):
                out = call_hook(hook, (tuple(grads),), shared)
                if out is not None:
                    grads = check_node_hook_result(hook, tuple(grads), out)
        for old, new in zip(before, grads):
            if new is not old and new is not None:  # a hook's new tensor: only the engine holds it
                owned[id(new)] = new
        if self.log_nodes and not isinstance(fn, GraphRoot):
            _log_node(fn, grads)
        if isinstance(fn, AccumulateGrad):
            _run_node(fn, grads, lambda: accumulate_grad(fn, grads[0], create_graph,
                                                         self._only_holder(grads[0])))
            outputs = []
        elif isinstance(fn, GraphRoot):
            outputs = fn.apply(grads, create_graph, wanted)
        else:
            outputs = _run_node(fn, grads, lambda: fn.apply(grads, create_graph, wanted))
            self._track_ownership(fn, grads, outputs)
        if fn._post_hooks:
            for hook in list(fn._post_hooks.values()):
                out = call_hook(hook, (tuple(outputs), tuple(grads)), shared)
                if out is not None:
                    outputs = check_node_hook_result(hook, tuple(outputs), out)
        if not self.keep_graph:
            fn.release_variables()
        if self.holders and getattr(getattr(fn, "op", None), "grad_layout", "fresh") != "view":
            # what the buffer held (hooks may have replaced it); a view node's outputs are views
            # of it: its storage stays held (torch's storage use_count)
            self._release(before)
        return outputs

    def _track_ownership(self, fn: Node, grads: list, outputs: list) -> None:
        """Mark which of ``fn``'s output gradients only the engine holds (may be stolen); one
        tensor handed to several inputs counts a holder per input (``holders``)."""
        owned, holders = self.owned, self.holders
        layout = getattr(getattr(fn, "op", None), "grad_layout", "fresh")
        inherited = grads[0] is not None and id(grads[0]) in owned
        viewed = getattr(fn, "viewed", ())
        uses: dict[int, int] = {}
        for out in outputs:
            if out is not None:
                uses[id(out)] = uses.get(id(out), 0) + 1
        for i, out in enumerate(outputs):
            if out is None:
                continue
            if layout in ("view", "slices") or (i < len(viewed) and viewed[i]):
                self.views[id(out)] = out
            key = id(out)
            n = uses.pop(key, 0)
            if n == 0:  # seen already
                continue
            if any(out is g for g in grads):  # passed through: its input buffer's holder moves on
                if key in owned and (n > 1 or key in holders):
                    holders[key] = holders.get(key, 1) + n
                continue
            if layout in ("fresh", "slices") or (layout == "view" and inherited):
                owned[key] = out
                if n > 1:
                    holders[key] = n

    def _release(self, grads: list) -> None:
        """A node ran: the input buffer it consumed no longer holds its gradients."""
        holders = self.holders
        for g in grads:
            if g is not None and id(g) in holders:
                holders[id(g)] -= 1

    def _only_holder(self, grad: Tensor | None) -> bool:
        """Whether AccumulateGrad may steal ``grad``: the engine owns it and no other input
        buffer still holds it (Note [Gradient ownership and stealing])."""
        return (grad is not None and id(grad) in self.owned
                and self.holders.get(id(grad), 1) <= 1)

    def _fit_dtype(self, nxt: Node, slot: int, grad: Tensor) -> Tensor:
        """torch's validate_outputs, for dtypes: a gradient of another dtype than the next node
        expects for it is cast (into an AccumulateGrad node: the leaf's ``grad_dtype``, None
        keeping any dtype). The cast is a new tensor only the engine holds (may be stolen)."""
        if type(nxt) is AccumulateGrad:
            wanted = leaf_grad_dtype(nxt.variable)
        else:
            meta = nxt.out_meta[slot] if slot < len(nxt.out_meta) else None
            wanted = None if meta is None else meta[1]
        if wanted is None or grad._value.dtype == wanted:
            return grad
        cast = apply(E.CAST, grad, dtype=wanted)
        self.owned[id(cast)] = cast
        if self.holders:
            self._release([grad])
        return cast

    def _accumulate(self, buffer: list, slot: int, grad: Tensor) -> None:
        """torch's InputBuffer::accumulate: reuse an exclusively owned buffer in place if possible.

        ``shared`` holds gradients a hook kept a reference to: summing into them in place would
        change what the hook saw.
        """
        owned, shared, holders = self.owned, self.shared, self.holders
        old = buffer[slot]
        if old is None:
            buffer[slot] = grad
            return
        if dispatches_in_python(old) or dispatches_in_python(grad):
            buffer[slot] = apply(E.ADD, old, grad)  # (a subclass's dispatch adds)
            return
        if holders:  # the sum takes the place of what this slot held
            self._release([grad] if old is grad else [old, grad])
        if self.create_graph:
            buffer[slot] = old + grad
        elif (id(old) in owned and old is not grad and id(old) not in shared
              and id(old) not in self.views and holders.get(id(old), 0) < 1):
            old._write_inplace(old._value + grad._value)
            if id(old) in holders:
                holders[id(old)] = 1
        else:
            buffer[slot] = summed = Tensor._make(old._value + grad._value)
            owned[id(summed)] = summed


def _check_nan(fn: Node, outputs: list) -> None:
    """torch's anomaly-mode check of a node's output gradients."""
    for i, grad in enumerate(outputs):
        if grad is None or isinstance(grad._value, jax.core.Tracer):
            continue
        if bool(jnp.isnan(grad._value).any()):
            raise RuntimeError(f"Function '{fn.name()}' returned nan values in its {i}th output.")


def execute(root: GraphRoot, keep_graph: bool, create_graph: bool,
            outputs: list | None = None, accumulate: bool = True) -> list:
    """Run the graph below ``root`` as one GraphTask (with grad mode = ``create_graph``);
    returns the captured gradients for ``outputs``."""
    return GraphTask(root, keep_graph, create_graph, outputs, accumulate).run()


REENTRANT_FRAMES = 200  # Python frames each nested (reentrant) backward may add to the stack


@contextlib.contextmanager
def _reentrant_stack_room() -> Iterator[None]:
    """A backward started inside a running one (a custom Function's backward calling
    ``backward()``) gets ``REENTRANT_FRAMES`` more of Python's recursion limit for as long as it
    runs: torch's engine hands deep reentrant backwards to a worker pool instead of recursing,
    so any depth works; here they recurse in the calling thread, with room made for them."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + REENTRANT_FRAMES)
    try:
        yield
    finally:
        if sys.getrecursionlimit() == limit + REENTRANT_FRAMES:  # unless changed meanwhile
            sys.setrecursionlimit(limit)


# --- switches -------------------------------------------------------------------------------------

class _EngineState(threading.local):
    """Per-thread engine switches; class attributes are each new thread's defaults."""

    compiled_backward = True  # graphs without user hooks run as one cached XLA program


_state = _EngineState()


@contextlib.contextmanager
def compiled_backward(enabled: bool) -> Iterator[None]:
    """Within the block (in this thread), ``backward()`` uses the cached compiled backward for
    eligible graphs (``enabled=True``, the default outside any block) or always runs the eager
    engine (``False``). Tests use it to compare the two paths.

    >>> import jaxgrad
    >>> from jaxgrad._engine.engine import compiled_backward
    >>> x = jaxgrad.ones(2, requires_grad=True)
    >>> with compiled_backward(False):
    ...     (x * 2).sum().backward()
    >>> x.grad
    tensor([2., 2.])
    """
    prev = _state.compiled_backward
    _state.compiled_backward = bool(enabled)
    try:
        yield
    finally:
        _state.compiled_backward = prev


# --- public entry points --------------------------------------------------------------------------

def _as_tuple(x: Any) -> tuple:
    """Roots (or inputs) as a tuple: a tensor or GradientEdge alone, else ``tuple(x)`` (torch's
    own errors for a non-iterable)."""
    return (x,) if isinstance(x, (Tensor, GradientEdge)) else tuple(x)


def _inputs_tuple(inputs: Any, caller: str) -> tuple:
    """``inputs`` of ``grad``/``backward``: a tensor, a sequence, or a dict (its values)."""
    if isinstance(inputs, (Tensor, GradientEdge)):
        return (inputs,)
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `{caller}()` must be a dict, not "
                        f"{type(inputs).__name__}. Other Mapping types are not supported.")
    return tuple(inputs)


_ones = Memo(maxsize=64)  # (shape, dtype) -> a one-element array of ones (immutable: shared)


def _implicit_ones(value: Any) -> Any:
    """The implicit gradient of a one-element output: ones, made once per shape and dtype
    (``jnp.ones`` is an eager XLA call, ~30 us, on every ``loss.backward()`` otherwise)."""
    key = (value.shape, value.dtype)
    ones = _ones.get(key)
    if ones is None:
        with x64_scope():  # (filled by numpy: no XLA kernel compiled per new shape)
            ones = jax.device_put(np.ones(value.shape, value.dtype))
        if isinstance(ones, jax.core.Tracer):  # inside a trace: a constant of that trace
            return ones
        _ones[key] = ones
    return ones


def _calculate_shape(output: Tensor, grad: Tensor, is_grads_batched: bool) -> tuple[Size, Size]:
    """The shapes ``_make_grads`` compares: the output's, and the gradient's (less its batch
    dimension when ``is_grads_batched``).

    >>> import jaxgrad
    >>> from jaxgrad.autograd import _calculate_shape
    >>> _calculate_shape(jaxgrad.ones(2, 3), jaxgrad.ones(4, 2, 3), True)
    (jaxgrad.Size([2, 3]), jaxgrad.Size([2, 3]))
    """
    return output.shape, grad.shape[1:] if is_grads_batched else grad.shape


def _root_meta(out: Any) -> tuple:
    """(shape, dtype, wants an implicit gradient) of a root: a tensor or a GradientEdge (whose
    node knows the shape and dtype of the gradient it receives)."""
    if isinstance(out, GradientEdge):
        meta = out.node._input_metadata[out.output_nr]
        return Size(meta.shape), meta.dtype, True
    if not isinstance(out, Tensor):
        raise AssertionError("Expected output to be a jaxgrad.Tensor")
    return out.shape, out.dtype, out.requires_grad


def _make_grads(outputs: Sequence[Any], grads: Sequence[Any], batched: bool = False) -> list:
    """torch.autograd.__init__._make_grads: check or create the root gradients (one per pair
    of ``zip(outputs, grads)``; the engine checks the counts)."""
    new = []
    for out, grad in zip(outputs, grads):
        out_shape, out_dtype, wants_grad = _root_meta(out)
        if isinstance(grad, Tensor):
            first_shape = grad.shape[1:] if batched else grad.shape
            if first_shape != out_shape:
                if batched and isinstance(out, GradientEdge):
                    raise RuntimeError("Batched grads are not supported with GradientEdge")
                # torch finds the positions with list.index, i.e. tensor ==: with several
                # roots that comparison itself can raise, and we raise what torch raises
                where = (f"grad_output[{list(grads).index(grad)}] has a shape of "
                         f"{Size(first_shape)} and output[{list(outputs).index(out)}] has a "
                         f"shape of {out_shape}")
                if batched:
                    raise RuntimeError(
                        "If `is_grads_batched=True`, we interpret the first dimension of each "
                        "grad_output as the batch dimension. The sizes of the remaining "
                        "dimensions are expected to match the shape of corresponding output, but "
                        f"a mismatch was detected: {where}. If you only want some tensors in "
                        "`grad_output` to be considered batched, consider using vmap.")
                raise RuntimeError(f"Mismatch in shape: {where}.")
            if out_dtype.is_complex != grad.dtype.is_complex:
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have the "
                    f"same dtype. Mismatch in dtype: grad_output[{list(grads).index(grad)}] has a "
                    f"dtype of {grad.dtype} and output[{list(outputs).index(out)}] has a dtype of "
                    f"{out_dtype}.")
            if grad.dtype is not out_dtype and out_dtype.is_floating_point:
                # torch's validate_outputs: a recorded cast (ToCopyBackward0 under create_graph)
                with x64_scope():
                    grad = apply(E.CAST, grad, dtype=out_dtype.np)
            new.append(grad)
        elif grad is None:
            if wants_grad:
                if out_shape.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not out_dtype.is_floating_point:
                    raise RuntimeError("grad can be implicitly created only for real scalar "
                                       f"outputs but got {out_dtype}")
                if dispatches_in_python(out):
                    new.append(dispatch_function(  # torch's ones_like, dispatched to it
                        "ones_like", lambda t: Tensor._make(_implicit_ones(t._value)), (out,),
                        {}))
                    continue
                new.append(Tensor._make(_implicit_ones(
                    jax.ShapeDtypeStruct(tuple(out_shape), out_dtype.np))))
            else:
                new.append(None)
        else:
            raise TypeError("gradients can be either Tensors or None, but got "
                            f"{type(grad).__name__}")
    return new


def _root_edges(tensors: Sequence[Tensor]) -> tuple:
    edges = []
    for i, t in enumerate(tensors):
        if isinstance(t, GradientEdge):
            edges.append((t.node, t.output_nr))
            continue
        edge = t._gradient_edge()
        if edge is None:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn")
        edges.append(edge)
    return tuple(edges)


def _input_edges(inputs: Sequence[Tensor]) -> list:
    edges = []
    for t in inputs:
        if isinstance(t, GradientEdge):
            edges.append((t.node, t.output_nr))
            continue
        if not isinstance(t, Tensor):
            raise RuntimeError("all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(t).__name__}")
        edge = t._gradient_edge()
        if edge is None:
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            edge = (_UNREACHABLE, 0)  # a no_grad view: torch's edge to no node gets nothing
        edges.append(edge)
    return edges


_UNREACHABLE = GraphRoot((), [])  # a node no graph leads to


def _task(tensors: tuple, root_grads: list, inputs: tuple | None, keep_graph: bool,
          create_graph: bool, accumulate: bool) -> GraphTask:
    """The GraphTask of one call, ``backward()`` (``accumulate``) or ``grad()``: the counts
    checked as torch's engine does, the root and input edges."""
    if len(root_grads) != len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(root_grads)} gradients")
    root = GraphRoot(_root_edges(tensors), root_grads)
    outputs = None
    if inputs is not None:
        if accumulate:
            for t in inputs:
                if isinstance(t, Tensor):
                    t.retain_grad()  # torch does this for every input (a no-op on leaves)
        outputs = _input_edges(inputs)
    return GraphTask(root, keep_graph, create_graph, outputs, accumulate)


CREATE_GRAPH_CYCLE_MESSAGE = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter "
    "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
    "creating the graph to avoid this. If you have to use this function, make sure to reset the "
    ".grad fields of your parameters to None after use to break the cycle and avoid the leak.")


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables: Any = None,
             inputs: Any = None) -> None:
    """Accumulate gradients of ``tensors`` into the leaves' ``.grad`` (torch.autograd.backward).

    >>> import jaxgrad
    >>> a = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> jaxgrad.autograd.backward(2 * a, grad_tensors=jaxgrad.ones(2)); a.grad
    tensor([2., 2.])
    """
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both "
                               "passed to `backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    if in_functorch_transform():
        raise RuntimeError(BACKWARD_INSIDE_TRANSFORM)
    inputs_tuple = None if inputs is None else _inputs_tuple(inputs, "backward")
    if inputs is not None and not inputs_tuple:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    root_grads = _make_grads(tensors, grads)
    if retain_graph is None:
        retain_graph = create_graph
    task = _task(tensors, root_grads, inputs_tuple, retain_graph, create_graph, True)
    # graphs without user hooks run as one cached XLA program (_compiled_backward), which runs
    # this engine over a shadow graph: the engine hands it ``execute``
    if not create_graph and task.outputs is None and _state.compiled_backward and \
            not _profiler.active and not _anomaly.state.enabled and not task.log_nodes and \
            try_backward(task.root.next_edges, task.root.grads, task.keep_graph, execute):
        return
    task.run()
    if create_graph:  # torch warns once the graph has run (every time under set_warn_always)
        warn_once(CREATE_GRAPH_CYCLE_MESSAGE, UserWarning, stacklevel=3)


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple | dict:
    """Gradients of ``outputs`` with respect to ``inputs``, returned, not accumulated (a dict
    of ``inputs``' keys when ``inputs`` is a dict). With ``is_grads_batched``, the first
    dimension of each ``grad_outputs`` tensor is a batch of vectors, one gradient each.

    >>> import jaxgrad
    >>> x = jaxgrad.tensor(2.0, requires_grad=True)
    >>> (g,) = jaxgrad.autograd.grad(x ** 3, x, create_graph=True); g.detach(), g.requires_grad
    (tensor(12.), True)
    >>> jaxgrad.autograd.grad(g, x)
    (tensor(12.),)
    >>> y = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> jaxgrad.autograd.grad(y * 3, y, jaxgrad.eye(2), is_grads_batched=True)
    (tensor([[3., 0.],
            [0., 3.]]),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads="
                         "True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    inputs_tuple = _inputs_tuple(inputs, "grad")
    if not inputs_tuple:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). "
                      "To accumulate gradient for other parts of the graph, please use "
                      "jaxgrad.autograd.backward.", FutureWarning, stacklevel=2)
    grads = (_as_tuple(grad_outputs) if grad_outputs is not None
             else (None,) * len(outputs))
    root_grads = _make_grads(outputs, grads, is_grads_batched)
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        result = _batched_grad(outputs, root_grads, inputs_tuple, retain_graph, create_graph,
                               allow_unused)
    else:
        result = _task(outputs, root_grads, inputs_tuple, retain_graph, create_graph,
                       False).run()
        _check_unused(result, allow_unused)
    if materialize_grads:
        if any(r is None and isinstance(t, GradientEdge) for r, t in zip(result, inputs_tuple)):
            raise RuntimeError("materialize_grads cannot be used when the given input is a "
                               "GradientEdge")
        result = [r if r is not None else _zeros_like(t, create_graph)
                  for r, t in zip(result, inputs_tuple)]
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), result))
    return tuple(result)


def _check_unused(result: list, allow_unused: bool) -> None:
    if allow_unused:
        return
    for i, g in enumerate(result):
        if g is None:
            raise RuntimeError(
                f"The differentiated Tensor at index {i} appears to not have been used in the "
                "graph. Set allow_unused=True if this is the desired behavior.")


def _zeros_like(t: Tensor, requires_grad: bool) -> Tensor:
    with x64_scope():
        return Tensor._make(jnp.zeros(t._value.shape, t._value.dtype), requires_grad)


def _batched_grad(outputs: tuple, root_grads: list, inputs: tuple, retain_graph: bool,
                  create_graph: bool, allow_unused: bool) -> list:
    """``grad`` with ``is_grads_batched``: one backward per row of the grad_outputs (torch
    vmaps one backward over them), the gradients stacked along a new first dimension."""
    sizes = {g.shape[0] for g in root_grads if g is not None}
    batch = sizes.pop() if len(sizes) == 1 else None
    if batch is None:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         "dimension")
    rows = []
    for b in range(batch):
        grads_b = [None if g is None else apply(V.SELECT, g, dim=0, index=b)
                   for g in root_grads]
        keep = retain_graph or b < batch - 1
        result = _task(outputs, grads_b, inputs, keep, create_graph, False).run()
        _check_unused(result, allow_unused)
        rows.append(result)
    return [None if rows[0][i] is None else apply(R.STACK, *[r[i] for r in rows], dim=0)
            for i in range(len(inputs))]


# --- Variable._execution_engine ---------------------------------------------------------------

class _EngineBase:
    """The engine object torch exposes as ``Variable._execution_engine``.

    >>> import jaxgrad
    >>> engine = jaxgrad.autograd.Variable._execution_engine
    >>> calls = []
    >>> x = jaxgrad.ones(2, requires_grad=True)
    >>> y = x * 2
    >>> _ = y.register_hook(lambda g: engine.queue_callback(lambda: calls.append("done")))
    >>> y.sum().backward(); calls
    ['done']
    """

    def queue_callback(self, callback: Callable[[], Any]) -> None:
        """Run ``callback()`` when the backward running now has run all its nodes (callbacks
        run in the order queued; one may queue more). Only valid during a backward."""
        task = current_graph_task()
        if task is None:
            raise RuntimeError("Final callbacks can only be installed during backward pass.")
        task.queue_callback(callback)

    def is_checkpoint_valid(self) -> bool:
        """False inside a backward that computes gradients for given inputs only (``grad()``,
        ``backward(inputs=...)``), where reentrant checkpointing cannot work."""
        return is_checkpoint_valid()

    def run_backward(self, tensors: tuple, grad_tensors: tuple, keep_graph: bool,
                     create_graph: bool, inputs: tuple = (), allow_unreachable: bool = False,
                     accumulate_grad: bool = False) -> tuple | None:
        """Run one backward from ``tensors`` seeded with ``grad_tensors`` (checked and made
        already, as ``autograd.backward``/``grad`` do): accumulate into ``.grad``
        (``accumulate_grad``; returns None) or return the gradients of ``inputs``."""
        tensors = _as_tuple(tensors)
        if not accumulate_grad and not inputs:
            raise RuntimeError(
                "accumulate_grad || !outputs.empty() INTERNAL ASSERT FAILED at "
                '"/__w/pytorch/pytorch/torch/csrc/autograd/engine.cpp":1321, please report a '
                "bug to PyTorch. grad requires non-empty inputs.")
        for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
            if g is None and t.requires_grad:
                raise RuntimeError(f"element {i} of gradients tuple is None, but the "
                                   "corresponding Tensor requires grad")
        task = _task(tensors, list(grad_tensors), tuple(inputs) if inputs else None, keep_graph,
                     create_graph, accumulate_grad)
        result = task.run()
        if accumulate_grad:
            return None
        _check_unused(result, allow_unreachable)
        return tuple(result)


execution_engine = _EngineBase()
