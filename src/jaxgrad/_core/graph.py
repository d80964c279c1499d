"""The autograd graph: nodes (``grad_fn``), saved tensors, hooks on nodes and their handles.

A node's ``next_edges`` are ``(node, input_nr)`` pairs or ``None`` (an input that needs no
gradient), exactly torch's ``next_functions``. Each node class is named as torch names it
(``MulBackward0``, ``AccumulateGrad``, ...), so ``type(y.grad_fn).__name__`` and reprs match.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from . import anomaly as _anomaly
from .dtypes import dtype as _dtype
from .dtypes import from_numpy_dtype, legacy_type_name
from .epoch import changed as structure_changed
from .grad_mode import _state as _grad_state
from .typename import public_path, type_name

_sequence = itertools.count()


def sequence_mark() -> int:
    """A sequence number below every node created from now on (it takes one number)."""
    return next(_sequence)


ACCUMULATE_SEQ = float("inf")  # torch gives AccumulateGrad UINT64_MAX: it runs as soon as ready

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed when "
    "you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)


@public_path("jaxgrad.autograd.graph")
class GradientEdge(NamedTuple):
    """Where a gradient enters the graph: the ``node`` that receives it and its input number
    ``output_nr`` (torch.autograd.graph.GradientEdge; ``ownership_token`` keeps a graph alive
    where ``node`` alone would not, which never happens here: nodes are Python objects).

    >>> import jaxgrad
    >>> x = jaxgrad.ones(2, requires_grad=True)
    >>> jaxgrad.autograd.graph.get_gradient_edge(x * 2).node.name()
    'MulBackward0'
    """

    node: Any
    output_nr: int
    ownership_token: Any = None




class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters (also as a context)."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict: HookDict) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._next_id)
        structure_changed()  # the caller is about to add a hook

    def remove(self) -> None:
        hooks = self.hooks_dict_ref()
        if hooks is not None and self.id in hooks:
            del hooks[self.id]
            structure_changed()

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


# The hook dicts are plain OrderedDicts, as in torch (``Tensor._backward_hooks`` prints as
# ``OrderedDict([...])``); unlike dict, OrderedDict can be weakly referenced by the handles.
HookDict = OrderedDict


def add_hook(hooks: HookDict, fn: Callable, prepend: bool = False) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


class _SavedHooksState(threading.local):
    """The default saved-tensor hooks of this thread (torch's SavedTensorDefaultHooksTLS):
    a stack of (pack, unpack) pairs, innermost last, and the message of an active
    ``disable_saved_tensors_hooks`` (None: enabled)."""

    disabled_message: str | None = None

    def __init__(self) -> None:
        self.stack: list[tuple[Callable, Callable]] = []


saved_hooks_state = _SavedHooksState()


def push_saved_tensors_hooks(pack_hook: Callable, unpack_hook: Callable) -> None:
    """Make (pack, unpack) the hooks of every tensor saved from now on (innermost wins)."""
    state = saved_hooks_state
    if state.disabled_message is not None:
        raise RuntimeError(state.disabled_message)
    state.stack.append((pack_hook, unpack_hook))


def pop_saved_tensors_hooks() -> None:
    saved_hooks_state.stack.pop()


def disable_saved_tensors_hooks(message: str | None) -> None:
    """Disable (``message``: the error to raise on use) or re-enable (None) default hooks."""
    state = saved_hooks_state
    state.disabled_message = message
    if message is not None and state.stack:
        raise RuntimeError(message)


@contextlib.contextmanager
def saved_tensors_hooks_disabled(message: str) -> Iterator[None]:
    """Inside the block, default saved-tensor hooks raise ``RuntimeError(message)`` (torch's
    ``disable_saved_tensors_hooks``); the previous state comes back on exit."""
    previous = saved_hooks_state.disabled_message
    try:
        disable_saved_tensors_hooks(message)
        yield
    finally:
        disable_saved_tensors_hooks(previous)


class _RunningGraphTasks(threading.local):
    """The backward calls (graph tasks) running in this thread, innermost last: torch's
    thread-local ``current_graph_task``. A task object offers ``id`` (an int, unique) and
    ``will_execute(node)``."""

    def __init__(self) -> None:
        self.stack: list = []


_running_tasks = _RunningGraphTasks()


class graph_task_running:
    """Context manager the engine enters while it runs ``task`` (a backward call), so that
    hooks can ask which backward call they run in (:func:`current_graph_task`). As torch's
    engine restores the thread-local state it captured with the task, changes that hooks make
    to the saved-tensor hooks stack during the call are undone when it ends."""

    __slots__ = ("saved_hooks", "task")

    def __init__(self, task: Any) -> None:
        self.task = task
        self.saved_hooks: tuple = ()

    def __enter__(self) -> None:
        self.saved_hooks = (list(saved_hooks_state.stack), saved_hooks_state.disabled_message)
        _running_tasks.stack.append(self.task)

    def __exit__(self, *exc: object) -> None:
        _running_tasks.stack.pop()
        saved_hooks_state.stack[:], saved_hooks_state.disabled_message = self.saved_hooks


def current_graph_task() -> Any:
    """The innermost backward call running in this thread, or None."""
    stack = _running_tasks.stack
    return stack[-1] if stack else None


def running_graph_tasks() -> tuple:
    """The backward calls running in this thread, outermost first."""
    return tuple(_running_tasks.stack)


def current_graph_task_id() -> int:
    """torch._C._current_graph_task_id: the running backward call's id, -1 outside one."""
    task = current_graph_task()
    return -1 if task is None else task.id


def will_engine_execute_node(node: Node) -> bool:
    """torch._C._will_engine_execute_node: whether the running backward call executes
    ``node`` (reachable from its roots and, with ``inputs``, on a path to one)."""
    if not isinstance(node, Node):
        raise RuntimeError("_will_engine_execute_node expects an grad_fn, but got "
                           f"{type_name(node)}")
    task = current_graph_task()
    if task is None:
        raise RuntimeError("_get_should_execute_nodes should only be called during the backward "
                           "pass")
    return task.will_execute(node)


REGISTER_FREED_MESSAGE = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values "
    "of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you need "
    "to access saved variables after calling backward."
)
DETACHED_INPLACE_MESSAGE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is "
    "not supported, please use out-of-place `.detach()` instead"
)
PACK_INPLACE_MESSAGE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack "
    "hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the input "
    "to a pack hook."
)


# forward AD's mark (see _forward_ad) on a saved output as unpacked: the tensor whose tangent it
# shares (``SavedTensor.tangent_source``)
TANGENT_SOURCE = "_fw_tangent_source"


_FROM_PYTHON = object()


class SavedTensor:
    """A tensor saved for backward plus the version it had then (torch's SavedVariable).

    Without hooks, a saved input (or a leaf) is kept as the very tensor object; a saved *output*
    of the owning node is kept without its ``grad_fn`` (torch keeps a weak reference there):
    holding the node would make a reference cycle, and graphs would then only be freed by the
    cyclic garbage collector. Unpacking gives a fresh tensor whose grad_fn is the owner again,
    as torch's ``grad_fn._saved_result`` does.

    With pack/unpack hooks (the innermost ``saved_tensors_hooks`` when the tensor is saved, or
    ``grad_fn._raw_saved_<name>.register_hooks``) only what ``pack`` returned is kept, with the
    tensor's autograd metadata (grad_fn, output number, requires_grad); each unpack calls
    ``unpack`` and gives its result that metadata back. The version counter is then not checked:
    torch cannot follow versions through the hooks. ``_raw_saved_<name>`` hands this object out.
    Only autograd makes them, as torch's (``jaxgrad.autograd.SavedTensor()`` raises).

    >>> import jaxgrad
    >>> x = jaxgrad.ones(2, requires_grad=True)
    >>> saved = (x * x).grad_fn._raw_saved_self
    >>> isinstance(saved, jaxgrad.autograd.SavedTensor)
    True
    """

    __slots__ = ("__weakref__", "freed", "grad_acc", "grad_fn", "has_history", "hooks",
                 "is_leaf", "is_output", "output_nr", "packed", "requires_grad",
                 "saved_original", "tangent_source", "tensor", "version")

    def __init__(self, tensor=_FROM_PYTHON, output_nr: int | None = None,
                 differentiable: bool | None = None) -> None:
        if tensor is _FROM_PYTHON:  # (torch's SavedTensor is made by autograd only)
            raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")
        self.freed = False
        self.hooks = self.packed = self.grad_fn = self.grad_acc = None
        self.tangent_source = None  # forward AD: the tensor whose tangent unpacked aliases share
        self.requires_grad = False
        if tensor is None:  # torch's default-constructed SavedVariable: unpacks as None
            self.tensor, self.version, self.is_output, self.output_nr = None, 0, False, 0
            self.is_leaf, self.has_history, self.saved_original = True, False, False
            return
        self.version = tensor._vc.value
        self.is_output = output_nr is not None  # the owner's output number, for outputs
        # a non-differentiable output (max_pool2d's indices) unpacks without history, as torch
        if differentiable is None:
            differentiable = tensor._requires_grad
        self.has_history = self.is_output and differentiable
        self.is_leaf = (not differentiable) if self.is_output else tensor.grad_fn is None
        self.output_nr = output_nr if self.is_output else tensor._output_nr
        state = saved_hooks_state
        if state.stack and state.disabled_message is None:
            pack, unpack = state.stack[-1]
            self.saved_original = False
            self._save_metadata(tensor)
            self.tensor = None
            self._pack(tensor, pack, unpack)
            return
        self.saved_original = not self.is_output or self.is_leaf
        self.tensor = tensor if self.saved_original else tensor._alias(share_version=True)

    def _save_metadata(self, tensor) -> None:
        if self.is_leaf:
            self.requires_grad = tensor._requires_grad
            if tensor._requires_grad and not self.is_output:
                self.grad_acc = tensor._grad_accumulator
        elif not self.is_output:
            self.grad_fn = tensor.grad_fn

    def _pack(self, tensor, pack: Callable, unpack: Callable) -> None:
        """Call ``pack`` (under no_grad) and keep what it returns (torch's
        set_hooks_and_pack_data)."""
        self.hooks = (pack, unpack)
        version = tensor._vc.value
        previous = _grad_state.grad, _grad_state.grad_mode
        _grad_state.grad = _grad_state.grad_mode = False
        try:
            self.packed = pack(tensor)
        finally:
            _grad_state.grad, _grad_state.grad_mode = previous
        if tensor._vc.value != version:
            raise RuntimeError(PACK_INPLACE_MESSAGE)

    # -- torch's SavedTensor API (grad_fn._raw_saved_<name>) ----------------------------------
    def register_hooks(self, *hooks: Callable, **kwargs: Any) -> None:
        """``register_hooks(pack_hook, unpack_hook)``: pack this saved tensor now with
        ``pack_hook``; each later unpack (in backward, or ``grad_fn._saved_<name>``) calls
        ``unpack_hook`` on what it returned."""
        if len(hooks) != 2 or kwargs or not all(map(callable, hooks)):
            invoked = ", ".join([repr(self), *map(repr, hooks)])
            if kwargs:
                invoked += "; kwargs: " + ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
            raise TypeError("register_hooks(): incompatible function arguments. The following "
                            "argument types are supported:\n    1. (self: jaxgrad._C._autograd."
                            "SavedTensor, arg0: collections.abc.Callable, arg1: collections.abc."
                            f"Callable) -> None\n\nInvoked with: {invoked}")
        pack_hook, unpack_hook = hooks
        if self.hooks is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already "
                               "been set. Hint: only one pair of hooks is allowed at a time.")
        if self.tensor is None:
            if self.freed:
                raise RuntimeError(REGISTER_FREED_MESSAGE)
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                               "forbidden")
        data = self.tensor
        if self.saved_original:
            self._save_metadata(data)
            data = data._alias(share_version=True)  # torch packs a detached alias
        self._pack(data, pack_hook, unpack_hook)
        self.tensor = None

    @property
    def data(self) -> Any:
        """What is kept: the saved tensor (an output without its history), what the pack hook
        returned, or None once freed."""
        return self.packed if self.hooks is not None else self.tensor

    @property
    def unpack_hook(self) -> Callable | None:
        return None if self.hooks is None else self.hooks[1]

    def release(self) -> None:
        """Free the saved data (after a backward without retain_graph)."""
        if self.tensor is not None or self.hooks is not None:
            self.freed = True
        self.tensor = self.hooks = self.packed = self.grad_fn = self.grad_acc = None

    # -- unpacking ------------------------------------------------------------------------------
    def unpack(self, owner: Node | None = None):
        """The saved tensor, checked against in-place changes (torch's SavedVariable::unpack);
        ``owner`` is the node it was saved for."""
        hooks, t = self.hooks, self.tensor
        if t is None and hooks is None:
            if not self.freed:
                return None
            raise RuntimeError(FREED_MESSAGE)
        if hooks is None:
            grad_fn = t.grad_fn if self.saved_original else None
        else:
            grad_fn = self.grad_fn
        if not self.is_leaf and grad_fn is None:
            if owner is None or self.saved_original:
                raise RuntimeError(DETACHED_INPLACE_MESSAGE)
            grad_fn = owner
        if hooks is None:
            if t._vc.value != self.version:
                raise RuntimeError(self._modified_message(owner))
            if self.saved_original:
                return t
            data = t
        else:
            data = hooks[1](self.packed)
            if not _is_tensor(data):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                                f"got result of type {type_name(data)}")
        if grad_fn is None and not self.requires_grad and not data._requires_grad:
            return data
        var = data._alias(share_version=True)
        if self.tangent_source is not None:
            var.__dict__[TANGENT_SOURCE] = self.tangent_source
        if grad_fn is not None:
            var._requires_grad, var._grad_node, var._output_nr = True, grad_fn, self.output_nr
        else:
            var._requires_grad = self.requires_grad
            if self.grad_acc is not None:
                var._grad_acc = weakref.ref(self.grad_acc)
        return var

    def _modified_message(self, owner: Node | None) -> str:
        t = self.tensor
        producer, output_nr = owner, self.output_nr
        if not self.is_output:  # a saved input: torch names its current producer
            producer, output_nr = t.grad_fn, t.output_nr
        where = ""
        if producer is not None:
            where = f", which is output {output_nr} of {_op_name(producer)},"
        return (
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [jaxgrad.{legacy_type_name(t.dtype)} {list(t.shape)}]{where} is "
            f"at version {t._vc.value}; expected version {self.version} instead. Hint: "
            + (_ANOMALY_HINT if _anomaly.state.enabled else _ENABLE_ANOMALY_HINT))


_ENABLE_ANOMALY_HINT = (
    "enable anomaly detection to find the operation that failed to compute its gradient, with "
    "jaxgrad.autograd.set_detect_anomaly(True, check_nan=False).")
_ANOMALY_HINT = (
    "the backtrace further above shows the operation that failed to compute its gradient. The "
    "variable in question was changed in there or anywhere later. Good luck!")


def _is_tensor(x: Any) -> bool:
    """Whether ``x`` is a jaxgrad Tensor (the graph layer sits below the Tensor class)."""
    return hasattr(type(x), "_vc") and hasattr(type(x), "_cell")


def _op_name(node: Node) -> str:
    """How torch's message names a node: ``ExpBackward0`` is ``Exp``, ``EluBackward1``
    ``Elu1``."""
    return re.sub(r"Backwards?0?(\d*)$", r"\1", type(node).__name__)


class InputMetadata(NamedTuple):
    """What a node knows of one gradient it receives (torch's ``_InputMetadata``)."""

    shape: tuple
    dtype: Any
    is_nested_tensor: bool = False
    is_cpp_nested_tensor: bool = False


class Node:
    """A backward function (``grad_fn``). Subclasses implement ``apply(grads) -> grads``.
    (``jaxgrad.autograd.graph.Node``, the public type, counts every subclass as its own.)

    >>> import jaxgrad
    >>> y = jaxgrad.ones(2, requires_grad=True) * 2
    >>> y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()
    ('MulBackward0', 'torch::autograd::AccumulateGrad')
    """

    __slots__ = ("__weakref__", "_post_hooks", "_pre_hooks", "_retains", "_tensor_hooks",
                 "metadata_", "next_edges", "out_meta", "seq")

    def __init__(self, next_edges: tuple, out_meta: tuple, seq: float | None = None) -> None:
        self.next_edges = next_edges
        self.out_meta = out_meta  # (shape, dtype) of each forward output this node receives
        self.seq = next(_sequence) if seq is None else seq
        self._tensor_hooks: list | None = None  # [(output_nr, HookDict)] in registration order
        self._retains: dict | None = None  # output_nr -> weakref to the tensor retaining grad
        self._pre_hooks: HookDict | None = None
        self._post_hooks: HookDict | None = None
        self.metadata_ = None
        if _anomaly.state.enabled:  # torch records the forward traceback when a node is made
            _anomaly.record(self)

    # -- torch's public Node API --------------------------------------------------------
    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        return tuple((None, 0) if e is None else e for e in self.next_edges)

    @property
    def metadata(self) -> dict:
        if self.metadata_ is None:
            self.metadata_ = {}
        return self.metadata_

    def _sequence_nr(self) -> int:
        """The order of creation the engine runs nodes by (AccumulateGrad: torch's UINT64_MAX)."""
        return 2**64 - 1 if self.seq == ACCUMULATE_SEQ else self.seq

    def _set_sequence_nr(self, sequence_nr: int) -> None:
        self.seq = ACCUMULATE_SEQ if sequence_nr == 2**64 - 1 else sequence_nr

    @property
    def _input_metadata(self) -> tuple:
        """Shape and dtype of each gradient this node receives (one per forward output)."""
        return tuple(InputMetadata(tuple(shape), dt if isinstance(dt, _dtype)
                                   else from_numpy_dtype(dt))
                     for shape, dt in self.out_meta)

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` after this node runs; may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = HookDict()
        return add_hook(self._post_hooks, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs)`` before this node runs; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = HookDict()
        return add_hook(self._pre_hooks, fn)

    def __call__(self, *grads: Any) -> Any:
        if len(grads) != len(self.out_meta):
            raise TypeError(f"expected {len(self.out_meta)} arguments, got {len(grads)} instead")
        for i, g in enumerate(grads):
            if g is not None and not hasattr(g, "_value"):
                raise TypeError(f"argument {i} is not a Variable")
        out = self.apply(list(grads), _grad_state.grad)  # differentiable in grad mode, as torch
        return out[0] if len(out) == 1 else tuple(out)

    # -- engine interface -----------------------------------------------------------------
    def apply(self, grads: list, create_graph: bool, wanted: tuple | None = None) -> list:
        """Gradients for ``next_edges``; ``wanted`` masks the ones the engine will use."""
        raise NotImplementedError

    def release_variables(self) -> None:
        """Free saved tensors (after a backward without retain_graph)."""

    def tensor_hooks_for(self, output_nr: int) -> HookDict:
        """The hook dict for tensor hooks on output ``output_nr`` (created on first use)."""
        if self._tensor_hooks is None:
            self._tensor_hooks = []
        hooks = HookDict()
        self._tensor_hooks.append((output_nr, hooks))
        return hooks


_NODE_CLASSES: dict[str, type] = {}


def node_class(name: str, base: type) -> type:
    """A Node subclass called ``name`` (``MulBackward0``) so that reprs match torch's (its C++
    node classes print without a module: ``<class 'MulBackward0'>``)."""
    key = f"{base.__name__}.{name}"
    cls = _NODE_CLASSES.get(key)
    if cls is None:
        cls = type(name, (base,), {"__slots__": (), "__module__": "builtins"})
        _NODE_CLASSES[key] = cls
    return cls


class DelayedError(Node):
    """torch's DelayedError node (named ``Error``): a gradient that cannot be differentiated
    again; its backward raises ``message``.

    >>> from jaxgrad._core.graph import DELAYED_ERROR
    >>> DELAYED_ERROR((), ()).name(), DELAYED_ERROR.__name__
    ('torch::autograd::Error', 'Error')
    """

    __slots__ = ("message",)

    def name(self) -> str:
        return "torch::autograd::Error"  # torch's C++ class name, as AccumulateGrad's

    def apply(self, grads: list, create_graph: bool, wanted: tuple | None = None) -> list:
        """Raise the node's message."""
        raise RuntimeError(self.message)


DELAYED_ERROR = node_class("Error", DelayedError)  # torch's DelayedError node is named Error


class NotImplementedNode(DelayedError):
    """torch's NotImplemented node as its autograd fallback records it (an ``out=`` of an op
    without a formula, ``floor_divide``): edges to the tensors that required grad; its backward
    raises ``message``.

    >>> from jaxgrad._core.graph import NOT_IMPLEMENTED
    >>> NOT_IMPLEMENTED((), ()).name(), NOT_IMPLEMENTED.__name__
    ('torch::autograd::NotImplemented', 'NotImplemented')
    """

    __slots__ = ()

    def name(self) -> str:
        return "torch::autograd::NotImplemented"


NOT_IMPLEMENTED = node_class("NotImplemented", NotImplementedNode)


@public_path("builtins")  # a C++ class in torch: <class 'AccumulateGrad'>
class AccumulateGrad(Node):
    """The node that accumulates a leaf's gradient into its ``.grad``.

    It only holds the leaf: accumulating runs ops, which live above the graph, so the engine
    (``_engine/engine.py``: ``accumulate_grad``) does the work for these nodes and gives the class
    its ``apply`` (a direct call ``acc(grad)`` accumulates, as in torch).
    """

    __slots__ = ("lock", "variable")

    def __init__(self, variable) -> None:
        layout, array = variable._layout, variable._cell.array  # (no Size, no dtype object)
        super().__init__((), ((array.shape if layout is None else layout.shape, array.dtype),),
                         seq=ACCUMULATE_SEQ)
        self.variable = variable
        # torch's per-node mutex: backward calls in several threads accumulate into one leaf
        # (reentrant: a post-accumulate hook may run a backward that reaches the same leaf)
        self.lock = threading.RLock()

    def name(self) -> str:
        # torch's C++ class name, which its users match on (not a module path to respell)
        return "torch::autograd::AccumulateGrad"


@public_path("builtins")  # a C++ class in torch: <class 'GraphRoot'>
class GraphRoot(Node):
    """The engine's entry node: hands the root gradients to the roots' grad_fns."""

    __slots__ = ("grads",)

    def __init__(self, edges: tuple, grads: list) -> None:
        super().__init__(edges, (), seq=ACCUMULATE_SEQ)
        self.grads = grads

    def apply(self, grads: list, create_graph: bool, wanted: tuple | None = None) -> list:
        return list(self.grads)
