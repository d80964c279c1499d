"""The backward engine, following torch/csrc/autograd/engine.cpp.

1. Count, for every node reachable from the roots, how many edges point at it.
2. Start from a GraphRoot holding the root gradients; run ready nodes highest sequence number
   first (AccumulateGrad nodes have the highest, so leaves accumulate as soon as they can).
3. For a node: tensor hooks, then retain_grad hooks, then node pre-hooks, the node itself, then
   node post-hooks; free its saved tensors unless ``retain_graph``; hand each output gradient to
   the next node's input buffer (summing), and queue that node once all its inputs arrived.
With ``inputs`` (``autograd.grad`` or ``backward(inputs=...)``) only nodes on a path to the
inputs run, and the inputs' gradients are captured where they arrive.

One call's state lives in a ``GraphTask``; ``backward()`` and ``grad()`` share ``_prepare``.
The hooks run here, and AccumulateGrad nodes are run here (``accumulate_grad``).
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jax.numpy as jnp

from . import _profiler
from ._accumulate import accumulate_into_leaf
from ._compiled_backward import try_backward
from ._dispatch import apply
from ._dtypes import type_name
from ._grad_mode import set_grad_enabled
from ._graph import AccumulateGrad, GraphRoot, HookDict, Node
from ._ops import elementwise as E
from ._ops import views as V
from ._tensor import Tensor
from ._typename import type_name as python_type_name

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
        raise TypeError(f"expected Variable, but hook returned '{python_type_name(new)}'")
    name = hook_name(hook)
    if new.dtype is not old.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was "
                           f"jaxgrad.{type_name(old.dtype)} got jaxgrad.{type_name(new.dtype)})")
    if tuple(new.shape) != tuple(old.shape):
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return new


def check_node_hook_result(hook: Callable, old: tuple, new: Any) -> list:
    """torch's checks on a Node hook's return value: a tuple as long as ``old`` whose tensors
    each pass :func:`check_hook_result` (None entries are kept as None)."""
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{python_type_name(new)}'")
    if len(new) != len(old):
        raise RuntimeError(f"hook '{hook_name(hook)}' has returned an incorrect number of values "
                           f"(got {len(new)}, but expected {len(old)})")
    return [n if n is None else check_hook_result(hook, o, n) for o, n in zip(old, new)]


def call_hook(hook: Callable, args: tuple, kept: set | None) -> Any:
    """``hook(*args)``; adds to ``kept`` the ids of argument tensors the hook held on to.

    torch only steals or updates a gradient in place when nothing else references it (its
    use_count); a hook that stores a gradient (or the tuple holding it) makes it shared.
    """
    if kept is None:
        return hook(*args)
    watched = [a for a in args if a is not None]
    counts = [sys.getrefcount(w) for w in watched]
    out = hook(*args)
    returned = out if isinstance(out, (tuple, list)) else (out,)
    for w, count in zip(watched, counts):
        if sys.getrefcount(w) - any(r is w for r in returned) > count:
            kept.update(id(t) for t in (w if isinstance(w, tuple) else (w,)))
    return out


def run_tensor_hooks(hooks: HookDict, grad: Tensor | None, kept: set | None = None) -> Any:
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


def call_tensor_pre_hooks(fn: Node, grads: list, kept: set | None = None) -> list:
    """The hooks registered on the tensors ``fn`` receives gradients for (user hooks, then
    retain_grad's); on an AccumulateGrad node, the leaf's hooks."""
    if isinstance(fn, AccumulateGrad):
        hooks = fn.variable._backward_hooks
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
            if tensor._grad is None:
                tensor._grad = (apply(V.CLONE, grad) if grad.requires_grad
                                else Tensor._make(grad._value))
            else:
                tensor._grad = apply(E.ADD, tensor._grad, grad)
    return grads


# --- AccumulateGrad ------------------------------------------------------------------------------

def accumulate_grad(fn: AccumulateGrad, grad: Tensor | None, create_graph: bool,
                    stealable: bool) -> None:
    """Run an AccumulateGrad node: add ``grad`` (None: nothing arrived) into the leaf's
    ``.grad`` (``stealable``: the engine owns ``grad`` exclusively), then run the leaf's
    post-accumulate-grad hooks."""
    if grad is not None:
        accumulate_into_leaf(fn.variable, grad, create_graph, stealable)
    run_post_accumulate_hooks(fn.variable)


def accumulate_grad_apply(self: AccumulateGrad, grads: list, create_graph: bool,
                          wanted: tuple | None = None) -> list:
    """``AccumulateGrad.apply``, what a direct call (``acc(grad)``, torch's Python
    ``Node.__call__``) runs; ``_methods`` attaches it (the graph layer cannot run ops)."""
    accumulate_grad(self, grads[0], create_graph, stealable=False)
    return []


def _run_node(fn: Node, run: Any) -> Any:
    return _profiler.record_node(fn.name(), run) if _profiler.active else run()


# --- one backward call -----------------------------------------------------------------------

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
    - ``owned``, ``shared``: ownership of gradient tensors (see ``_track_ownership``);
    - ``heap``: the ready queue, highest sequence number first.
    """

    __slots__ = ("accumulate", "buffers", "captured", "captures", "create_graph",
                 "dependencies", "heap", "keep_graph", "needed", "outputs", "owned", "root",
                 "shared")

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
        # Ownership: torch's AccumulateGrad steals a gradient (``.grad`` keeps its storage and
        # version) only when nothing else references it and it is dense; otherwise it copies
        # (version 1). ``owned`` maps id -> tensor for the gradients only the engine holds;
        # ``shared`` holds ids of gradients a hook kept a reference to.
        self.owned: dict[int, Tensor] = {}
        self.shared: set[int] = set()
        self.heap: list[Node] = []

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
        """Run the graph below the root; returns the captured gradients for ``outputs``."""
        with set_grad_enabled(self.create_graph):
            return self._run()

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
                    self._accumulate(buffer, slot, grad)
                if deps[nxt] == 0:
                    _push(heap, nxt)
        return captured

    # -- one node (torch's evaluate_function / call_function) ------------------------------------
    def _evaluate(self, fn: Node, grads: list, wanted: tuple | None) -> list:
        owned, shared, create_graph = self.owned, self.shared, self.create_graph
        before = list(grads)
        grads = call_tensor_pre_hooks(fn, grads, shared)
        for old, new in zip(before, grads):
            if new is not old and new is not None:  # a hook's new tensor: only the engine holds it
                owned[id(new)] = new
        if fn._pre_hooks:
            for hook in list(fn._pre_hooks.values()):
                out = call_hook(hook, (tuple(grads),), shared)
                if out is not None:
                    grads = check_node_hook_result(hook, tuple(grads), out)
        if isinstance(fn, AccumulateGrad):
            _run_node(fn, lambda: accumulate_grad(fn, grads[0], create_graph,
                                                  id(grads[0]) in owned))
            outputs = []
        elif isinstance(fn, GraphRoot):
            outputs = fn.apply(grads, create_graph, wanted)
        else:
            outputs = _run_node(fn, lambda: fn.apply(grads, create_graph, wanted))
            self._track_ownership(fn, grads, outputs)
        if fn._post_hooks:
            for hook in list(fn._post_hooks.values()):
                out = call_hook(hook, (tuple(outputs), tuple(grads)), shared)
                if out is not None:
                    outputs = check_node_hook_result(hook, tuple(outputs), out)
        if not self.keep_graph:
            fn.release_variables()
        return outputs

    def _track_ownership(self, fn: Node, grads: list, outputs: list) -> None:
        """Mark which of ``fn``'s output gradients only the engine holds (may be stolen)."""
        owned = self.owned
        layout = getattr(getattr(fn, "op", None), "grad_layout", "fresh")
        inherited = grads[0] is not None and id(grads[0]) in owned
        seen: set[int] = set()
        for out in outputs:
            if out is None:
                continue
            key = id(out)
            if key in seen:  # one tensor handed to several inputs: shared, never stolen
                owned.pop(key, None)
                continue
            seen.add(key)
            if any(out is g for g in grads):
                continue
            if layout == "fresh" or (layout == "view" and inherited):
                owned[key] = out

    def _accumulate(self, buffer: list, slot: int, grad: Tensor) -> None:
        """torch's InputBuffer::accumulate: reuse an exclusively owned buffer in place if possible.

        ``shared`` holds gradients a hook kept a reference to: summing into them in place would
        change what the hook saw.
        """
        owned, shared = self.owned, self.shared
        old = buffer[slot]
        if old is None:
            buffer[slot] = grad
        elif self.create_graph:
            buffer[slot] = old + grad
        elif id(old) in owned and old is not grad and id(old) not in shared:
            old._write_inplace(old._value + grad._value)
        elif id(grad) in owned and old is not grad and id(grad) not in shared:
            grad._write_inplace(grad._value + old._value)
            buffer[slot] = grad
        else:
            buffer[slot] = summed = Tensor._make(old._value + grad._value)
            owned[id(summed)] = summed


def execute(root: GraphRoot, keep_graph: bool, create_graph: bool,
            outputs: list | None = None, accumulate: bool = True) -> list:
    """Run the graph below ``root`` as one GraphTask (with grad mode = ``create_graph``);
    returns the captured gradients for ``outputs``."""
    return GraphTask(root, keep_graph, create_graph, outputs, accumulate).run()


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
    >>> from jaxgrad._engine import compiled_backward
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
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs: Sequence[Tensor], grads: Sequence[Any]) -> list:
    """torch.autograd.__init__._make_grads: check or create the root gradients."""
    new = []
    for out, grad in zip(outputs, grads):
        if isinstance(grad, Tensor):
            if tuple(grad.shape) != tuple(out.shape):
                # torch finds the positions with list.index, i.e. tensor ==: with several
                # roots that comparison itself can raise, and we raise what torch raises
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{list(grads).index(grad)}] has a shape of "
                    f"{grad.shape} and output[{list(outputs).index(out)}] has a shape of "
                    f"{out.shape}.")
            if grad.dtype is not out.dtype and out.dtype.is_floating_point:
                grad = Tensor._make(grad._value.astype(out._value.dtype))
            new.append(grad)
        elif grad is None:
            if out.requires_grad:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not out.dtype.is_floating_point:
                    raise RuntimeError("grad can be implicitly created only for real scalar "
                                       f"outputs but got {out.dtype}")
                new.append(Tensor._make(jnp.ones(out._value.shape, out._value.dtype)))
            else:
                new.append(None)
        else:
            raise TypeError("gradients can be either Tensors or None, but got "
                            f"{type(grad).__name__}")
    return new


def _root_edges(tensors: Sequence[Tensor]) -> tuple:
    edges = []
    for i, t in enumerate(tensors):
        edge = t._gradient_edge()
        if edge is None:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn")
        edges.append(edge)
    return tuple(edges)


def _input_edges(inputs: Sequence[Tensor]) -> list:
    edges = []
    for t in inputs:
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


def _prepare(tensors: Any, grad_tensors: Any, inputs: Any, retain_graph: bool | None,
             create_graph: bool, accumulate: bool) -> tuple[GraphTask, tuple | None]:
    """The preparation ``backward()`` (``accumulate``) and ``grad()`` share: the roots and
    inputs as tuples, the root gradients checked or created (``_make_grads``), ``retain_graph``
    defaulting to ``create_graph``, the root and input edges. Returns the GraphTask, not yet
    run, and the inputs (None for ``backward()`` without ``inputs``: every leaf)."""
    tensors = _as_tuple(tensors)
    if not accumulate:
        inputs = _as_tuple(inputs)
    elif inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grads)} gradients")
    root_grads = _make_grads(tensors, grads)
    if retain_graph is None:
        retain_graph = create_graph
    root = GraphRoot(_root_edges(tensors), root_grads)
    outputs = None
    if inputs is not None:
        if accumulate:
            for t in inputs:
                if isinstance(t, Tensor):
                    t.retain_grad()  # torch does this for every input (a no-op on leaves)
        outputs = _input_edges(inputs)
    return GraphTask(root, retain_graph, create_graph, outputs, accumulate), inputs


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
        grad_tensors = grad_variables
    task, _ = _prepare(tensors, grad_tensors, inputs, retain_graph, create_graph, True)
    # graphs without user hooks run as one cached XLA program (_compiled_backward), which runs
    # this engine over a shadow graph: the engine hands it ``execute``
    if not create_graph and task.outputs is None and _state.compiled_backward and \
            not _profiler.active and \
            try_backward(task.root.next_edges, task.root.grads, task.keep_graph, execute):
        return
    task.run()


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """Gradients of ``outputs`` with respect to ``inputs``, returned, not accumulated.

    >>> import jaxgrad
    >>> x = jaxgrad.tensor(2.0, requires_grad=True)
    >>> (g,) = jaxgrad.autograd.grad(x ** 3, x, create_graph=True); g.detach(), g.requires_grad
    (tensor(12.), True)
    >>> jaxgrad.autograd.grad(g, x)
    (tensor(12.),)
    """
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported yet")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads="
                         "True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    task, inputs = _prepare(outputs, grad_outputs, inputs, retain_graph, create_graph, False)
    result = task.run()
    for i, (g, t) in enumerate(zip(result, inputs)):
        if g is None:
            if materialize_grads:
                result[i] = Tensor._make(jnp.zeros(t._value.shape, t._value.dtype))
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior.")
    return tuple(result)
