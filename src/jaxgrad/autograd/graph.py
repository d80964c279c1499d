"""``torch.autograd.graph``: the Node type of every ``grad_fn``, gradient edges, hooks across
several tensors, and the saved-tensor hooks.

``saved_tensors_hooks(pack, unpack)`` makes ``pack`` run on every tensor a node saves for
backward while the block is active (the innermost block wins), and ``unpack`` on what ``pack``
returned whenever backward (or ``grad_fn._saved_<name>``) needs the tensor back. The hook stack
is thread-local, as torch's. ``allow_mutation_on_saved_tensors`` is built on such hooks plus a
watch on storage writes that clones a saved tensor before it is overwritten.
"""

from __future__ import annotations

import abc
import contextlib
import functools
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from typing import Any, Literal
from weakref import WeakKeyDictionary, WeakValueDictionary

from .._core.grad_mode import no_grad
from .._core.graph import GradientEdge as GradientEdge
from .._core.graph import Node as _NodeBase
from .._core.graph import RemovableHandle as _RemovableHandle
from .._core.graph import current_graph_task_id as _current_graph_task_id
from .._core.graph import pop_saved_tensors_hooks as _pop
from .._core.graph import push_saved_tensors_hooks as _push
from .._core.graph import saved_tensors_hooks_disabled as _hooks_disabled
from .._core.graph import will_engine_execute_node as _will_engine_execute_node
from .._core.storage import write_watchers as _write_watchers
from .._core.tensor import Tensor
from .._functions.creation import empty

__all__ = [
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
    "register_multi_grad_hook",
    "allow_mutation_on_saved_tensors",
    "Node",
    "GradientEdge",
    "get_gradient_edge",
    "increment_version",
]


class Node(abc.ABC):
    """The type of every ``grad_fn`` (and AccumulateGrad, and custom Functions' backward
    nodes): an abstract class that counts them as its subclasses without being in their MRO,
    as torch's "virtual" base class does.

    >>> import jaxgrad
    >>> b = jaxgrad.ones(2, requires_grad=True).exp()
    >>> isinstance(b.grad_fn, jaxgrad.autograd.graph.Node), b.grad_fn.name()
    (True, 'ExpBackward0')
    """

    @abc.abstractmethod
    def name(self) -> str:
        """The node's name (``MulBackward0``)."""
        raise NotImplementedError

    @property
    @abc.abstractmethod
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        raise NotImplementedError

    @abc.abstractmethod
    def metadata(self) -> dict:
        """A dict for the user to store anything in."""
        raise NotImplementedError

    @abc.abstractmethod
    def _sequence_nr(self) -> int:
        raise NotImplementedError

    @property
    @abc.abstractmethod
    def _input_metadata(self) -> list[Any]:
        raise NotImplementedError

    @abc.abstractmethod
    def _register_hook_dict(self, tensor: Tensor) -> None:
        raise NotImplementedError

    @abc.abstractmethod
    def register_hook(self, fn: Callable[..., Any]) -> _RemovableHandle:
        """Call ``fn(grad_inputs, grad_outputs)`` after the node ran; a returned tuple replaces
        ``grad_inputs``."""
        raise NotImplementedError

    @abc.abstractmethod
    def register_prehook(self, fn: Callable[..., Any]) -> _RemovableHandle:
        """Call ``fn(grad_outputs)`` before the node runs; a returned tuple replaces
        ``grad_outputs``."""
        raise NotImplementedError

    @classmethod
    def __subclasshook__(cls, subclass: type) -> bool:
        if cls is Node and isinstance(subclass, type) and issubclass(subclass, _NodeBase):
            return True
        return NotImplemented


def _get_grad_fn_or_grad_acc(t: Tensor | GradientEdge) -> Any:
    """The node a gradient for ``t`` reaches: its grad_fn, or a leaf's AccumulateGrad."""
    if isinstance(t, GradientEdge):
        return t.node
    edge = t._gradient_edge() if t.requires_grad else None
    if edge is None:
        raise AssertionError("Expected gradient function to be set")
    return edge[0]


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge through which ``tensor``'s gradient is computed: ``autograd.grad(loss,
    get_gradient_edge(x))`` equals ``autograd.grad(loss, x)``, even after ``x`` changed.

    >>> import jaxgrad
    >>> x = jaxgrad.ones(2, requires_grad=True)
    >>> edge = jaxgrad.autograd.graph.get_gradient_edge(x)
    >>> edge.node.name(), edge.output_nr
    ('torch::autograd::AccumulateGrad', 0)
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    return GradientEdge(_get_grad_fn_or_grad_acc(tensor), tensor.output_nr)


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Mark ``tensor`` (or each tensor of an iterable) as modified in place, for what autograd
    cannot see (tensors made in inference mode have no version counter: left alone).

    >>> import jaxgrad
    >>> a = jaxgrad.zeros(2)
    >>> jaxgrad.autograd.graph.increment_version(a); a._version
    1
    """
    if isinstance(tensor, Tensor):
        tensor = (tensor,)
    elif not isinstance(tensor, Iterable):
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input")
    tensors = list(tensor)
    if not all(isinstance(t, Tensor) for t in tensors):
        raise RuntimeError("increment_version expects each element of the iterable to be a "
                           "tensor")
    for t in tensors:
        if not t.is_inference():
            t._vc.value += 1


class saved_tensors_hooks:
    """Pack every tensor saved for backward inside the block with ``pack_hook``; unpack it with
    ``unpack_hook`` when backward needs it. Nested blocks: the innermost pair applies.

    >>> import jaxgrad
    >>> packed = []
    >>> def pack(t):
    ...     packed.append(t.shape)
    ...     return t.detach()
    >>> a = jaxgrad.ones(2, requires_grad=True)
    >>> with jaxgrad.autograd.graph.saved_tensors_hooks(pack, lambda t: t * 10):
    ...     y = a.pow(2)
    >>> packed
    [jaxgrad.Size([2])]
    >>> y.sum().backward(); a.grad
    tensor([20., 20.])
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        _push(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args: object) -> None:
        _pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep the tensors saved inside the block on the CPU and move them back to their device
    for backward (tensors already on the CPU are kept as they are).

    ``pin_memory=True`` packs into a fresh copy, as torch does; JAX exposes no pinned host
    memory, so the copy is never pinned (torch does not pin either without a CUDA device).

    >>> import jaxgrad
    >>> a = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> with jaxgrad.autograd.graph.save_on_cpu():
    ...     y = a * a
    >>> y.sum().backward(); a.grad
    tensor([2., 4.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple[Any, Tensor]:
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            packed = empty(tensor.size(), dtype=tensor.dtype)
            packed.copy_(tensor)
            return (tensor.device, packed)

        def unpack_from_cpu(packed: tuple[Any, Tensor]) -> Tensor:
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Inside the block, entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``
    (as does entering this block while such hooks are active).

    >>> import jaxgrad
    >>> with jaxgrad.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
    ...     try:
    ...         with jaxgrad.autograd.graph.save_on_cpu():
    ...             pass
    ...     except RuntimeError as e:
    ...         print(e)
    no hooks here
    """
    with _hooks_disabled(error_message):
        yield


class _MultiHandle(_RemovableHandle):
    """The handle of a multi-grad hook: removes the hook from every tensor."""

    def __init__(self, handles: tuple[_RemovableHandle, ...]) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __getstate__(self) -> tuple[_RemovableHandle, ...]:
        return self.handles

    def __setstate__(self, state: tuple[_RemovableHandle, ...]) -> None:
        self.handles = state


def _current_task_id() -> int:
    task_id = _current_graph_task_id()
    if task_id == -1:
        raise AssertionError("expected this hook to be called inside a backward call")
    return task_id


def _all_grads_hooks(tensors: Sequence[Tensor], fn: Callable) -> tuple:
    """Tensor hooks that gather, per backward call, the gradients of ``tensors`` and call
    ``fn(grads)`` once the last one the call computes has arrived (torch's "all" mode)."""
    lock = threading.Lock()
    count: dict[int, int] = {}
    buffer: dict[int, list] = {}
    expected = [0]  # how many of the tensors' nodes the current backward call runs
    grad_fns = [_get_grad_fn_or_grad_acc(t) for t in tensors]

    def inner_hook(index: int, grad: Tensor | None) -> None:
        task_id = _current_task_id()
        count.setdefault(task_id, 0)
        buffer.setdefault(task_id, [None] * len(tensors))
        with lock:
            arrived = count[task_id]
            count[task_id] = arrived + 1
            if arrived == 0:  # the first of this call: how many will come
                expected[0] = sum(map(_will_engine_execute_node, grad_fns))
        buffer[task_id][index] = grad
        if arrived == expected[0] - 1:
            grads = buffer.pop(task_id)
            del count[task_id]
            fn(grads)

    return tuple(t.register_hook(functools.partial(inner_hook, i))
                 for i, t in enumerate(tensors))


def _any_grad_hooks(tensors: Sequence[Tensor], fn: Callable) -> tuple:
    """Tensor hooks that call ``fn(grad)`` with the first of ``tensors``' gradients computed by
    each backward call (torch's "any" mode)."""
    lock = threading.Lock()
    ran: dict[int, bool] = defaultdict(bool)

    @functools.wraps(fn)
    def first_only(grad: Tensor | None) -> None:
        task_id = _current_task_id()
        with lock:
            already, ran[task_id] = ran[task_id], True
        if not already:
            fn(grad)

    return tuple(t.register_hook(first_only) for t in tensors if t.requires_grad)


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable, *,
                             mode: Literal["all", "any"] = "all") -> _RemovableHandle:
    """Call ``fn`` once per backward call with the gradients of several tensors.

    ``mode="all"``: after the gradients of all of ``tensors`` that the call computes have
    arrived, ``fn(grads)`` receives them all (None for the tensors the call ignores).
    ``mode="any"``: ``fn(grad)`` receives the first one computed. Returns a handle whose
    ``remove()`` removes the hook.

    Each backward call counts on its own (several threads may run backward at once); the
    hooks are tensor hooks, so they run in registration order with the tensors' other hooks.

    >>> import jaxgrad
    >>> a = jaxgrad.ones(2, requires_grad=True)
    >>> b = jaxgrad.ones(2, requires_grad=True)
    >>> handle = jaxgrad.autograd.graph.register_multi_grad_hook(
    ...     (a, b), lambda grads: print([g is not None for g in grads]))
    >>> handle.remove()
    >>> jaxgrad.autograd.graph.register_multi_grad_hook((a, b), print, mode="first")
    Traceback (most recent call last):
    ...
    ValueError: Expects mode to be one of ('all', 'any') but got first
    """
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    if mode == "all":
        return _MultiHandle(_all_grads_hooks(tensors, fn))
    return _MultiHandle(_any_grad_hooks(tensors, fn))


# --- allow_mutation_on_saved_tensors ----------------------------------------------------------
# Note [Allow mutation on tensors saved for backward] (torch's, adapted)
# 1. A tensor is saved for backward (the context's pack hook): remember it by (object id,
#    storage, version), keep the original, and return a handle that the graph holds.
# 2. Before a storage is overwritten (a storage write watcher): clone each original saved from
#    that storage whose version has not moved since it was saved, and drop the original.
# 3. Backward (the unpack hook) uses the clone if there is one, else the original.
# torch recognises aliases by data pointer, so a view starting elsewhere in the storage is not
# cloned there (backward then silently reads the new values); storages are compared here.


class _MutationState:
    """Whether an ``allow_mutation_on_saved_tensors`` block is open (process-wide, as in
    torch)."""

    enabled = False


class _Handle:
    """What the graph holds for a tensor saved inside ``allow_mutation_on_saved_tensors``."""


class _AllowMutationOnSavedContext:
    """The state of one ``allow_mutation_on_saved_tensors`` block (yielded by it, cleared on
    exit): ``original`` and ``cloned`` map handles to saved tensors (entries vanish with the
    graph holding the handle), ``tid_to_weakhandle`` (object id, storage id, version) to
    handles, ``sid_to_tid`` a storage id to those saved-tensor ids."""

    def __init__(self) -> None:
        self.cloned: MutableMapping[_Handle, Tensor] = WeakKeyDictionary()
        self.original: MutableMapping[_Handle, Tensor] = WeakKeyDictionary()
        self.tid_to_weakhandle: MutableMapping[tuple, _Handle] = WeakValueDictionary()
        self.sid_to_tid: dict[int, set[tuple]] = defaultdict(set)

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()

    def save(self, tensor: Tensor) -> _Handle:
        """The pack hook: one handle per tensor object and version."""
        tid = (id(tensor), id(tensor._cell), tensor._vc.value)
        self.sid_to_tid[tid[1]].add(tid)
        handle = self.tid_to_weakhandle.get(tid)
        if handle is None:
            handle = _Handle()
            self.tid_to_weakhandle[tid] = handle
            self.original[handle] = tensor
        return handle

    def load(self, handle: _Handle) -> Tensor:
        """The unpack hook: the clone made before a write, else the original."""
        message = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' "
                   "contextin which the graph was originally recorded.")
        if not _MutationState.enabled:
            raise AssertionError(message)
        if handle in self.cloned:
            return self.cloned[handle]
        if handle not in self.original:
            raise AssertionError(message)
        return self.original[handle]

    def before_write(self, storage: Any) -> None:
        """Clone the saved tensors of ``storage`` still holding their saved values."""
        for tid in tuple(self.sid_to_tid.get(id(storage), ())):
            handle = self.tid_to_weakhandle.get(tid)
            if handle is None or handle in self.cloned:  # freed by backward, or cloned
                continue
            original = self.original[handle]
            if original._vc.value != tid[2] or original._cell is not storage:
                continue
            with no_grad():
                self.cloned[handle] = original.detach().clone()
            del self.original[handle]


@contextlib.contextmanager
def _watching_writes(callback: Callable[[Any], None]) -> Iterator[None]:
    previous = _write_watchers.callbacks
    _write_watchers.callbacks = (*previous, callback)
    try:
        yield
    finally:
        _write_watchers.callbacks = previous


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[_AllowMutationOnSavedContext]:
    """Inside the block, a tensor saved for backward may be modified in place: it is cloned
    first, and backward uses the saved value. Run forward and backward inside the same block.
    Yields the block's state (cleared on exit).

    >>> import jaxgrad
    >>> with jaxgrad.autograd.graph.allow_mutation_on_saved_tensors():
    ...     a = jaxgrad.ones(2, requires_grad=True)
    ...     b = a.clone()
    ...     out = (b ** 2).sum()
    ...     _ = b.sin_()
    ...     out.backward()
    >>> a.grad
    tensor([2., 2.])
    """
    ctx = _AllowMutationOnSavedContext()
    with saved_tensors_hooks(ctx.save, ctx.load), _watching_writes(ctx.before_write):
        try:
            if _MutationState.enabled:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _MutationState.enabled = True
            yield ctx
        finally:
            ctx.clear()
            _MutationState.enabled = False
