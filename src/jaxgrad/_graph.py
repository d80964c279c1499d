"""The autograd graph: nodes (``grad_fn``), saved tensors, hooks on nodes and their handles.

A node's ``next_edges`` are ``(node, input_nr)`` pairs or ``None`` (an input that needs no
gradient), exactly torch's ``next_functions``. Each node class is named as torch names it
(``MulBackward0``, ``AccumulateGrad``, ...), so ``type(y.grad_fn).__name__`` and reprs match.
"""

from __future__ import annotations

import itertools
import re
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ._dtypes import type_name

_sequence = itertools.count()
ACCUMULATE_SEQ = float("inf")  # torch gives AccumulateGrad UINT64_MAX: it runs as soon as ready

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed when "
    "you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters (also as a context)."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict: HookDict) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._next_id)

    def remove(self) -> None:
        hooks = self.hooks_dict_ref()
        if hooks is not None and self.id in hooks:
            del hooks[self.id]

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class HookDict(OrderedDict):
    """An OrderedDict that can be weakly referenced by handles."""


def add_hook(hooks: HookDict, fn: Callable, prepend: bool = False) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


class SavedTensor:
    """A tensor saved for backward plus the version it had then (torch's SavedVariable).

    A saved *output* of the owning node is kept without its ``grad_fn`` (torch keeps a weak
    reference there): holding the node would make a reference cycle, and graphs would then
    only be freed by the cyclic garbage collector. Unpacking gives a fresh tensor whose
    grad_fn is the owner again, as torch's ``grad_fn._saved_result`` does.
    """

    __slots__ = ("has_history", "is_output", "output_nr", "tensor", "version")

    def __init__(self, tensor, output_nr: int | None = None,
                 differentiable: bool | None = None) -> None:
        self.version = tensor._vc.value
        self.is_output = output_nr is not None  # the owner's output number, for outputs
        # a non-differentiable output (max_pool2d's indices) unpacks without history, as torch
        if differentiable is None:
            differentiable = tensor._requires_grad
        self.has_history = self.is_output and differentiable
        self.tensor = tensor._alias(share_version=True) if self.is_output else tensor
        self.output_nr = output_nr

    def unpack(self, owner: Node):
        t = self.tensor
        if t._vc.value != self.version:
            raise RuntimeError(self._modified_message(owner))
        if self.is_output:
            t = t._alias(share_version=True)
            if self.has_history:
                t._requires_grad, t._grad_fn, t._output_nr = True, owner, self.output_nr
        return t

    def _modified_message(self, owner: Node) -> str:
        t = self.tensor
        producer, output_nr = owner, self.output_nr
        if not self.is_output:  # a saved input: torch names its current producer
            producer, output_nr = t.grad_fn, t.output_nr
        where = ""
        if producer is not None:
            where = f", which is output {output_nr} of {_op_name(producer)},"
        return (
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [jaxgrad.{type_name(t.dtype)} {list(t.shape)}]{where} is at "
            f"version {t._vc.value}; expected version {self.version} instead. Hint: enable "
            "anomaly detection to find the operation that failed to compute its gradient, with "
            "jaxgrad.autograd.set_detect_anomaly(True, check_nan=False)."
        )


def _op_name(node: Node) -> str:
    """How torch's message names a node: ``ExpBackward0`` is ``Exp``, ``EluBackward1``
    ``Elu1``."""
    return re.sub(r"Backwards?0?(\d*)$", r"\1", type(node).__name__)


class Node:
    """A backward function (``grad_fn``). Subclasses implement ``apply(grads) -> grads``.

    >>> import jaxgrad
    >>> y = jaxgrad.ones(2, requires_grad=True) * 2
    >>> y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()
    ('MulBackward0', 'jaxgrad::autograd::AccumulateGrad')
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
        out = self.apply(list(grads), False)
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
    """A Node subclass called ``name`` (``MulBackward0``) so that reprs match torch's."""
    key = f"{base.__name__}.{name}"
    cls = _NODE_CLASSES.get(key)
    if cls is None:
        cls = type(name, (base,), {"__slots__": ()})
        _NODE_CLASSES[key] = cls
    return cls


class AccumulateGrad(Node):
    """The node that accumulates a leaf's gradient into its ``.grad``.

    It only holds the leaf: accumulating runs ops, which live above the graph, so the engine
    (``_engine.accumulate_grad``) does the work for these nodes and gives the class its
    ``apply`` (a direct call ``acc(grad)`` accumulates, as in torch).
    """

    __slots__ = ("variable",)

    def __init__(self, variable) -> None:
        super().__init__((), ((variable.shape, variable.dtype),), seq=ACCUMULATE_SEQ)
        self.variable = variable

    def name(self) -> str:
        return "jaxgrad::autograd::AccumulateGrad"


class GraphRoot(Node):
    """The engine's entry node: hands the root gradients to the roots' grad_fns."""

    __slots__ = ("grads",)

    def __init__(self, edges: tuple, grads: list) -> None:
        super().__init__(edges, (), seq=ACCUMULATE_SEQ)
        self.grads = grads

    def apply(self, grads: list, create_graph: bool, wanted: tuple | None = None) -> list:
        return list(self.grads)
