"""``jaxgrad.utils.checkpoint``: activation checkpointing, as ``torch.utils.checkpoint``.

A checkpointed function's intermediate tensors are not kept for backward; backward recomputes
them by running the function again. Two variants, as in torch:

- ``use_reentrant=True``: ``CheckpointFunction``, a custom ``autograd.Function`` whose forward
  runs the function under ``no_grad`` (no graph inside) and whose backward reruns it under
  ``enable_grad`` and runs a backward of its own through that graph (a reentrant backward).
- ``use_reentrant=False``: saved-tensor hooks. While the function runs, every tensor a node
  saves is packed into a ``_Holder`` instead (torch's Note [Nestable Checkpoint]: the innermost
  checkpoint manages what is saved in it; the inputs of a nested checkpoint are saved by its
  parent). The first unpack inside a backward call reruns the function (with the RNG state and
  the recompute context of the original call) under a hook that hands the recomputed tensors to
  the holders, in the order they were saved, and stops as soon as the last one needed is there.
  Recomputed tensors belong to one backward call (keyed by its graph task id) and are dropped
  as they are unpacked.

Inside a JAX trace (``jaxgrad.compile``) the recomputation's inputs pass through
``jax.lax.optimization_barrier``, so that XLA does not merge the recomputation back into the
forward (``jax.checkpoint``'s ``prevent_cse``).

Selective activation checkpointing (``create_selective_checkpoint_contexts``, as torch's): a
``TorchDispatchMode`` in the forward caches the outputs of the ops a policy saves, and one in the
recomputation hands them back instead of running those ops again.

>>> import jaxgrad
>>> from jaxgrad.utils.checkpoint import checkpoint
>>> calls = []
>>> def block(x):
...     calls.append("forward")
...     return x.sin().exp()
>>> x = jaxgrad.tensor([0.5, 1.0], requires_grad=True)
>>> y = checkpoint(block, x, use_reentrant=False)
>>> y.sum().backward(); calls
['forward', 'forward']
"""

from __future__ import annotations

import contextlib
import enum
import threading
import uuid
import warnings
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager as ContextManager
from typing import Any

import jax

from .._autograd.function import Function
from .._core.grad_mode import enable_grad, is_grad_enabled
from .._core.graph import SavedTensor, current_graph_task_id
from .._core.tensor import Tensor
from .._engine import autocast as _autocast
from .._engine.dispatch import OpOverload
from .._engine.engine import backward as _run_backward
from .._engine.engine import is_checkpoint_valid
from .._functions import random as random_state
from .._functions.creation import from_jax
from ..amp import autocast
from ..autograd.graph import saved_tensors_hooks
from ..autograd.profiler import profile
from ..nn import Sequential
from ..ops import aten
from ._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack
from ._pytree import tree_any, tree_map

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "detach_variable",
    "noop_context_fn",
    "set_checkpoint_early_stop",
    "set_checkpoint_debug_enabled",
    "GraphExecGroup",
    "CheckpointPolicy",
    "SelectiveCheckpointContext",
    "create_selective_checkpoint_contexts",
    "SAC_IGNORED_OPS",
]

USE_REENTRANT_MESSAGE = (
    "jaxgrad.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
    "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")
SEQUENTIAL_USE_REENTRANT_MESSAGE = (
    "jaxgrad.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
    "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")
GRAD_INCOMPATIBLE_MESSAGE = (
    "When use_reentrant=True, jaxgrad.utils.checkpoint is incompatible with .grad() or passing an "
    "`inputs` parameter to .backward(). To resolve this error, you can either set "
    "use_reentrant=False, or call .backward() without passing the `inputs` argument.")
SUPPRESSED_MESSAGE = (
    "jaxgrad.utils.checkpoint: the forward context provided by context_fn suppressed an exception "
    "raised during the checkpointed forward. This is not supported because checkpoint cannot "
    "return a value for a failed forward.")
DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`jaxgrad.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with jaxgrad.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""
INTERNAL_ERROR_MESSAGE = (
    "Something went unexpectedly wrong in activation checkpoint. Please report this bug by "
    "filing an issue to PyTorch.")


class CheckpointError(RuntimeError):
    """An error of non-reentrant checkpointing (non-determinism, a second unpack).

    >>> from jaxgrad.utils.checkpoint import CheckpointError
    >>> issubclass(CheckpointError, RuntimeError)
    True
    """


# --- global switches (module state, as torch's) -------------------------------------------------

_debug_enabled: bool | None = None  # set_checkpoint_debug_enabled; None: each call's ``debug``
_early_stop_enabled: bool | None = None  # set_checkpoint_early_stop; None: each call's own


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Within the block, every checkpoint runs with ``debug=enabled`` (None: each call's own
    ``debug`` argument applies).

    >>> import jaxgrad
    >>> from jaxgrad.utils import checkpoint as ckpt
    >>> with ckpt.set_checkpoint_debug_enabled(True):
    ...     y = ckpt.checkpoint(jaxgrad.sin, jaxgrad.ones(1, requires_grad=True),
    ...                         use_reentrant=False)
    >>> y.grad_fn.name()
    'SinBackward0'
    """
    global _debug_enabled
    previous = _debug_enabled
    _debug_enabled = enabled
    try:
        yield
    finally:
        _debug_enabled = previous


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Whether non-reentrant checkpoints made within the block stop their recomputation as soon
    as every tensor backward needs is recomputed (the default) or run the whole function.

    >>> import jaxgrad
    >>> from jaxgrad.utils import checkpoint as ckpt
    >>> ran = []
    >>> def f(x):
    ...     y = x.exp()
    ...     ran.append("after exp")
    ...     return y
    >>> x = jaxgrad.ones(1, requires_grad=True)
    >>> with ckpt.set_checkpoint_early_stop(False):
    ...     y = ckpt.checkpoint(f, x, use_reentrant=False)
    >>> y.backward(); len(ran)
    2
    >>> y = ckpt.checkpoint(f, x, use_reentrant=False); y.backward(); len(ran)
    3
    """
    global _early_stop_enabled
    previous = _early_stop_enabled
    _early_stop_enabled = enable
    try:
        yield
    finally:
        _early_stop_enabled = previous


def noop_context_fn() -> tuple[ContextManager, ContextManager]:
    """The default ``context_fn``: no context around the forward nor the recomputation.

    >>> from jaxgrad.utils.checkpoint import noop_context_fn
    >>> forward_context, recompute_context = noop_context_fn()
    >>> with forward_context, recompute_context:
    ...     pass
    """
    return contextlib.nullcontext(), contextlib.nullcontext()


# --- helpers of the reentrant variant ----------------------------------------------------------

def detach_variable(inputs: tuple) -> tuple:
    """Each tensor of ``inputs`` detached, keeping its ``requires_grad``; other values as they
    are.

    >>> import jaxgrad
    >>> from jaxgrad.utils.checkpoint import detach_variable
    >>> x = jaxgrad.ones(1, requires_grad=True) * 2
    >>> d, n = detach_variable((x, 3)); d.is_leaf, d.requires_grad, n
    (True, True, 3)
    """
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    detached = []
    for value in inputs:
        if isinstance(value, Tensor):
            copy = value.detach()
            copy.requires_grad = value.requires_grad
            value = copy
        detached.append(value)
    return tuple(detached)


def check_backward_validity(inputs: Any) -> None:
    """Warn when no tensor of ``inputs`` requires grad (a reentrant checkpoint then computes no
    gradient).

    >>> import warnings, jaxgrad
    >>> from jaxgrad.utils.checkpoint import check_backward_validity
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     check_backward_validity((jaxgrad.ones(1),))
    >>> str(caught[0].message)
    'None of the inputs have requires_grad=True. Gradients will be None'
    """
    if not any(value.requires_grad for value in inputs if isinstance(value, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


# --- RNG: the recomputation draws the numbers the forward drew ----------------------------------

def _tensors_in(value: Any) -> Iterator[Tensor]:
    """The tensors of a nested structure of tuples, lists and dicts."""
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors_in(item)


class _RngSnapshot:
    """The states of the default generators a function of ``args`` draws from: the CPU one
    and that of each device the tensors of ``args`` live on (torch's CPU state plus the states
    of the args' devices)."""

    def __init__(self, args: tuple) -> None:
        generators = [random_state.default_generator]
        for t in _tensors_in(args):
            generator = random_state.generator_for(t.device)
            if all(generator is not g for g in generators):
                generators.append(generator)
        self.states = _states(generators)

    @contextlib.contextmanager
    def restored(self) -> Iterator[None]:
        """Inside the block the generators are as at the snapshot; after it, as before it
        (torch's ``fork_rng`` plus ``set_rng_state``)."""
        outside = _states([g for g, _ in self.states])
        _set_states(self.states)
        try:
            yield
        finally:
            _set_states(outside)


# A generator's state is its key. Reading and writing it are JAX ops: inside a JAX trace
# (jax.jit of code using jaxgrad) they must stay concrete for a concrete key, or a tracer would
# be stored into the global generator. A traced key (jaxgrad.compile's) stays traced.

def _states(generators: list) -> list:
    with jax.ensure_compile_time_eval():
        return [(g, g.get_state()) for g in generators]


def _set_states(states: list) -> None:
    with jax.ensure_compile_time_eval():
        for generator, state in states:
            generator.set_state(state)


def _replaying(snapshot: _RngSnapshot | None) -> ContextManager:
    return contextlib.nullcontext() if snapshot is None else snapshot.restored()


class _AutocastSnapshot:
    """The autocast state of a checkpointed call, for its recomputation: that of the device type
    of its tensor arguments (torch's ``_infer_device_type``: the first non-CPU one, ``cuda`` if
    all are on the CPU) and that of the CPU (torch's ``_get_autocast_kwargs``)."""

    def __init__(self, args: tuple) -> None:
        types = [t.device.type for t in _tensors_in(args) if t.device.type != "cpu"]
        self.device_type = "cuda" if not types or "cuda" in types else types[0]
        self.device_kwargs = self._kwargs(self.device_type)
        self.cpu_kwargs = self._kwargs("cpu")

    @staticmethod
    def _kwargs(device_type: str) -> dict:
        return {"enabled": _autocast.is_enabled(device_type),
                "dtype": _autocast.get_dtype(device_type),
                "cache_enabled": _autocast.is_cache_enabled()}

    @contextlib.contextmanager
    def restored(self) -> Iterator[None]:
        """Inside the block autocast is as at the snapshot (torch enters ``autocast`` regions)."""
        with autocast(self.device_type, **self.device_kwargs), autocast("cpu", **self.cpu_kwargs):
            yield


class _RecomputeBarrier(Function):
    """Identity on tensors whose arrays XLA may not merge with the forward's values (what
    ``jax.checkpoint``'s ``prevent_cse`` does): inside a traced program (``jaxgrad.compile``)
    the recomputation then stays a recomputation instead of being folded into the forward."""

    @staticmethod
    def forward(ctx: Any, *tensors: Tensor) -> tuple:
        arrays = jax.lax.optimization_barrier([t.jax() for t in tensors])
        outputs = tuple(from_jax(a) for a in arrays)
        # an input that needs no grad gives an output that needs none: what the region's ops
        # save depends on which inputs require grad, and the recomputation must save the same
        ctx.mark_non_differentiable(*[out for out, needed in zip(outputs, ctx.needs_input_grad)
                                      if not needed])
        return outputs

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        return grads


def _behind_barrier(values: list) -> list:
    """``values`` with their tensors passed through one :class:`_RecomputeBarrier`, when they
    hold traced arrays (eagerly there is nothing for XLA to merge: the values are unchanged)."""
    positions = [i for i, v in enumerate(values)
                 if isinstance(v, Tensor) and isinstance(v._value, jax.core.Tracer)]
    if not positions:
        return values
    barred = _RecomputeBarrier.apply(*[values[i] for i in positions])
    values = list(values)
    for i, t in zip(positions, barred):
        values[i] = t
    return values


# --- the reentrant variant -----------------------------------------------------------------------

class CheckpointFunction(Function):
    """``checkpoint(..., use_reentrant=True)``: forward without a graph, backward reruns the
    function with grad enabled and backpropagates through that graph.

    >>> import jaxgrad
    >>> from jaxgrad.utils.checkpoint import CheckpointFunction
    >>> x = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = CheckpointFunction.apply(lambda t: t * t, True, x)
    >>> y.grad_fn.name()
    'CheckpointFunctionBackward'
    >>> y.sum().backward(); x.grad
    tensor([2., 4.])
    """

    @staticmethod
    def forward(ctx: Any, run_function: Callable, preserve_rng_state: bool, *args: Any) -> Any:
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.rng = _RngSnapshot(args) if preserve_rng_state else None
        ctx.autocast = _AutocastSnapshot(args)
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        if not is_checkpoint_valid():
            raise RuntimeError(GRAD_INCOMPATIBLE_MESSAGE)
        inputs = list(ctx.inputs)
        for index, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[index] = tensor
        with _replaying(ctx.rng):
            detached = detach_variable(tuple(inputs))
            with enable_grad(), ctx.autocast.restored():
                outputs = ctx.run_function(*_behind_barrier(list(detached)))
        outputs = (outputs,) if isinstance(outputs, Tensor) else outputs
        pairs = [(out, grad) for out, grad in zip(outputs, grads)
                 if isinstance(out, Tensor) and out.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        _run_backward([out for out, _ in pairs], [grad for _, grad in pairs])
        return (None, None) + tuple(t.grad if isinstance(t, Tensor) else None for t in detached)


# --- the non-reentrant variant: holders, handles and one frame per checkpoint call --------------

class _Handle:
    """The key of one recomputed tensor in its frame's per-backward table; dropping it (the
    holder lets go on unpack) drops the tensor."""

    __slots__ = ("__weakref__",)


class _Holder:
    """What the checkpoint's pack hook saves instead of a tensor: per backward call (graph
    task id), the handle of its recomputed tensor (None once unpacked)."""

    __slots__ = ("__weakref__", "handles")

    def __init__(self) -> None:
        self.handles: dict[Any, _Handle | None] = {}


class _StopRecomputation(Exception):
    """Raised by the recomputation's pack hook once every holder has its tensor."""


def _metadata(tensor: Tensor) -> dict:
    """What the default determinism check compares (cheap to read, easy to understand)."""
    return {"shape": tensor.shape, "dtype": tensor.dtype, "device": tensor.device}


_DETERMINISM_CHECKS: dict[str, Callable[[Tensor], Any]] = {
    "default": _metadata,
    "none": lambda _: None,
}


def _internal_assert(condition: bool) -> None:
    if not condition:
        raise AssertionError(INTERNAL_ERROR_MESSAGE)


class _CheckpointFrame:
    """One non-reentrant checkpoint call: its saved inputs, a weak reference to each holder its
    forward packed, their metadata, and per backward call (``gid``) the recomputed tensors."""

    def __init__(self, recompute_fn: Callable, early_stop: bool,
                 unpack_error_cb: Callable | None, metadata_fn: Callable) -> None:
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.unpack_error_cb = unpack_error_cb
        self.metadata_fn = metadata_fn
        self.saved_args: list = []
        self.weak_holders: list[weakref.ref] = []
        self.x_metadatas: list = []
        self.recomputed: defaultdict = defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter: defaultdict = defaultdict(int)
        self.is_recomputed: defaultdict = defaultdict(bool)
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, args: tuple) -> None:
        """Save the tensor inputs as a node saves an input (through an enclosing checkpoint's
        hooks, when nested: its Rule 2), other values as they are."""
        self.saved_args = [SavedTensor(a) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self) -> list:
        return [a.unpack() if isinstance(a, SavedTensor) else a for a in self.saved_args]

    def recompute(self, gid: Any) -> None:
        """Rerun the function under the recomputation hook (once per backward call)."""
        args = self.get_inputs()
        try:
            with _recomputation_hook(weakref.ref(self), gid), enable_grad():
                self.recompute_fn(*_behind_barrier(args))
        except _StopRecomputation:
            pass
        self.is_recomputed[gid] = True
        self.check_recomputed_tensors_match(gid)

    def check_recomputed_tensors_match(self, gid: Any) -> None:
        """torch's Note [Error handling for checkpoint]: as many tensors saved, each with the
        metadata it had in the forward."""
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "jaxgrad.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                f"{DEBUG_TIP}")
        mismatched = ""
        for index, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            handle = holder.handles.get(gid)
            _internal_assert(handle is not None and handle in self.recomputed[gid])
            saved, now = self.x_metadatas[index], self.metadata_fn(self.recomputed[gid][handle])
            if saved != now:
                mismatched += (f"tensor at position {index}:\nsaved metadata: {saved}\n"
                               f"recomputed metadata: {now}\n")
        if mismatched:
            raise CheckpointError(
                "jaxgrad.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{mismatched}.\n{DEBUG_TIP}")


class _recomputation_hook(saved_tensors_hooks):
    """The hooks active while a frame recomputes: each saved tensor goes to the holder at its
    position (Rule 4: the tensor stays only as long as the holder's handle), and is also kept
    by the recomputed graph itself (Rule 6: a backward inside the checkpointed function)."""

    def __init__(self, frame_ref: weakref.ref, gid: Any) -> None:
        def pack_hook(original: Tensor) -> Tensor:
            x = original.detach() if original.requires_grad else original
            frame = frame_ref()
            _internal_assert(frame is not None)
            index = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if index >= len(frame.weak_holders):
                return _extra_tensor(frame, x)
            holder = frame.weak_holders[index]()
            if holder is not None:  # None: a backward inside the forward already used it
                _internal_assert(holder.handles.get(gid) is None)
                handle = holder.handles[gid] = _Handle()
                frame.recomputed[gid][handle] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                _stopped_before_the_op_saving(original)
                raise _StopRecomputation
            return x

        super().__init__(pack_hook, lambda x: x)


def _stopped_before_the_op_saving(x: Tensor) -> None:
    """torch's autograd saves an op's inputs before running it, so an early stop on an input
    stops the recomputation before that op reaches the dispatcher; jaxgrad's saves them after.
    The innermost SAC recomputation mode (if any) forgets that op's dispatch: a cached output it
    gave back stays there for the next backward, as in torch."""
    for mode in reversed(_get_current_dispatch_mode_stack()):
        if isinstance(mode, _CachedTorchDispatchMode):
            mode._forget_last_dispatch_if_it_took(x)
            return


def _extra_tensor(frame: _CheckpointFrame, x: Tensor) -> Tensor:
    """A recomputation saving more tensors than the forward: fine while the forward itself is
    still running (a backward inside it, without early stop), an error afterwards."""
    _internal_assert(not frame.early_stop)
    if not frame.forward_completed:
        frame.ignore_saved_mismatch = True
        return x
    raise CheckpointError("jaxgrad.utils.checkpoint: trying to save more tensors during "
                          f"recomputation than during the original forward pass.\n{DEBUG_TIP}")


class _checkpoint_hook(saved_tensors_hooks):
    """The hooks active while a checkpointed function runs: a holder instead of each saved
    tensor; unpacking recomputes (once per backward call) and hands the tensor over once."""

    def __init__(self, frame: _CheckpointFrame) -> None:
        def pack_hook(x: Tensor) -> _Holder:
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder: _Holder) -> Tensor:
            gid = _backward_call_key()
            if not frame.is_recomputed[gid]:
                frame.recompute(gid)
            _internal_assert(gid in holder.handles)
            handle = holder.handles[gid]
            if handle is None:
                raise CheckpointError(_unpacked_twice_message())
            _internal_assert(handle in frame.recomputed[gid])
            holder.handles[gid] = None
            return frame.recomputed[gid][handle]

        def unpack_reporting_errors(holder: _Holder) -> Tensor:
            try:
                return unpack_hook(holder)
            except CheckpointError as error:
                frame.unpack_error_cb(error)
                raise

        super().__init__(pack_hook, unpack_hook if frame.unpack_error_cb is None
                         else unpack_reporting_errors)


def _unpacked_twice_message() -> str:
    extra = ""
    if GraphExecGroup._get_current_group() is not None:
        extra = ("Performing two backward calls that overlap (i.e. require the same saved "
                 "activation in order to compute gradients) is not allowed while under the "
                 "jaxgrad.utils.checkpoint.GraphExecGroup context. ")
    return ("jaxgrad.utils.checkpoint: Unpack is being triggered for a tensor that was already "
            f"unpacked once. {extra}If you are calling ctx.saved_tensors in backward, make sure "
            "to do so only once. Otherwise please open an issue with details on your use case.")


def _backward_call_key() -> Any:
    """What recomputed tensors are keyed by: the active GraphExecGroup, else the running
    backward call, else (an unpack outside backward) a fresh key."""
    group = GraphExecGroup._get_current_group()
    if group is not None:
        return group
    gid = current_graph_task_id()
    return gid if gid != -1 else int(uuid.uuid4())


class _GroupState(threading.local):
    group: GraphExecGroup | None = None


_group_state = _GroupState()


class GraphExecGroup:
    """Backward calls inside one block share recomputations: a checkpointed region reached by
    several of them is recomputed once (their uses of saved tensors must then be disjoint).
    Only non-reentrant checkpoints are affected.

    >>> import jaxgrad
    >>> from jaxgrad.utils.checkpoint import checkpoint, GraphExecGroup
    >>> runs = []
    >>> def f(x):
    ...     runs.append(1)
    ...     return x.sin(), x.exp()
    >>> x = jaxgrad.ones(1, requires_grad=True)
    >>> a, b = checkpoint(f, x, use_reentrant=False)
    >>> with GraphExecGroup():
    ...     _ = jaxgrad.autograd.grad(a, x)
    ...     _ = jaxgrad.autograd.grad(b, x)
    >>> len(runs)
    2
    """

    def __enter__(self) -> GraphExecGroup:
        current = _group_state.group
        if current is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{current}")
        _group_state.group = self
        return self

    def __exit__(self, *args: object) -> None:
        _group_state.group = None

    @classmethod
    def _get_current_group(cls) -> GraphExecGroup | None:
        return _group_state.group


# --- debug=True: the ops of the forward and of the recomputation, on an error -----------------

DEBUG_TEMPLATE = """ \
An error happened while unpacking tensors; dumping logs of latest computation
because you passed `debug=True` to `jaxgrad.utils.checkpoint.checkpoint()`.
Scroll all the way down for guidance on how to navigate these logs.

+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        1. Stack traces of the operators that ran in the original forward     |
+------------------------------------------------------------------------------+

{forward_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        2. Stack traces of the operators that ran during recomputation        |
+------------------------------------------------------------------------------+

{recompute_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|       3. Log of operators in the original forward and recomputation          |
+------------------------------------------------------------------------------+
(Scroll up to correlate stack traces with each operation listed below. This
 helps identify their source in the code.)

IMPORTANT: Differences in "detach" calls between the original forward and the
           recomputation are expected. They are introduced by the checkpointing
           mechanism and can be ignored.

Operations executed during the original forward:

{forward_ops}

Operations executed during recomputation:

{recompute_ops}

+------------------------------------------------------------------------------+
 ERROR: Detected non-determinism while running activation checkpointing

 You are seeing this error because you passed `debug=True` to checkpoint and
 tensors to be saved during the original forward and differ between those saved
 during recomputation. This can happen if different operators were ran in the
 original forward and in the recomputation.

 To identify where the mismatch may be coming from, you can do the following:

 1) Compare the operators ran during original forward and recomputation to
    see where they differ. These operators are printed above in the order they
    were executed.

 2) Review the stack trace for each operator to locate its invocation source.
    Each operator's stack trace is printed in their execution order.

 Note that the logs can be quite long. Here's how they are structured:
 (Tip: you can Ctrl-f for these headers)

 1. Stack traces of the operators that ran in the original forward
 2. Stack traces of the operators that ran during recomputation
 3. Log of operators in the original forward and recomputation
 4. Error message                                             <--- You are here
--------------------------------------------------------------------------------
"""


class _OpLog:
    """The ops run inside a block, recorded with jaxgrad's profiler (names and input shapes;
    the profiler records no stack traces, so those sections list the ops only)."""

    def __init__(self) -> None:
        self.ops: list[str] | None = None

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        recorder = profile(record_shapes=True)
        try:
            with recorder:
                yield
        finally:  # also when the recomputation stops early (by raising)
            self.ops = [f"{e.name} (input shapes: {e.input_shapes})"
                        for e in recorder.function_events]

    def traces(self, label: str) -> str:
        return "".join(f"{op}   ({i} of {len(self.ops)} in {label})\n\n\n"
                       for i, op in enumerate(self.ops, 1))


def _debug_context_and_error_cb() -> tuple[Callable, Callable]:
    forward_log, recompute_log = _OpLog(), _OpLog()

    def unpack_error_cb(error: CheckpointError) -> None:
        _internal_assert(forward_log.ops is not None and recompute_log.ops is not None)
        raise CheckpointError(DEBUG_TEMPLATE.format(
            forward_traces=forward_log.traces("original"),
            recompute_traces=recompute_log.traces("recompute"),
            forward_ops="\n".join(forward_log.ops),
            recompute_ops="\n".join(recompute_log.ops))) from error

    def context_fn() -> tuple[ContextManager, ContextManager]:
        return forward_log.recording(), recompute_log.recording()

    return context_fn, unpack_error_cb


# --- selective activation checkpointing ---------------------------------------------------------

class CheckpointPolicy(enum.Enum):
    """Whether an op's output in a checkpointed region is saved (``{MUST,PREFER}_SAVE``) or
    recomputed in backward (``{MUST,PREFER}_RECOMPUTE``). ``*_CPU_OFFLOAD`` is for compilers:
    in eager mode, as in torch's, such an output is recomputed."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


# (torch's eager SAC saves these two; the offload policies are recomputed outside torch.compile)
_SAVED_POLICIES = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)


class SelectiveCheckpointContext:
    """What a policy function receives first: ``is_recompute`` (always False: the policy runs
    in the forward only) and the op's output."""

    def __init__(self, *, is_recompute: bool, op_output: Any = None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


SAC_IGNORED_OPS = {aten.detach.default}  # (autograd's own detaches differ between the passes)

_RECOMPUTE = object()
_CONSUMED = object()
_SAC_MISMATCH_MSG = ("This can happen if the operations in the checkpointed region are "
                     "nondeterministic or depend on global state that changed between "
                     "forward and backward.")


class _VersionWrapper:
    """A cached output and its version when cached: reading it back checks it was not
    modified since (unless allowed)."""

    def __init__(self, val: Any) -> None:
        self.val = val  # (torch's attribute names: code reading a mode's storage uses them)
        self.version = val._version if isinstance(val, Tensor) else None

    def get_val(self, allow_cache_entry_mutation: bool) -> Any:
        if (self.version is not None and not allow_cache_entry_mutation
                and self.val._version != self.version):
            raise RuntimeError(
                "Tensor cached during selective activation checkpoint has been mutated")
        return self.val


def _detached(value: Any) -> Any:
    return value.detach() if isinstance(value, Tensor) else value


class _CachingTorchDispatchMode(TorchDispatchMode):
    """The forward's mode: runs each op, asks the policy, and caches (detached) the outputs of
    the ops to save, per op in call order."""

    def __init__(self, policy_fn: Callable, storage: dict) -> None:
        super().__init__()
        self.policy_fn, self.storage = policy_fn, storage
        self.func_counter: dict[Any, int] = defaultdict(int)

    def __torch_dispatch__(self, func: Any, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if func in SAC_IGNORED_OPS:
            return func(*args, **kwargs)
        out = func(*args, **kwargs)
        index = self.func_counter[func]
        self.func_counter[func] += 1
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out),
                                func, *args, **kwargs)
        if isinstance(policy, bool):
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        if policy in _SAVED_POLICIES:
            self.storage[func][index] = tree_map(lambda v: _VersionWrapper(_detached(v)), out)
        else:
            self.storage[func][index] = _RECOMPUTE
        return out


class _CachedTorchDispatchMode(TorchDispatchMode):
    """The recomputation's mode: an op whose output was cached gives it back (once); the others
    run again."""

    def __init__(self, policy_fn: Callable | None, storage: dict,
                 allow_cache_entry_mutation: bool = False) -> None:
        super().__init__()
        self.storage, self.allow_cache_entry_mutation = storage, allow_cache_entry_mutation
        self.func_counter: dict[Any, int] = defaultdict(int)
        self._last_dispatch: tuple | None = None  # (op, index, entry, args, out)

    def __enter__(self) -> _CachedTorchDispatchMode:
        self.func_counter.clear()  # (a second backward then reports the consumed entries)
        self._last_dispatch = None
        return super().__enter__()

    def __exit__(self, *args: Any) -> Any:
        self._last_dispatch = None  # (holds the last op's tensors)
        return super().__exit__(*args)

    def _forget_last_dispatch_if_it_took(self, x: Tensor) -> None:
        """Undo the last op's dispatch when ``x`` is one of its inputs (not an output): the
        early stop saving ``x`` comes before that op in torch."""
        last, self._last_dispatch = self._last_dispatch, None
        if last is None:
            return
        func, index, entry, args, out = last
        if _holds(out, x) or not _holds(args, x):
            return
        self.func_counter[func] -= 1
        self.storage[func][index] = entry

    def __torch_dispatch__(self, func: Any, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if func in SAC_IGNORED_OPS:
            return func(*args, **kwargs)
        index = self.func_counter[func]
        self.func_counter[func] += 1
        entries = self.storage.get(func)
        if entries is None:
            raise RuntimeError(f"{func} encountered during backward but not found in storage. "
                               f"{_SAC_MISMATCH_MSG}")
        entry = entries.get(index)
        if entry is None:
            raise RuntimeError(f"{func} invocation index {index} encountered during backward "
                               f"but not found in storage. {_SAC_MISMATCH_MSG}")
        if entry is _CONSUMED:
            raise RuntimeError(
                "Trying to backward an extra time. You are only allowed to backward once on any "
                "region computed under selective activation checkpoint.")
        if entry is _RECOMPUTE:
            out = func(*args, **kwargs)
        else:
            entries[index] = _CONSUMED
            out = tree_map(lambda v: v.get_val(self.allow_cache_entry_mutation), entry)
        # (an op autograd records saves its inputs right after this; one run with grad off, as
        # in a custom Function's forward, saves nothing: a later save is not its)
        self._last_dispatch = ((func, index, entry, (args, kwargs), out)
                               if is_grad_enabled() and _any_requires_grad((args, kwargs))
                               else None)
        return out


def _holds(tree: Any, x: Tensor) -> bool:
    """Whether ``x`` itself is a leaf of ``tree``."""
    return tree_any(lambda v: v is x, tree)


def _any_requires_grad(tree: Any) -> bool:
    return tree_any(lambda v: isinstance(v, Tensor) and v.requires_grad, tree)


def create_selective_checkpoint_contexts(
        policy_fn_or_list: Callable | list,
        allow_cache_entry_mutation: bool = False) -> tuple[ContextManager, ContextManager]:
    """The two contexts (forward, recomputation) of selective activation checkpointing, for
    ``checkpoint(..., use_reentrant=False, context_fn=partial(this, policy))``: the outputs of
    the ops the policy saves are kept from the forward, the others recomputed in backward.

    ``policy_fn_or_list``: a function ``(ctx, op, *args, **kwargs) -> CheckpointPolicy`` (or a
    bool: True saves), or a list of op overloads to save (``jaxgrad.ops.aten.mm.default``).

    >>> import functools, jaxgrad
    >>> from jaxgrad.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts
    >>> x = jaxgrad.ones(3, 3, requires_grad=True)
    >>> context_fn = functools.partial(create_selective_checkpoint_contexts,
    ...                                [jaxgrad.ops.aten.mm.default])
    >>> y = checkpoint(lambda a: (a @ a).sin(), x, use_reentrant=False, context_fn=context_fn)
    >>> y.sum().backward(); x.grad[0]
    tensor([-5.9400, -5.9400, -5.9400])
    """
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, OpOverload):
                hint = ("Please update the OpOverloadPacket to a specific OpOverload.For "
                        "example, if you have `torch.ops.aten.mm`, change it to "
                        "`torch.ops.aten.mm.default`." if hasattr(op, "_qualified_op_name")
                        else "")
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} "
                                 f"of type {type(op)}. {hint}")
        ops_to_save = list(policy_fn_or_list)

        def policy_fn(ctx: SelectiveCheckpointContext, op: Any, *args: Any,
                      **kwargs: Any) -> CheckpointPolicy:
            return (CheckpointPolicy.MUST_SAVE if op in ops_to_save
                    else CheckpointPolicy.PREFER_RECOMPUTE)
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: dict = defaultdict(dict)
    return (_CachingTorchDispatchMode(policy_fn, storage),
            _CachedTorchDispatchMode(None, storage, allow_cache_entry_mutation))


# --- the non-reentrant checkpoint call ---------------------------------------------------------

def _checkpoint_without_reentrant(function: Callable, preserve_rng_state: bool,
                                  context_fn: Callable, determinism_check: str, debug: bool,
                                  early_stop: bool, args: tuple, kwargs: dict) -> Any:
    unpack_error_cb = None
    if _debug_enabled if _debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        context_fn, unpack_error_cb = _debug_context_and_error_cb()
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, "
                         f"but got {determinism_check}")
    forward_context, recompute_context = context_fn()
    rng = _RngSnapshot(args) if preserve_rng_state else None
    autocast_state = _AutocastSnapshot(args)

    def recompute_fn(*inputs: Any) -> None:
        with _replaying(rng), autocast_state.restored(), recompute_context:
            function(*inputs, **kwargs)

    frame = _CheckpointFrame(
        recompute_fn, _early_stop_enabled if _early_stop_enabled is not None else early_stop,
        unpack_error_cb, _DETERMINISM_CHECKS[determinism_check])
    if not is_grad_enabled():
        return function(*args, **kwargs)
    frame.save_inputs(args)
    suppressed = True
    with _checkpoint_hook(frame), forward_context:
        result = function(*args, **kwargs)
        suppressed = False
    if suppressed:
        raise RuntimeError(SUPPRESSED_MESSAGE)
    frame.forward_completed = True
    return result


# --- public entry points -------------------------------------------------------------------------

def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], tuple[ContextManager, ContextManager]] = noop_context_fn,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """Run ``function(*args, **kwargs)`` without keeping its intermediate tensors for backward;
    backward recomputes them by running ``function`` again (with the same random numbers when
    ``preserve_rng_state``). Pass ``use_reentrant`` explicitly: ``False`` (recommended) works
    with ``autograd.grad``, ``backward(inputs=...)``, keyword arguments and nested checkpoints;
    ``True`` is torch's original custom-Function variant (the default, with a warning).

    ``context_fn`` returns two context managers, for the forward and for the recomputation;
    ``determinism_check`` (``"default"``: shapes, dtypes, devices; or ``"none"``) compares the
    recomputed tensors with the forward's; ``debug=True`` adds the ops of both runs to its error;
    ``early_stop`` stops the recomputation once every needed tensor is back. These four are for
    ``use_reentrant=False`` only.

    >>> import jaxgrad
    >>> from jaxgrad.utils.checkpoint import checkpoint
    >>> x = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = checkpoint(lambda t, scale: (t * scale).exp(), x, scale=0.5, use_reentrant=False)
    >>> jaxgrad.autograd.grad(y.sum(), x)
    (tensor([0.8244, 1.3591]),)
    """
    if use_reentrant is None:
        warnings.warn(USE_REENTRANT_MESSAGE, stacklevel=2)
        use_reentrant = True
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _checkpoint_without_reentrant(function, preserve_rng_state, context_fn,
                                         determinism_check, debug, early_stop, args, kwargs)


def checkpoint_sequential(functions: Any, segments: int, input: Any,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Run ``functions`` (a list of callables or an ``nn.Sequential``) one after another on
    ``input``, as ``segments`` chunks: every chunk but the last is checkpointed.

    >>> import jaxgrad
    >>> from jaxgrad.utils.checkpoint import checkpoint_sequential
    >>> x = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = checkpoint_sequential([jaxgrad.exp, jaxgrad.sin, jaxgrad.cos], 2, x,
    ...                           use_reentrant=False)
    >>> y.grad_fn.name()
    'CosBackward0'
    """
    if use_reentrant is None:
        warnings.warn(SEQUENTIAL_USE_REENTRANT_MESSAGE, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(_run_segment(functions, start, end), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return _run_segment(functions, end + 1, len(functions) - 1)(input)


def _run_segment(functions: list, start: int, end: int) -> Callable:
    def forward(input: Any) -> Any:
        for j in range(start, end + 1):
            input = functions[j](input)
        return input

    return forward
