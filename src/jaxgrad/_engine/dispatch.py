"""``apply``: the one choke point every jaxgrad op goes through.

Only here do we check grad mode, decide the outputs' ``requires_grad``, save tensors (with
their versions) for backward, build graph nodes, bump versions on in-place ops, rebase the
history of in-place-modified views (``CopySlices``) and report to the profiler.
"""

from __future__ import annotations

import functools
import inspect
import numbers
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core import device as _device
from .._core import dtypes as _dtypes
from .._core import tracing as tracing_state
from .._core.caches import Memo, cache
from .._core.epoch import changed as structure_changed
from .._core.grad_mode import _state, is_inference_mode_enabled, no_grad
from .._core.graph import DELAYED_ERROR, FREED_MESSAGE, Node, SavedTensor, _op_name, node_class
from .._core.jax_compat import how_inputs_are_read, input_readers, torch_vjp
from .._core.jax_setup import SCOPE, jit, x64_scope
from .._core.storage import Layout, Storage, lens_of, reinterpret
from .._core.tensor import (
    PYTHON_DISPATCH,
    SUBCLASS_ROUTE,
    Tensor,
    dispatch_modes,
    dispatches_in_python,
    pop_dispatch_mode,
    push_dispatch_mode,
)
from .._core.transform_stack import captures, check_not_captured, in_forward_mode
from .._core.transform_stack import stack as transform_stack
from .._core.typename import type_name
from .._core.warn_once import warn_at_user_line
from .._ops import elementwise as E
from .._ops import views as V
from .._ops._table import (
    Op,
    backward_function,
    half_as_float32,
    jitted_backward,
    jitted_forward,
    static_key,
)
from .._ops.half_precision import HALF_DTYPES
from . import autocast as _autocast
from . import forward_ad as _forward_ad
from . import profiling as _profiler
from .op_overloads import OpOverload, overload_of, running, torch_overload

DIFFERENTIABLE_DTYPES = frozenset(
    d.np for d in _dtypes.ALL_DTYPES if d.is_floating_point or d.is_complex)

INFERENCE_INPLACE_MESSAGE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
    "to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")
INFERENCE_SAVE_MESSAGE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `jaxgrad.no_grad()` instead "
    "of `jaxgrad.inference_mode()`."
)


class OpNode(Node):
    """The grad_fn of an op-table row: runs the row's formulas on the saved tensors.

    ``op`` is the row, ``static`` its static arguments (a key), ``needs`` which inputs need a
    gradient, ``in_meta`` their (shape, dtype), ``saved`` the saved values by formula name.
    """

    __slots__ = ("freed", "in_meta", "needs", "op", "saved", "static", "view_grad_fn", "viewed")

    def __init__(self, next_edges: tuple, out_meta: tuple, op: Op, static: tuple,
                 needs: tuple, in_meta: tuple, saved: dict | None = None,
                 seq: float | None = None) -> None:
        super().__init__(next_edges, out_meta, seq)
        self.op, self.static, self.needs, self.in_meta, self.saved = (
            op, static, needs, in_meta, saved)
        self.freed: dict | None = None
        # an in-place op on a view: a weak reference to the view's grad_fn after the op, which
        # its saved result unpacks with (torch's is_inplace_on_view SavedVariable)
        self.view_grad_fn: weakref.ref | None = None
        # per input, whether the last backward handed its gradient on as a view (torch's
        # sum_to over leading dims): the engine never sums into such a gradient in place
        self.viewed: tuple[bool, ...] = ()

    def apply(self, grads: list, create_graph: bool, wanted: tuple | None = None) -> list:
        undefined = self.op.undefined_grads
        if all(g is None for g in grads) or (undefined is not None and undefined(
                tuple(None if g is None else tuple(g._value.shape) for g in grads))):
            return [None] * len(self.next_edges)
        with x64_scope():  # (a node's formulas are jaxgrad's code, never the user's)
            return self._run_formulas(grads, create_graph, wanted)

    def _run_formulas(self, grads: list, create_graph: bool, wanted: tuple | None) -> list:
        needs = self.needs if wanted is None else tuple(
            n and w for n, w in zip(self.needs, wanted))
        grads = self._materialize(grads)
        saved = self._unpack()
        if self.op.backward_checks:
            self._check_values(saved, grads)
        if create_graph or (PYTHON_DISPATCH[0] and _dispatching_subclass(
                (*grads, *saved.values())) is not None):
            return self._apply_differentiable(saved, grads, needs)
        return self._apply_jitted(saved, grads, needs)

    def _handed_on(self, needs: tuple, g0: Tensor) -> list:
        """Per input: ``g0`` itself where torch's formula is the gradient unchanged (add's, or
        cumsum's over a dim of size 1) and it fits the input, else None."""
        op = self.op
        out: list = [None] * len(needs)
        for i, (name, need) in enumerate(zip(op.input_names(len(needs)), needs)):
            if need:
                shape, dtype = self.in_meta[i]
                if (name in op.identity or (op.identity_when is not None and op.identity_when(
                        shape, **dict(self.static)))) and g0._value.shape == shape and (
                        g0._value.dtype == dtype):
                    out[i] = g0  # torch hands the very same gradient tensor on
        return out

    def _apply_jitted(self, saved: dict, grads: list, needs: tuple) -> list:
        op = self.op
        out = self._handed_on(needs, grads[0])
        pending = tuple(need and d is None for need, d in zip(needs, out))
        if any(pending):
            fn = jitted_backward(op, self.static, pending, self.in_meta)
            arrays = fn.call({k: t._value for k, t in saved.items()},
                             tuple(g._value for g in grads))
            version = self._grad_version()
            for i, a in enumerate(arrays):
                if a is not None:
                    out[i] = Tensor._make(a)
                    out[i]._vc.value = version
            self.viewed = tuple(fn.viewed)
            if op.grad_layout == "expand":
                self._expand_grads(out, grads[0])
        else:
            self.viewed = ()
        return out

    def _grad_version(self) -> int:
        """The ``_version`` of a gradient this node's formulas make: how many in-place writes
        torch's formula makes into the tensor it returns (the same with create_graph)."""
        version = self.op.grad_version
        if callable(version):
            version = version(**{p: dict(self.static)[p] for p in _grad_node_params(version)})
        return version

    def _apply_differentiable(self, saved: dict, grads: list, needs: tuple) -> list:
        """The gradients as ops recorded for autograd (create_graph): one op per node name
        torch's formulas end in (see :func:`grad_node_names`), each fed only the saved values
        its formulas read, so each gradient requires grad exactly when torch's does."""
        out = self._handed_on(needs, grads[0])
        rest = tuple(need and d is None for need, d in zip(needs, out))
        if any(rest):
            values = {n: v._value if isinstance(v, SavedConstant) else v
                      for n, v in saved.items()}
            declared = declared_grad_nodes(self.op, self.static, values)
            if self.op.grad_nodes_by_readers:
                declared += _names_by_readers(self.op, tuple(
                    ("constant", v) if isinstance(v, (bool, int, float)) else _abstract(v)
                    for v in values.values()))
            node_names = grad_node_names(self.op, self.static, rest, self.in_meta,
                                         _meta_of(values), _meta_of(grads), type(self).__name__,
                                         declared)
            for group, node_name in _formula_groups(self.op, node_names):
                names = tuple(n for n in self.op.saved_names(group) if n in saved)
                bop, mask = differentiable_backward_op(self.op, self.static, group,
                                                       self.in_meta, names, node_name)
                masks_only = _read_as_masks_only(self.op, self.static, group, self.in_meta,
                                                 _meta_of({n: values[n] for n in names}),
                                                 _meta_of(grads), declared)
                results = apply(bop, *[_detached(g) if i in masks_only else g
                                       for i, g in enumerate(grads)],
                                *[_detached(values[n]) if n in masks_only else values[n]
                                  for n in names])
                it = iter(results if isinstance(results, tuple) else (results,))
                for i, need in enumerate(mask):
                    if need:
                        out[i] = next(it)
                        out[i]._vc.value = self._grad_version()
            if self.op.grad_layout == "expand":
                self._expand_grads(out, grads[0])
        if self.op.delayed_errors:
            self._delay_errors(saved, out)
        return out

    def _expand_grads(self, out: list, g0: Tensor) -> None:
        """torch's sum formulas return ``grad`` unsqueezed and ``expand``ed: a view of it with
        stride 0 along the summed dims (``g.stride()`` in a hook, and writing into it in place
        is refused). Each gradient of the input's dtype becomes such a view; a gradient cast to
        another dtype, or one recorded under create_graph, stays a fresh tensor."""
        if PYTHON_DISPATCH[0] and _dispatching_subclass((g0,)) is not None:
            return  # (a subclass's gradient: the one its dispatch computed)
        static = dict(self.static)
        for i, grad in enumerate(out):
            if grad is None or grad.requires_grad or grad._value.dtype != g0._value.dtype:
                continue
            layout = g0._geometry()
            if not static.get("keepdim", True):
                for d in sorted(static.get("dim") or ()):
                    layout = V.unsqueeze_geometry(layout, d)
            layout = _expand_geometry(layout, tuple(grad._value.shape))
            out[i] = make_view(Tensor._make(grad._value), g0, layout)

    def _check_values(self, saved: dict, grads: list) -> None:
        """The row's ``backward_checks`` on the saved values and incoming gradients."""
        values = {k: v._value for k, v in saved.items() if isinstance(v, Tensor)}
        arrays = tuple(g._value for g in grads)
        if any(isinstance(v, jax.core.Tracer) for v in (*values.values(), *arrays)):
            return
        for predicate, message in self.op.backward_checks:
            if bool(predicate(arrays, **values, **dict(self.static))):
                raise RuntimeError(message)

    def _delay_errors(self, saved: dict, out: list) -> None:
        """Gradients the row marks as not differentiable again (on these values) go through
        torch's DelayedError node, which raises if a later backward reaches it."""
        names = self.op.input_names(len(out))
        for i, grad in enumerate(out):
            check = self.op.delayed_errors.get(names[i])
            if grad is None or check is None or not grad.requires_grad:
                continue
            values = {k: v._value for k, v in saved.items() if isinstance(v, Tensor)}
            if any(isinstance(v, jax.core.Tracer) for v in values.values()):
                continue  # a value check: skipped while traced (as torch.compile skips them)
            predicate, message = check
            if bool(predicate(**values, **dict(self.static))):
                node = DELAYED_ERROR((grad._gradient_edge(),),
                                     ((grad._value.shape, grad._value.dtype),))
                node.message = message
                out[i] = Tensor._make(grad._value)
                out[i]._set_history(node, 0)

    def _materialize(self, grads: list) -> list:
        if len(grads) == 1 or all(g is not None for g in grads):
            return grads
        return [g if g is not None else Tensor._make(jnp.zeros(shape, dtype))
                for g, (shape, dtype) in zip(grads, self.out_meta)]

    def _unpack(self) -> dict:
        saved = self.saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        return {name: s.unpack(self._owner_of(s)) for name, s in saved.items()}

    def _owner_of(self, saved: Any) -> Node:
        """The node a saved value unpacks with: this one, or for the result of an in-place op
        on a view, the view's grad_fn (while it lives; torch's error for a result modified
        since names this node)."""
        ref = self.view_grad_fn
        if ref is not None and getattr(saved, "is_output", False):
            fn = ref()
            kept = saved.tensor
            if fn is not None and (kept is None or kept._vc.value == saved.version):
                return fn
        return self

    def release_variables(self) -> None:
        saved = self.saved
        if saved:
            for s in saved.values():
                s.release()
            self.freed = saved  # what _raw_saved_<name> still hands out
            self.saved = None

    def __dir__(self) -> list[str]:
        """dir() lists the ``_saved_<name>``/``_raw_saved_<name>`` attributes, as torch's."""
        tensors = _saved_tensor_names(self.op, len(self.needs))
        held = self.saved if self.saved is not None else (self.freed or {})
        static = [k for k in dict(self.static) if not k.startswith("_")]
        keys = {*held, *tensors, *static}
        return sorted({*super().__dir__(), *(f"_saved_{k}" for k in keys),
                       *(f"_raw_saved_{k}" for k in keys if k in tensors)})

    def __getattr__(self, name: str) -> Any:
        # torch exposes saved values as grad_fn._saved_<name>, and saved tensors as
        # SavedTensor objects as grad_fn._raw_saved_<name>
        raw = name.startswith("_raw_saved_")
        if raw or name.startswith("_saved_"):
            key = name[len("_raw_saved_" if raw else "_saved_"):]
            saved = object.__getattribute__(self, "saved")
            op = object.__getattribute__(self, "op")
            tensors = _saved_tensor_names(op, len(object.__getattribute__(self, "needs")))
            if raw:
                held = saved if saved is not None else object.__getattribute__(self, "freed")
                value = (held or {}).get(key)
                if isinstance(value, SavedTensor):
                    return value
                if key in tensors and _is_number(value):
                    return SavedTensor(_wrapped_number(value._value))
                if value is None and key in tensors:  # torch saves an undefined tensor
                    return SavedTensor(None)
                raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
            if saved is None:
                raise RuntimeError(FREED_MESSAGE)
            if key in saved:
                value = saved[key]
                if key in tensors and _is_number(value):
                    return _wrapped_number(value._value)
                return (value._value if type(value) is SavedConstant
                        else value.unpack(self._owner_of(value)))
            if key in tensors:
                return None
            static = dict(object.__getattribute__(self, "static"))
            if key in static and not key.startswith("_"):  # _name: the row's own, not torch's
                return _as_torch_exposes(static[key])
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


_WRAPPED_DTYPES = {bool: jnp.bool_, int: jnp.int64, float: jnp.float64, complex: jnp.complex128}


def _is_number(saved: Any) -> bool:
    return type(saved) is SavedConstant and type(saved._value) in _WRAPPED_DTYPES


def _wrapped_number(value: Any) -> Tensor:
    """A Python number a Tensor parameter received, as torch saves it: a 0-d "wrapped number"
    tensor (int64 for an int, float64 for a float)."""
    with x64_scope():
        return Tensor._make(jnp.asarray(value, _WRAPPED_DTYPES[type(value)]))


def _expand_geometry(layout: Layout, shape: tuple[int, ...]) -> Layout:
    """torch's inferExpandGeometry: an expanded dim gets stride 0, a new leading dim of size 1
    the stride that steps over the dims after it."""
    n, lead = len(shape), len(shape) - len(layout.shape)
    sizes, strides = [1] * (n + 1), [1] * (n + 1)
    for i in range(n - 1, -1, -1):
        d = i - lead
        size = layout.shape[d] if d >= 0 else 1
        stride = layout.strides[d] if d >= 0 else sizes[i + 1] * strides[i + 1]
        if size != shape[i]:
            size, stride = shape[i], 0
        sizes[i], strides[i] = size, stride
    return Layout(tuple(shape), tuple(strides[:n]), layout.offset)


@cache(maxsize=4096)
def _saved_tensor_names(op: Op, n_inputs: int) -> frozenset:
    """The inputs and outputs ``op``'s node may save (as torch declares them on the node class,
    whether or not this call saved them)."""
    return frozenset(name for name, source, _ in op.save_plan((True,) * n_inputs, n_inputs)
                     if source != "aux")


def _as_torch_exposes(value: Any) -> Any:
    """A saved int as torch's ``_saved_<name>`` shows it: through an unsigned 64-bit conversion,
    so ``-1`` reads 18446744073709551615 (ints in tuples too)."""
    if isinstance(value, tuple):
        return tuple(_as_torch_exposes(v) for v in value)
    if type(value) is int and value < 0:
        return value + 2**64
    return value


@cache(maxsize=4096)
def node_class_for(op: Op) -> type:
    """The grad_fn class of ``op``, named as torch names it (``MulBackward0``); a node that is a
    C++ class of torch's with no Python binding (``torch::autograd::Identity``) is a
    ``CppFunction`` whose ``name()`` is that."""
    if op.node.startswith("torch::autograd::"):
        return type("CppFunction", (OpNode,), {"__slots__": (), "__module__": "builtins",
                                               "name": lambda self: op.node})
    return node_class(op.node, OpNode)


class SavedConstant:
    """A saved non-tensor value (e.g. index arrays); freed with its node like a tensor."""

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        self._value = value

    def unpack(self, owner: Node) -> SavedConstant:
        return self

    def release(self) -> None:
        """Nothing to free beyond the node's reference."""


# --- the choke point ------------------------------------------------------------------------

def apply(op: Op, *args: Any, aux: tuple = (), **static: Any) -> Any:
    """Run ``op`` on ``args`` (tensors, Python scalars or None) and record it for autograd."""
    if _profiler.active:
        return _profiler.record_op(f"aten::{op.name}", args,
                                   lambda: _apply(op, args, aux, static))
    return _apply(op, args, aux, static)


def _inplace_overload(op: Op) -> OpOverload:
    name, _, overload = _aten_inplace_name(op).removeprefix("aten::").partition(".")
    return overload_of(name, overload or "default")


class _ModeDispatch:
    """The innermost ``TorchDispatchMode`` as a dispatcher: it runs with itself popped, so the
    ops it calls go to the modes below it, then to subclasses and the kernels (torch's rule)."""

    __slots__ = ("mode",)

    def __init__(self, mode: Any) -> None:
        self.mode = mode

    def __torch_dispatch__(self, func: OpOverload, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        mode = pop_dispatch_mode()
        try:
            return mode.__torch_dispatch__(func, types, args, kwargs or {})
        finally:
            push_dispatch_mode(mode)


def dispatch_function(name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
    """``fn(*args, **kwargs)``, or, when a dispatch mode is on or an argument is a
    ``__torch_dispatch__`` subclass, what its ``__torch_dispatch__`` makes of it (for functions
    that are not op rows: factories)."""
    cls = _dispatching_subclass(args)
    if cls is None:
        return fn(*args, **kwargs)
    func = overload_of(name)
    with running(func, fn):
        return cls.__torch_dispatch__(func, _subclass_types(args), args, kwargs)


def dispatches(name: str) -> Callable[[Callable], Callable]:
    """Decorate a function that is not an op row (``ones_like``) so that a
    ``__torch_dispatch__`` subclass among its arguments computes it."""
    def decorate(fn: Callable) -> Callable:
        def run(*args: Any, **kwargs: Any) -> Any:
            if PYTHON_DISPATCH[0] and _dispatching_subclass(args) is not None:
                # requires_grad is autograd's, above the dispatch (torch sets it on the result)
                requires_grad = kwargs.pop("requires_grad", False)
                out = dispatch_function(name, fn, args, kwargs)
                return out.requires_grad_(True) if requires_grad else out
            return fn(*args, **kwargs)
        return functools.wraps(fn)(run)
    return decorate


SUBCLASS_ROUTE[0] = dispatch_function


def _subclass_types(args: tuple) -> tuple:
    return tuple({type(a) for a in args if isinstance(a, Tensor) and type(a) is not Tensor})


def _dispatching_subclass(args: tuple) -> Any:
    """What computes an op on ``args`` in Python: the innermost dispatch mode, else the class of
    a ``__torch_dispatch__`` subclass among them, else None."""
    modes = dispatch_modes()
    if modes:
        return _ModeDispatch(modes[-1])
    for a in args:
        if dispatches_in_python(a):
            return type(a)
        if isinstance(a, (list, tuple)) and a:  # (cat, stack: a list of tensors)
            found = _dispatching_subclass(tuple(a))
            if found is not None:
                return found
    return None


def _apply_subclass(cls: type, op: Op, args: tuple, aux: tuple, static: dict,
                    run: Callable | None = None) -> Any:
    """``op`` on a wrapper subclass: its ``__torch_dispatch__`` computes the results, which
    autograd records as any op's (saving the subclass tensors)."""
    if run is None:
        def run(*a: Any, **kw: Any) -> Any:
            return _apply(op, a, aux, {**static, **kw})
    func = torch_overload(op, static)
    with running(func, run):
        out = cls.__torch_dispatch__(func, _subclass_types(args), args, static)
    multi = isinstance(out, tuple)
    results = list(out) if multi else [out]
    if _records(op, args):
        _record(op, static_key(static) if static else (), args, aux, results)
    return tuple(results) if multi else results[0]


def _records(op: Op, args: tuple) -> bool:
    """Whether autograd records ``op`` on ``args``: grad mode, a differentiable op, an input
    that requires grad."""
    if not (_state.grad and (op.grads or op.variadic)):
        return False
    for a in args:  # noqa: SIM110 - (a loop: no generator object on this hot path)
        if isinstance(a, Tensor) and a._requires_grad:
            return True
    return False


def _apply(op: Op, args: tuple, aux: tuple, static: dict) -> Any:
    if PYTHON_DISPATCH[0]:
        cls = _dispatching_subclass(args)
        if cls is not None:
            return _apply_subclass(cls, op, args, aux, static)
    if _autocast.active:  # some thread has autocast on: cast as its policy says
        args = _autocast.cast_inputs(op.name, args, apply)
    if op.promote:
        compute_dtype = _compute_dtype(op, args)  # checks args[0] on a cache miss
    else:
        compute_dtype = None
        if not isinstance(args[0], Tensor) and op.inputs and isinstance(args[0], _NOT_TENSORS):
            raise _not_a_tensor(op, args[0])
    skey = static_key(static) if static else ()
    out = _run_forward(op, skey, compute_dtype, None, args, aux)
    multi = isinstance(out, tuple)
    if isinstance(out[0] if multi else out, jax.core.Tracer):
        out = constant_if_no_grad(out)
    results = [Tensor._make(o) for o in out] if multi else [Tensor._make(out)]
    if _records(op, args):
        _record(op, skey, args, aux, results)
    if _forward_ad.active:
        _forward_ad.on_apply(_FORWARD_AD, op, skey, compute_dtype, args, aux, results)
    return tuple(results) if multi else results[0]


def _traced(out: Any) -> bool:
    return isinstance(out[0] if isinstance(out, tuple) else out, jax.core.Tracer)


def constant_if_no_grad(out: Any) -> Any:
    """What an op (or a transform) computes under a user's ``no_grad`` (or ``inference_mode``)
    while JAX differentiates: a constant to reverse mode, as torch.func's grad levels see it
    (``stop_gradient``). Forward mode (``jvp``, innermost) ignores grad mode, as torch's dual
    tensors do, but not forward grad switched off (``_set_fwd_grad_enabled(False)``). An
    ``autograd.Function``'s rule running with recording off is not a user's ``no_grad``: its
    values stay differentiable."""
    if (_state.grad and _forward_ad.is_enabled()) or not _traced(out):
        return out  # (the common case first)
    if in_forward_mode():
        constant = not _forward_ad.is_enabled()
    else:
        constant = not _state.grad and not _state.rule_depth
    return jax.lax.stop_gradient(out) if constant else out


def _run_forward(op: Op, skey: tuple, compute_dtype, out_dtype, args: tuple, aux: tuple) -> Any:
    """The op's jitted forward on the arguments' arrays; JAX's refusal of arrays committed to
    different devices becomes torch's error. A view not computed yet (``Tensor._lazy``) enters
    as its source's array, and its own op runs inside this op's XLA program (a ``weight.t()``
    feeding a matmul becomes the matmul's transposed operand instead of a copy)."""
    forward_mode = op.tangent is not None and in_forward_mode()
    if op.opmath and compute_dtype in HALF_DTYPES:
        compute_dtype, out_dtype = half_as_float32(op, compute_dtype, out_dtype)
    lazy = None
    arrays = []  # (each argument's array, in one pass: this loop is hot)
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            pending = a._pending_view() if a._lazy is not None else None
            if pending is not None:
                lazy = lazy or [None] * len(args)
                lazy[i] = pending
            arrays.append(a._value if pending is None else None)
        else:
            arrays.append(_as_array(a, compute_dtype))
    try:
        if lazy is None:
            if aux:
                arrays.extend(_as_array(x, compute_dtype) for x in aux)
            kernel = jitted_forward(op, skey, compute_dtype, out_dtype, forward_mode)
            return (kernel.in_scope if SCOPE.on else kernel)(*arrays)
        return _fused_forward(op, skey, compute_dtype, out_dtype,
                              tuple(None if v is None else v[0] for v in lazy), forward_mode)(
            *[_as_array(a, compute_dtype) if v is None else v[1]._value
              for a, v in zip(args, lazy)],
            *[_as_array(x, compute_dtype) for x in aux])
    except ValueError as error:
        if _device.INCOMPATIBLE in str(error):
            raise _device.mixed_devices_error(args) from error
        raise


@cache(maxsize=4096, kernels=True)
def _fused_forward(op: Op, skey: tuple, compute_dtype, out_dtype, views: tuple,
                   forward_mode: bool) -> Callable:
    """``op``'s jitted forward whose arguments at the positions of ``views`` are first computed
    by those (jitted) view kernels from their sources, all in one XLA program."""
    forward = jitted_forward(op, skey, compute_dtype, out_dtype, forward_mode)

    def fused(*arrays):
        return forward(*[a if view is None else view(a)
                         for a, view in zip(arrays, views + (None,) * len(arrays))])

    return jit(fused)


def _as_array(a: Any, compute_dtype) -> Any:
    """What the jitted forward receives for one argument (Note [Argument kinds] in
    ``_ops/_schema.py``)."""
    if isinstance(a, Tensor):
        return a._value
    if compute_dtype is not None and isinstance(a, (int, float, complex)):
        return _device_scalar(a, compute_dtype)
    return a


def _device_scalar(value: Any, dtype) -> Any:
    """A Python number as a traced operand of ``dtype``.

    A value seen once goes to the kernel as a numpy scalar (~1 us; a new device array costs
    ~30 us: a new learning rate every step must not pay that); a value seen again becomes a
    cached device array, the cheapest operand for jit (``x * 2`` in a loop). One-off values are
    remembered apart, so a new value every step never evicts the hot constants. An integer
    wraps into a narrower integer dtype, as torch's casts do (``uint8 - 1`` is 255).
    """
    if not (value and value == value) or tracing_state.current() is not None:
        # -0.0 would hit 0.0's entry and NaN never hits; a compiled step's trace embeds the
        # number in its program instead of capturing a device array
        return _host_scalar(value, dtype)
    key = (type(value), value, dtype)
    cached = _device_scalars.get(key)
    if cached is not None:
        return cached
    host = _host_scalar(value, dtype)
    if _seen_once.pop(key, None) is None:
        _seen_once[key] = True
        return host
    with x64_scope():
        cached = _device_scalars[key] = jnp.asarray(host, dtype=host.dtype)
    return cached


def _host_scalar(value: Any, dtype) -> np.ndarray:
    return np.asarray(value).astype(dtype) if type(value) is int else np.asarray(value, dtype)


_seen_once = Memo(maxsize=4096)
_device_scalars = Memo(maxsize=4096)


def _compute_dtype(op: Op, args: tuple):
    """The dtype the op computes in (torch's result_type; "float" ops lift ints to float)."""
    key = [op.promote, _dtypes.get_default_dtype()]
    for a in args:  # (a loop, not a comprehension: one call fewer on this hot path)
        if isinstance(a, Tensor):  # its dtype, and whether it is 0-d (a "wrapped number")
            array, layout = a._cell.array, a._layout
            key += (array.dtype, not (array.shape if layout is None else layout.shape))
        else:
            key.append(type(a))
    key = tuple(key)  # (unambiguous: a type never equals a dtype or a bool)
    d = _promotion_cache.get(key)
    if d is None:
        d = _promotion_cache[key] = _promote(op, args)
    return d


_promotion_cache = Memo(maxsize=4096)


# what torch's parser rejects as a first input (of an op with named inputs: backward ops under
# create_graph take saved numbers and arrays)
_NOT_TENSORS = (numbers.Number, str, list, tuple, np.ndarray, type(None))


def _not_a_tensor(op: Op, value: Any) -> TypeError:
    """The generic error for a non-tensor first input; ``@tensor_args`` names the argument."""
    return TypeError(f"{op.name}(): argument 'input' (position 1) must be Tensor, not "
                     f"{type_name(value)}")


def _promote(op: Op, args: tuple):
    if not isinstance(args[0], Tensor):  # exp(3): torch's parser wants a Tensor (on a cache miss)
        raise _not_a_tensor(op, args[0])
    return promoted_dtype(op, args)


def promoted_dtype(op: Op, args: Sequence[Any]) -> np.dtype:
    """The dtype row ``op`` (which promotes) computes ``args`` (tensors, numbers, None) in:
    torch's result type, integers made the default float for ``promote="float"``."""
    tensors = [(a.dtype, a.ndim) for a in args if isinstance(a, Tensor)]
    scalars = [a for a in args if a is not None and not isinstance(a, Tensor)]
    d = _dtypes.result_type(tensors, scalars)
    if op.promote == "float" and not (d.is_floating_point or d.is_complex):
        d = _dtypes.get_default_dtype()
    return d.np


def _record(op: Op, skey: tuple, args: tuple, aux: tuple, results: list,
            attach: bool = True) -> OpNode:
    """Build the node for one op call; ``attach`` makes it the results' grad_fn."""
    needs, edges, in_meta = [], [], []
    found = captures.found
    for a in args:
        if isinstance(a, Tensor):
            layout, array = a._layout, a._cell.array  # (``_meta``, inlined: this loop is hot)
            in_meta.append((array.shape if layout is None else layout.shape, array.dtype))
            if a._requires_grad:
                if found is not None and not isinstance(array, jax.core.Tracer):
                    found[id(a)] = a  # an outer tensor used inside a jaxgrad.func transform
                edge = a._gradient_edge()  # None: torch's invalid edge, no gradient computed
                needs.append(edge is not None)
                edges.append(edge)
                continue
        else:
            in_meta.append(_NO_META)
        needs.append(False)
        edges.append(None)
    needs = tuple(needs)
    out_meta = tuple([(r._cell.array.shape, r._cell.array.dtype) if r._layout is None
                      else _meta(r) for r in results])
    node = node_class_for(op)(tuple(edges), out_meta, op, skey, needs, tuple(in_meta),
                              _save(op, needs, args, aux))
    if attach:
        for j, r in enumerate(results):
            if out_meta[j][1] in DIFFERENTIABLE_DTYPES and j not in op.nondiff_outputs:
                r._requires_grad = True
                r._grad_node = node
                r._output_nr = j
        save_outputs(node, results)
    return node


_NO_META = (None, None)


def _meta(t: Tensor) -> tuple:
    """(shape, dtype) of a tensor's value, without computing a view not computed yet."""
    layout = t._layout
    array = t._cell.array
    return (array.shape if layout is None else layout.shape, array.dtype)


def _save(op: Op, needs, args, aux) -> dict:
    """The node's saved inputs and aux values (outputs are saved by :func:`save_outputs` once
    they carry their history: a pack hook sees them as torch's do)."""
    saved = {}
    for name, source, i in op.save_plan(needs, len(args)):
        if source == "output":
            continue
        value = args[i] if source == "input" else aux[i]
        if isinstance(value, Tensor):
            if value._inference:
                raise RuntimeError(INFERENCE_SAVE_MESSAGE)
            saved[name] = SavedTensor(value)
        elif value is not None or source == "aux":  # numbers, index arrays: freed with the node
            saved[name] = SavedConstant(value)
    return saved


def save_outputs(node: OpNode, results: list) -> None:
    """Save the outputs ``node``'s formulas name (after the forward, and after the write of an
    in-place op)."""
    op, saved = node.op, node.saved
    for name, source, i in op.save_plan(node.needs, len(node.needs)):
        if source == "output":
            r = results[i]
            saved[name] = SavedTensor(r, i, r._cell.array.dtype in DIFFERENTIABLE_DTYPES
                                      and i not in op.nondiff_outputs)


# --- views -----------------------------------------------------------------------------------
#
# Note [Views and CopySlices]
# A view (``view``, ``t[0]``, ``transpose``, ``detach`` and ``.data`` for storage only) is a Tensor
# whose ``_cell`` is its base's storage cell and whose ``_layout`` (shape, strides, offset) says
# which elements it sees; it shares its base's version counter (``_vc``), so an in-place op on
# either bumps the version both report, and a node that saved either sees the change. JAX arrays
# are immutable: an in-place op on a view computes the base's new array (a scatter at the view's
# layout) and writes it into the shared cell (``_write_view``); a view reads its array again
# when the cell's ``generation`` moved (``Tensor._value``), or lazily, fused into the consuming
# op's kernel (``apply_view``: ``Tensor._lazy``).
# Autograd follows torch's rules for views:
# - a view requires grad when its base does, even when made under no_grad; its ``_base`` is the
#   root base and ``_creation_meta`` records how it was made (no_grad, inference mode, one of
#   several outputs), which decides whether an in-place op on it is allowed (``check_inplace``);
# - an in-place op on a view rebases the *base's* history: the base's grad_fn becomes a
#   ``CopySlices`` node (``rebase_history``) that takes the gradient of the whole base, runs the
#   in-place op's node on the view's slice of it (``AS_STRIDED`` at the view's layout) and
#   scatters the result back (``AS_STRIDED_SCATTER``); its result is a fresh tensor at
#   ``_version`` 2, as torch's ``new_empty_strided().copy_()`` and the slice's ``copy_``;
# - other views of that base then get a regenerated grad_fn when next used
#   (``regenerate_view_node``): torch's ``AsStridedBackward0``, or with view replay on the original
#   view nodes replayed from the base (``_view_fn``).

def apply_view(op: Op, geometry: Callable[..., Layout], self: Tensor, **static: Any) -> Tensor:
    """Run a view op: the result shares ``self``'s storage and version counter.

    Its value is computed when first needed (``Tensor._lazy``: by the op's own kernel, or inside
    the XLA program of the op that consumes it), not now; the node is recorded now, as torch
    records it."""
    dispatcher = _dispatching_subclass((self,)) if PYTHON_DISPATCH[0] else None
    if isinstance(dispatcher, _ModeDispatch) and not dispatches_in_python(self):
        # (a mode sees the view op; the view, its version counter and node are made as always)
        func = torch_overload(op, static)
        with running(func, lambda t, **kw: apply_view(op, geometry, t, **{**static, **kw}),
                     below_autograd=False):
            return dispatcher.__torch_dispatch__(func, (), (self,), static)
    if dispatcher is not None:
        return _apply_subclass(dispatcher, op, (self,), (), static, lambda t, **kw: apply_view(
            op, geometry, t, **{**static, **kw}))
    layout = geometry(self._geometry(), **static)
    replay = (op, geometry, static) if (_state.view_replay or op.reinterprets
                                        or self._view_fn is not None) else None
    if _profiler.active or self._lazy is not None:
        out = make_view(apply(op, self, **static), self, layout, replay=replay)
        if op.reinterprets:
            out._cell = reinterpret(self._cell, op.reinterprets)
        if _forward_ad.active:
            _forward_ad.on_view(_FORWARD_AD, op, geometry, self, out, static)
        return out
    skey = static_key(static) if static else ()
    out = Tensor._make(None)
    make_view(out, self, layout, replay=replay)
    if op.reinterprets:
        out._cell = reinterpret(self._cell, op.reinterprets)
    out._arr = None
    out._lazy = (jitted_forward(op, skey, None, None), self)
    if _state.grad and self._requires_grad and (op.grads or op.variadic) and not self._inference:
        out._rg_from_base = False
        _record(op, skey, (self,), (), [out])
    if _forward_ad.active:
        _forward_ad.on_view(_FORWARD_AD, op, geometry, self, out, static)
    return out


def share_storage(out: Tensor, source: Tensor, layout: Layout) -> Tensor:
    """Make ``out`` (just computed from ``source``) read and write ``source``'s storage at
    ``layout``, keeping its own version counter and history: no view for autograd (torch's
    ``unsafe_split`` pieces)."""
    value = out._cell.array
    out._cell = source._cell
    out._layout = layout
    out._arr, out._arr_gen = value, source._cell.generation
    return out


def make_view(out: Tensor, source: Tensor, layout: Layout, multi_output: bool = False,
              replay: tuple | None = None) -> Tensor:
    """Make ``out`` (just computed from ``source``) a view of ``source`` with ``layout``: it
    shares the storage and version counter, records torch's CreationMeta, and requires grad
    when the base does (even when made under no_grad: torch's view requires_grad rule).

    A view of an inference tensor is an inference tensor sharing its storage, but no view for
    autograd (no ``_base``, a leaf), as torch's. ``replay`` is the view op as
    ``(op, geometry, static)`` when view replay is on: the view then keeps the chain of view
    ops from its base (``_view_fn``), which :func:`regenerate_view_node` replays."""
    share_storage(out, source, layout)
    out._vc = source._vc
    if source._inference:  # (a multi-output op may have recorded a node: not for these)
        out._inference = True
        out._grad_node, out._output_nr, out._requires_grad = None, 0, False
        return out
    out._base = source._base if source._base is not None else source
    out._view_version = source._vc.value
    out._inference = False
    if replay is not None:
        out._view_fn = _chained_view_fn(source, layout, replay)
    out._creation_meta = view_creation_meta(source, multi_output)
    if out._grad_node is None and source._requires_grad:  # made without recording (no_grad)
        out._requires_grad = True  # torch: a view requires grad when its base does
        out._rg_from_base = True
    return out


def _chained_view_fn(source: Tensor, layout: Layout, replay: tuple) -> tuple | None:
    """How to remake a view of ``source`` at ``layout`` made by ``replay`` (torch's
    ``ViewInfo::chain``): with view replay on, every view op; else a view reading its base
    through a lens (``view_as_real``, ``conj``...) replays that op after ``source``'s steps,
    and a plain view of such a view is one as_strided step after them (None: as_strided from
    the base, ``regenerate_view_node``)."""
    if _state.view_replay and (source._base is None or source._view_fn is not None):
        return (source._view_fn or ()) + (replay,)
    if replay[0].reinterprets:
        if source._view_fn is not None:
            return source._view_fn + (replay,)
        if source._base is not None:
            return (_as_strided_step(source._layout, source._base._geometry()), replay)
        return (replay,)
    if source._view_fn is None:
        return None
    return source._view_fn + (_as_strided_step(layout, source._geometry()),)


def _as_strided_step(layout: Layout, within: Layout) -> tuple:
    """The replay step (``apply_view``'s arguments) taking the view at ``layout`` out of a
    tensor at ``within`` of the same storage, as one as_strided."""
    return (V.AS_STRIDED_WITHIN, lambda _, input_layout, layout_out: layout_out,
            {"input_layout": within, "layout_out": layout})


def regenerate_view_node(view: Tensor) -> None:
    """Give a view whose base (or itself) was modified in place an AsStridedBackward0 grad_fn."""
    base = view._base
    if view._creation_meta is not None and (view._grad_node is not None or base._requires_grad):
        raise RuntimeError(view_rebase_message(view, indirect=True))
    view._view_version = view._vc.value
    edge = base._gradient_edge() if base._requires_grad else None
    if edge is None:
        return
    if view._view_fn is not None:
        _replay_view_node(view, base)
        return
    layout = view._layout
    node = node_class_for(V.AS_STRIDED)(
        (edge,), ((layout.shape, view._value.dtype),), V.AS_STRIDED,
        static_key({"layout_out": layout}), (True,), ((base.shape, base._value.dtype),), {})
    view._set_history(node, 0)  # (retain_grad moves to the new grad_fn)


def _replay_view_node(view: Tensor, base: Tensor) -> None:
    """The view's grad_fn made by replaying its view ops on its base with grad recording on
    (torch's view_fn): the original views' nodes (``ViewBackward0``...) instead of one
    ``AsStridedBackward0``."""
    replayed = _replay_view_fn(view._view_fn, base, record=True)
    view._set_history(replayed._grad_node, replayed._output_nr)


def _replay_view_fn(view_fn: tuple, base: Tensor, record: bool) -> Tensor:
    """The view ``view_fn`` makes of ``base`` (its view ops replayed), recorded or not."""
    prev = _state.grad
    _state.grad = record
    try:
        for op, geometry, static in view_fn:
            base = apply_view(op, geometry, base, **static)
    finally:
        _state.grad = prev
    return base


def replay_view_steps(view_fn: tuple, base: Tensor) -> Tensor:
    """The view ``view_fn`` (a view's ``_view_fn``) makes of ``base``, recorded as grad mode
    says (torch's ``ViewFunc`` applied to a new base)."""
    return _replay_view_fn(view_fn, base, record=_state.grad)


def remake_view(view: Tensor, base: Tensor, record: bool) -> Tensor:
    """A view of ``base`` where ``view`` lies in its own base (``base`` holding that base's
    values): ``view``'s view ops replayed on ``base`` (one as_strided where it has none, as
    multi-output views), recorded when ``record``, with ``view``'s CreationMeta (torch's
    functionalization regenerating an output view from its base)."""
    steps = view._view_fn or (_as_strided_step(view._layout, base._geometry()),)
    remade = _replay_view_fn(steps, base, record)
    remade._creation_meta = view._creation_meta
    return remade


# --- in-place ----------------------------------------------------------------------------------

def check_inplace(self: Tensor, others: tuple = (), inference: bool = True) -> None:
    """torch's errors for in-place ops on leaves, their views and non-default views, then on
    inference tensors outside inference mode (``inference=False``: the caller raises that one
    after its change, where torch's version-counter bump raises it)."""
    if _state.grad and (self.requires_grad or any(
            isinstance(o, Tensor) and o._requires_grad for o in others)):
        check_differentiable_inplace(self)
    if inference and self._inference and not is_inference_mode_enabled():
        raise RuntimeError(INFERENCE_INPLACE_MESSAGE)


OVERLAP_MESSAGE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation.")
EXPANDED_WRITE_WARNING = (
    "Use of {}_ on expanded tensors is deprecated. Please clone() the tensor before performing "
    "this operation. This also applies to advanced indexing e.g. tensor[{}] = {}")


def has_internal_overlap(self: Tensor) -> bool:
    """torch's ``has_internal_overlap(t) == MemOverlap::Yes``: a dim of size > 1 with stride 0
    (an ``expand``ed tensor) and no elements; only a tensor with a layout (a view) has one."""
    layout = self._layout
    return layout is not None and 0 in layout.strides and 0 not in layout.shape and any(
        stride == 0 and size > 1 for size, stride in zip(layout.shape, layout.strides))


def check_overlap(op: Op, self: Tensor, others: tuple = ()) -> None:
    """torch's ``assert_no_internal_overlap`` of the tensor row ``op`` writes in place: an error
    where the row says so (``Op.overlap``), after autograd's in-place errors (torch checks those
    before the kernel runs). Public functions whose argument checks torch's kernel makes after
    this one call it before them; ``_apply_inplace`` calls it for every row."""
    if op.overlap == "error" and has_internal_overlap(self):
        check_inplace(self, others, inference=False)
        raise RuntimeError(OVERLAP_MESSAGE)


def warn_expanded_write(self: Tensor, name: str, others: tuple = ()) -> None:
    """torch's deprecation warning of ``masked_fill_``, ``index_fill_`` and ``index_put_`` (rows
    with ``overlap="warn"``) writing into an expanded tensor: their public functions call this
    where torch's kernels warn, after autograd's checks and before their own argument checks."""
    if has_internal_overlap(self):
        check_inplace(self, others, inference=False)
        example = ("indices", "tensor") if name == "index_put" else ("mask", "scalar")
        warn_at_user_line(EXPANDED_WRITE_WARNING.format(name, *example))


def check_differentiable_inplace(self: Tensor) -> None:
    """torch's checks of an in-place op that autograd records, on views with a non-default
    CreationMeta, views of leaves and leaves requiring grad."""
    base = self._base
    if base is not None:
        if self._creation_meta is not None:
            raise RuntimeError(view_rebase_message(self, indirect=False))
        if self.requires_grad and base._grad_node is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
    if self.requires_grad and self._grad_node is None:  # (the field: no view regenerated)
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


def view_creation_meta(source: Tensor, multi_output: bool = False) -> str | None:
    """torch's CreationMeta of a view of ``source`` made now (None is torch's DEFAULT)."""
    if _state.inference:
        new = "inference"
    elif not _state.grad:
        new = "no_grad"
    else:
        new = "multi_output" if multi_output else None
    previous = source._creation_meta
    return previous if new is None or previous == "inference" else new


def view_rebase_message(view: Tensor, indirect: bool) -> str:
    """torch's error for an in-place change that a view with a non-default CreationMeta sees
    (torch's handle_view_on_rebase)."""
    meta, fn = view._creation_meta, view._grad_node
    what = ("its base or another view of its base has been" if indirect else "is being")
    if meta in ("no_grad", "inference") or fn is None:
        mode = "inference mode" if meta == "inference" else "no_grad mode"
        start = (f"Output {view._output_nr} of {_op_name(fn)} is a view of a view which was "
                 f"created in {mode} and " if fn is not None
                 else f"A view was created in {mode} and ")
        start += f"{what} modified inplace " + (
            "in normal mode." if meta == "inference" else "with grad mode enabled.")
    else:
        start = f"Output {view._output_nr} of {_op_name(fn)} is a view and {what} modified inplace."
    if meta == "multi_output":
        return (f"{start} This view is the output of a function that returns multiple views. "
                "Such functions do not allow the output views to be modified inplace. You should "
                "replace the inplace operation by an out-of-place one.")
    if meta == "custom_function":
        return (f"{start} This view was created inside a custom Function (or because an input "
                "was returned as-is) and the autograd logic to handle view+inplace would "
                "override the custom backward associated with the custom Function, leading to "
                "incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
                "output of the custom Function.")
    block = "inference_mode" if meta == "inference" else "no_grad"
    return (f"{start} Given that this use case is ambiguous and error-prone, it is forbidden. You "
            "can clarify your code by moving both the view and the inplace either both inside "
            f"the {block} block (if you don't want the inplace to be tracked) or both outside (if "
            "you want the inplace to be tracked).")


def apply_inplace(op: Op, self: Tensor, *others: Any, aux: tuple = (), **static: Any) -> Tensor:
    """Run ``op`` with ``self`` as first input and write the result into ``self``."""
    if _profiler.active:
        return _profiler.record_op(f"aten::{op.name}_", (self, *others),
                                   lambda: _apply_inplace(op, self, others, aux, static))
    return _apply_inplace(op, self, others, aux, static)


def _apply_inplace_subclass(cls: type, op: Op, self: Tensor, others: tuple, aux: tuple,
                            static: dict) -> Tensor:
    """An in-place op on a wrapper subclass: its ``__torch_dispatch__`` runs the in-place
    overload (the subclass writes what it holds); ``self`` takes the version bump and the
    history, as torch's autograd layer above the subclass does."""
    check_inplace(self, others, inference=False)
    record = _state.grad and bool(op.grads or op.variadic) and (self.requires_grad or any(
        isinstance(a, Tensor) and a._requires_grad for a in others))
    before = None
    if record:  # the pre-modification self, with its history (torch's clone), for the formulas
        with no_grad():
            before = apply(V.CLONE, self)
        before._requires_grad, before._grad_node = self._requires_grad, self.grad_fn
        before._output_nr = self._output_nr
    def write(t: Tensor, *o: Any, **kw: Any) -> Tensor:
        version = t._vc.value  # below autograd, torch's kernels bump no version counter
        out = apply_inplace(op, t, *o, aux=aux, **{**static, **kw})
        t._vc.value = version
        return out

    func = _inplace_overload(op)
    with running(func, write):
        cls.__torch_dispatch__(func, _subclass_types((self, *others)), (self, *others), static)
    self._vc.value += 1
    if record:
        node = _record(op, static_key(static) if static else (), (before, *others), aux,
                       [self], attach=False)
        _rebase_history(self, node)
    return self


def _apply_inplace(op: Op, self: Tensor, others: tuple, aux: tuple, static: dict) -> Tensor:
    if PYTHON_DISPATCH[0]:
        cls = _dispatching_subclass((self, *others))
        if cls is not None:
            return _apply_inplace_subclass(cls, op, self, others, aux, static)
    if transform_stack.kinds:
        check_not_captured(self._cell, _aten_inplace_name(op))
    # torch refuses an inference tensor outside inference mode when its version counter is
    # bumped, after the kernel wrote: the new values stay, the error comes after (no history)
    refused = self._inference and not is_inference_mode_enabled()
    check_inplace(self, others, inference=False)
    if self._layout is not None:  # only a view can overlap itself
        check_overlap(op, self, others)
    args = (self, *others)
    skey = static_key(static) if static else ()
    out_dtype = self._value.dtype
    compute_dtype = _compute_dtype(op, args) if op.promote else None
    if compute_dtype is not None and not _dtypes.can_cast(
            _dtypes.from_numpy_dtype(compute_dtype), self.dtype):
        raise RuntimeError(
            f"result type {_dtypes.scalar_type_name(_dtypes.from_numpy_dtype(compute_dtype))} "
            f"can't be cast to the desired output type {_dtypes.scalar_type_name(self.dtype)}")
    new = _run_forward(op, skey, compute_dtype, out_dtype, args, aux)
    if transform_stack.kinds and transform_stack.kinds[-1] == "vmap":
        _check_vmapped_write(op, self, new)
    if refused:
        self._write(new)
        raise RuntimeError(INFERENCE_INPLACE_MESSAGE)
    record = _state.grad and bool(op.grads or op.variadic) and (self.requires_grad or any(
        isinstance(a, Tensor) and a._requires_grad for a in others))  # (logical_and_: no node)
    node = None
    if record:
        node = _record(op, skey, (_snapshot(self), *others), aux, [self],
                       attach=False)
    if _forward_ad.active:
        _forward_ad.on_inplace(_FORWARD_AD, op, skey, compute_dtype, out_dtype, args, aux)
    self._write_inplace(new)
    if node is not None:
        _rebase_history(self, node)
    return self


VMAPPED_INPLACE = (
    "vmap: {}(self, *extra_args) is not possible because there exists a Tensor `other` in "
    "extra_args that has more elements than `self`. This happened due to `other` being vmapped "
    "over but `self` not being vmapped over {}. Please try to use out-of-place operators "
    "instead of {}. If said operator is being called inside the PyTorch framework, please file "
    "a bug report instead.")


def _batch_size(array: Any) -> int | None:
    """The size of the batch dim of a value vmap batches (a BatchTracer's), else None."""
    dim = getattr(array, "batch_dim", None)
    return array.val.shape[dim] if isinstance(dim, int) else None


def _check_vmapped_write(op: Op, self: Tensor, new: Any) -> None:
    """torch's error for an in-place op under vmap whose result varies over the batch while
    ``self`` does not (a tensor from outside, or made unbatched inside): TensorIterator's
    broadcast error for the elementwise ops, the batching rule's for the others."""
    size = _batch_size(new)
    if size is None or _batch_size(self._value) is not None:
        return
    if op.name in _TENSOR_OR_SCALAR:  # (batching rules that broadcast through TensorIterator)
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                           f"shape {[size, *self.shape]}")
    if op.name == "copy":  # copy_'s batching rule
        raise RuntimeError(VMAPPED_INPLACE.format("inplace arithmetic", "in a vmap",
                                                  "inplace arithmetic"))
    level = sum(kind != "eager" for kind in transform_stack.kinds)  # torch's fallback
    raise RuntimeError(VMAPPED_INPLACE.format(f"aten::{op.name}_", f"at level {level}",
                                              f"aten::{op.name}_"))


_TENSOR_OR_SCALAR = {"add": "Tensor", "sub": "Tensor", "mul": "Tensor", "div": "Tensor"}


def _aten_inplace_name(op: Op) -> str:
    """The overload name torch's dispatcher shows for ``op``'s in-place form (``aten::add_.Tensor``,
    ``aten::fill_.Scalar``, ``aten::exp_``)."""
    overload = op.schema.overload if op.schema is not None else ""
    if not overload and op.name in _TENSOR_OR_SCALAR:
        overload = _TENSOR_OR_SCALAR[op.name]
    elif not overload and op.name in ("fill", "lerp", "pow"):
        overload = "Scalar" if op.aux else "Tensor"
    return f"aten::{op.name}_" + (f".{overload}" if overload else "")


def apply_inplace_view(op: Op, geometry: Callable[..., Layout], self: Tensor,
                       **static: Any) -> Tensor:
    """An in-place view op (``unsqueeze_``, ``t_``...): ``self`` takes the view's shape and
    strides over its own storage (other tensors sharing the storage keep theirs), its version
    moves on, and ``op``'s node becomes its grad_fn (a view stays a view of its base)."""
    if transform_stack.kinds:
        check_not_captured(self._cell, _aten_inplace_name(op))
    refused = self._inference and not is_inference_mode_enabled()  # (raised after the change,
    if not refused:                                                # without the leaf checks)
        check_inplace(self)
    if _forward_ad.active and not refused:
        _forward_ad.on_inplace_view(_FORWARD_AD, op, geometry, self, static)
    skey = static_key(static) if static else ()
    new = jitted_forward(op, skey, None, None)(self._value)
    if refused:
        self._layout = geometry(self._geometry(), **static)
        structure_changed()
        self._arr, self._arr_gen, self._lazy = new, self._cell.generation, None
        raise RuntimeError(INFERENCE_INPLACE_MESSAGE)
    node = None
    if _state.grad and self._requires_grad:
        node = _record(op, skey, (_snapshot(self),), (), [self], attach=False)
    self._layout = geometry(self._geometry(), **static)
    structure_changed()
    self._arr, self._arr_gen, self._lazy = new, self._cell.generation, None
    self._vc.value += 1
    if node is not None:  # as torch: hooks and retain_grad stay on the tensor's hook list (the
        # old grad_fn's, if one was registered before), not moved as other in-place ops move them
        self._grad_node, self._output_nr, self._requires_grad = node, 0, True
    self._view_version = self._vc.value
    return self


RESIZE_WARNING = (
    "An output with one or more elements was resized since it had shape {}, which does not match "
    "the required output shape {}. This behavior is deprecated, and in a future PyTorch release "
    "outputs will not be resized unless they have zero elements. You can explicitly reuse an out "
    "tensor t by resizing it, inplace, to zero elements with t.resize_(0).")


def check_out_overlap(out: Tensor, inputs: list) -> None:
    """torch's refusal of an ``out=`` tensor with internal overlap (an ``expand``), that partly
    overlaps an input (the same elements, ``exp(x, out=x)``, are allowed) or is an inference
    tensor outside inference mode."""
    if has_internal_overlap(out):
        raise RuntimeError(OVERLAP_MESSAGE)
    if out._inference and not is_inference_mode_enabled():
        raise RuntimeError(INFERENCE_INPLACE_MESSAGE)
    for t in inputs:
        if t._cell is out._cell and t._geometry() != out._geometry():
            raise RuntimeError(
                "unsupported operation: some elements of the input tensor and the written-to "
                "tensor refer to a single memory location. Please clone() the tensor before "
                "performing the operation.")


def write_out(out: Tensor, result: Tensor) -> Tensor:
    """Store an op's ``result`` into the ``out=`` tensor as torch does: cast to its dtype (if
    torch's casting rules allow), resized (with torch's warning unless it was empty) to a fresh
    storage when the shapes differ, one version bump."""
    if not _dtypes.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {_dtypes.scalar_type_name(result.dtype)} can't be cast to "
                           f"the desired output type {_dtypes.scalar_type_name(out.dtype)}")
    value = result._value.astype(out._value.dtype)
    if value.shape == tuple(out.shape):
        out._write_inplace(value)
        return out
    if out.numel():
        warn_at_user_line(RESIZE_WARNING.format(list(out.shape), list(value.shape)))
    out._cell, out._layout, out._arr, out._base = Storage(value), None, None, None
    out._lazy = None
    out._vc.value += 1
    return out


def _snapshot(self: Tensor) -> Tensor:
    """The pre-modification ``self``: its current value and autograd identity (torch's clone)."""
    fn = self.grad_fn  # (a view whose base changed gets its grad_fn, and requires grad, now)
    snap = Tensor._make(self._value, self._requires_grad)
    snap._grad_node, snap._output_nr = fn, self._output_nr
    return snap


def _rebase_history(self: Tensor, node: OpNode) -> None:
    """After an in-place op: ``node`` becomes self's grad_fn, or its base's through CopySlices;
    then the node saves its result, the modified self at its new version."""
    rebase_history(self, node, 0)
    if self._base is not None:
        node.view_grad_fn = weakref.ref(self.grad_fn)
    save_outputs(node, [self])


def rebase_history(tensor: Tensor, node: Node, output_nr: int) -> None:
    """``node`` becomes the history of in-place-modified ``tensor``: its grad_fn, or for a view
    its base's through torch's CopySlices (which takes the view as the node's input 0)."""
    base = tensor._base
    if base is None:
        tensor._set_history(node, output_nr)
    else:
        lensed = tensor._view_fn if lens_of(tensor._cell) else None
        base._set_history(CopySlices(base._gradient_edge(), tensor._layout, node, base,
                                     lensed), 0)
        tensor._requires_grad = True


class CopySlices(Node):
    """grad_fn of a base after an in-place op on one of its views (torch's CopySlices; see
    Note [Views and CopySlices])."""

    __slots__ = ("base_meta", "fn", "layout", "view_fn")

    def name(self) -> str:
        return "torch::autograd::CopySlices"  # torch's C++ class name, as AccumulateGrad's

    def __init__(self, base_edge, layout: Layout, fn: OpNode, base: Tensor,
                 view_fn: tuple | None = None) -> None:
        super().__init__((base_edge, *fn.next_edges[1:]), ((base.shape, base._value.dtype),))
        self.fn, self.layout, self.view_fn = fn, layout, view_fn
        self.base_meta = (tuple(base.shape), base._value.dtype)

    def apply(self, grads: list, create_graph: bool, wanted: tuple | None = None) -> list:
        g = grads[0]
        if g is None:
            return [None] * len(self.next_edges)
        fn = self.fn
        if fn is None:
            raise RuntimeError(FREED_MESSAGE)
        if self.view_fn is not None:
            return self._apply_through_lens(g, fn, create_graph)
        if create_graph:
            return self._apply_recorded(g, fn)
        view_grad = apply(V.AS_STRIDED, g, layout_out=self.layout)
        res = fn.apply([view_grad], create_graph)
        if res[0] is not None:
            slot = res[0]
        else:
            with x64_scope():
                slot = Tensor._make(jnp.zeros_like(view_grad._value))
        result = apply(V.AS_STRIDED_SCATTER, g, slot, layout_out=self.layout)
        result._vc.value = 2  # torch: new_empty_strided(...).copy_(grad), then the slice's copy_
        return [result, *res[1:]]

    def _apply_recorded(self, g: Tensor, fn: OpNode) -> list:
        """Under ``create_graph``, torch's CopySlices op for op, recorded: the gradient copied
        into a new tensor (``CopyBackwards``), the view's slice of it (``AsStridedBackward0``)
        cloned (``CloneBackward0``) for the node, whose result is copied back into the slice
        (the copy's grad_fn ``CopySlices``, ``_version`` 2)."""
        with x64_scope():
            result = Tensor._make(jnp.empty(g._value.shape, g._value.dtype))
        result = apply_inplace(E.COPY, result, g)
        grad_slice = make_view(apply(V.AS_STRIDED, result, layout_out=self.layout), result,
                               self.layout)
        res = fn.apply([apply(V.CLONE, grad_slice)], True)
        if res[0] is not None:
            apply_inplace(E.COPY, grad_slice, res[0])
        else:
            with x64_scope():
                apply_inplace(E.COPY, grad_slice, Tensor._make(jnp.zeros_like(grad_slice._value)))
        return [result, *res[1:]]

    def _apply_through_lens(self, g: Tensor, fn: OpNode, create_graph: bool) -> list:
        """torch's CopySlices with a view_fn (the view reads its base through a lens, so no
        as_strided of the base's gradient reaches it): the view remade on a copy of the
        gradient, the node's result written into it. (Not differentiable again.)"""
        result = Tensor._make(g._value)
        view = _replay_view_fn(self.view_fn, result, record=False)
        res = fn.apply([Tensor._make(view._value)], create_graph)
        with x64_scope():
            view._write(res[0]._value if res[0] is not None else jnp.zeros_like(view._value))
        result._vc.value = 2
        return [result, *res[1:]]

    def release_variables(self) -> None:
        """Let go of ``fn`` (as torch's): its saved tensors go with it, unless a graph made
        with ``create_graph`` still runs it as a node of its own."""
        self.fn = None


# --- differentiable backward (create_graph=True) -----------------------------------------------

def _formula_groups(op: Op, node_names: tuple) -> list[tuple[tuple, str]]:
    """The inputs whose gradients one recorded op computes, with its node name: one op per
    input, as torch's formulas are one expression per input (``mse_loss``'s ``self`` and
    ``target`` get nodes of their own, freed apart); the inputs of a formula torch computes
    for several at once (``grad_nodes["*"]``, a variadic row: ``convolution_backward``) share
    one per node name."""
    if op.variadic is not None or "*" in op.grad_nodes:
        return [(tuple(n == name for n in node_names), name)
                for name in dict.fromkeys(n for n in node_names if n is not None)]
    return [(tuple(j == i for j in range(len(node_names))), name)
            for i, name in enumerate(node_names) if name is not None]


def declared_grad_nodes(op: Op, static: tuple, values: dict) -> tuple:
    """``op.grad_nodes`` as ``(input, node name)`` pairs, a callable entry called with the static
    arguments and saved values (aux operands: ``alpha``) its parameters name; where one of them
    is not a concrete value (traced), or it returns None, the entry is left out (the fallback
    name)."""
    pairs = []
    for name, node_name in op.grad_nodes.items():
        if callable(node_name):
            known = {**dict(static), **values}
            try:
                args = {p: known[p] for p in _grad_node_params(node_name)}
                node_name = node_name(**{p: _concrete(v) for p, v in args.items()})
            except (KeyError, jax.errors.ConcretizationTypeError):
                continue
        if node_name is not None:  # (None: the callable names no node for these arguments)
            pairs.append((name, node_name))
    return tuple(pairs)


@cache(maxsize=1024)
def _grad_node_params(fn: Callable) -> tuple:
    return tuple(inspect.signature(fn).parameters)


def _concrete(value: Any) -> Any:
    """A saved aux operand as a Python number where it holds one (a 0-d array or tensor)."""
    value = value._value if isinstance(value, Tensor) else value
    if hasattr(value, "shape") and value.shape == () and not isinstance(value, jax.core.Tracer):
        return value.item()
    if isinstance(value, jax.core.Tracer):
        raise jax.errors.ConcretizationTypeError(value)
    return value


@cache(maxsize=4096)
def differentiable_backward_op(op: Op, skey: tuple, needs: tuple, in_meta: tuple,
                               saved_names: tuple, node_name: str) -> tuple[Op, tuple]:
    """An op named ``node_name`` whose forward is ``op``'s backward for the inputs ``needs``
    and whose backward is that function's VJP; and which of ``op``'s inputs its outputs are the
    gradients of."""
    core = backward_function(op, skey, needs, in_meta)
    k = len(saved_names)
    mask = tuple(need and (op.variadic is not None or name in op.grads)
                 for name, need in zip(op.input_names(len(needs)), needs))

    def forward(*arrays):  # (the incoming gradients first, as torch's backward ops take them)
        out = core(dict(zip(saved_names, arrays[len(arrays) - k:])),
                   tuple(arrays[:len(arrays) - k]))
        return tuple(o for o, m in zip(out, mask) if m)

    if node_name == "NotImplemented":  # (torch's backward op has no formula of its own)
        return _not_differentiable_op(forward, f"{op.node}Backward", RuntimeError(
            f"derivative for aten::{op.name}_backward is not implemented")), mask
    missing = [op.grad_not_implemented[name] for name, need in zip(op.input_names(len(needs)),
                                                                  needs)
               if need and name in op.grad_not_implemented]
    if missing:  # (torch's backward op has a node, whose own derivative raises)
        return _not_differentiable_op(forward, f"{op.node}Backward", NotImplementedError(
            f"the derivative for '{missing[0]}' is not implemented."), node_name), mask
    return vjp_op(node_name, forward, name=f"{op.node}Backward", formula=True), mask


def _detached(value: Any) -> Any:
    """``value`` cut from the graph: its array, or for a ``__torch_dispatch__`` subclass (which
    holds no array of its own) its ``detach()``, so the formula still dispatches to it."""
    if not isinstance(value, Tensor):
        return value
    return value.detach() if dispatches_in_python(value) else value._value


def _not_differentiable_op(forward: Callable, name: str, error: Exception,
                           node_name: str = "NotImplemented") -> Op:
    """An op computing ``forward`` whose node (torch's ``NotImplemented``, or the backward op's
    own ``node_name``) raises ``error`` when a backward reaches it."""

    def pullback(inputs, grads):
        raise type(error)(*error.args)

    return Op(name, node_name, forward, inputs=None, variadic=pullback)


def _meta_of(values: Any) -> tuple:
    """What decides the shapes a formula gives, hashable: each value (a dict's in key order) as
    its shape and dtype (arrays, tensors), its type (numbers), or itself (tuples of those,
    None, other hashable constants)."""
    items = values.items() if isinstance(values, dict) else enumerate(values)
    return tuple((key, _abstract(v)) for key, v in items)


def _abstract(value: Any) -> Any:
    value = value._value if isinstance(value, Tensor) else value
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return ("array", tuple(value.shape), np.dtype(value.dtype))
    if isinstance(value, (tuple, list)):
        return (type(value), tuple(_abstract(v) for v in value))
    if isinstance(value, (bool, int, float, complex)):
        return ("number", type(value))
    return ("constant", value)


def _placeholder(meta: Any) -> Any:
    kind, *rest = meta
    if kind == "array":
        return jax.ShapeDtypeStruct(*rest)
    if kind == "number":
        return rest[0](1)
    if kind == "constant":
        return rest[0]
    return kind(_placeholder(m) for m in rest[0])


@cache(maxsize=4096)
def _read_as_masks_only(op: Op, skey: tuple, needs: tuple, in_meta: tuple, saved_meta: tuple,
                        grads_meta: tuple, declared: tuple = ()) -> frozenset:
    """The saved values (by name) and incoming gradients (by position) the formulas for
    ``needs`` read only as masks or indices (through comparisons' bools and integers:
    ``clamp``'s ``grad * (min <= self <= max)``, ``max``'s index) or for their shape
    (``zeros_like(self)``, ``fill``'s ``zeros_like(grad)``): torch's graph has no edge to them,
    so the gradient requires grad only through the others (or not at all: no history).

    Shape-only reads count for the table's formulas alone: a rule differentiated by JAX (the
    node of an earlier create_graph) may drop a read torch's ops make (``x.pow(0)``). A formula
    that is one of torch's backward ops (``threshold_backward``, node
    ``ThresholdBackwardBackward0``) takes its inputs, so none is read as a mask; nor is any
    where the formula cannot be traced on shapes alone."""
    nodes = dict(declared)
    named = [nodes.get(name, nodes.get("*", ""))
             for name, need in zip(op.input_names(len(needs)), needs) if need]
    if any(node.endswith("BackwardBackward0") or node == "NotImplemented" for node in named):
        return frozenset()
    core = backward_function(op, skey, needs, in_meta)
    names = [k for k, m in saved_meta if m[0] == "array"]
    saved = {k: _placeholder(m) for k, m in saved_meta}
    grads = tuple(_placeholder(m) for _, m in grads_meta)

    def formulas(arrays: tuple, gs: tuple) -> list:
        out = core({**saved, **dict(zip(names, arrays))}, gs)
        return [o for o in out if o is not None]

    try:
        with x64_scope():
            closed = jax.make_jaxpr(formulas)(tuple(saved[k] for k in names), grads)
    except Exception:  # (a formula reading concrete values: index arrays)
        return frozenset()
    detached = ("mask", "unread") if op.variadic is None else ("mask",)
    keys = [*names, *range(len(grads))]
    values = [*(saved[k] for k in names), *grads]
    return frozenset(key for key, value, how in zip(keys, values, how_inputs_are_read(closed))
                     if how in detached and jnp.issubdtype(value.dtype, jnp.inexact))


@cache(maxsize=4096)
def grad_node_names(op: Op, skey: tuple, needs: tuple, in_meta: tuple, saved_meta: tuple,
                    grads_meta: tuple, node: str, declared: tuple = ()) -> tuple:
    """Per input, the grad_fn torch gives its gradient under create_graph (None where not
    needed): the node the row says its formula ends in (``declared``: ``Op.grad_nodes`` as
    :func:`declared_grad_nodes` gives them; else
    ``<node>Backward``), then what the engine's ``validate_outputs`` does after the formula:
    ``real`` of a complex gradient of a real input (``SelectBackward0``: torch's ``real`` is
    ``view_as_real(grad).select(-1, 0)``), ``sum_to`` of a
    broadcast one (``SumBackward0`` to a 0-d input, ``ViewBackward0`` when it drops leading
    dims, else ``SumBackward1``) and a cast to the input's dtype (``ToCopyBackward0``). A
    formula that cannot be traced on shapes alone keeps the row's names."""
    nodes = dict(declared)
    raw: list = []
    core = backward_function(op, skey, needs, in_meta, raw_meta=raw)
    saved = {k: _placeholder(m) for k, m in saved_meta}
    grads = tuple(_placeholder(m) for _, m in grads_meta)
    try:
        with x64_scope():
            jax.eval_shape(lambda sv, gs: core(sv, gs), saved, grads)
    except Exception:  # (a formula reading concrete values: index arrays)
        raw = []
    names = []
    for name, need, (shape, dtype), got in zip(op.input_names(len(needs)), needs, in_meta,
                                               raw or [None] * len(needs)):
        if not need or (op.variadic is None and name not in op.grads):
            names.append(None)
            continue
        node_name = nodes.get(name, nodes.get("*", node + "Backward"))
        if got is None:  # (not traced: the row's name)
            names.append(node_name if node_name != "sum_to" else node + "Backward")
            continue
        raw_shape, raw_dtype = got
        if node_name == "sum_to":  # (the formula is torch's sum_to of grad: named below)
            node_name, raw_shape = node + "Backward", grads_meta[0][1][1]
        if jnp.issubdtype(raw_dtype, jnp.complexfloating) and not jnp.issubdtype(
                dtype, jnp.complexfloating):
            node_name, raw_dtype = "SelectBackward0", jnp.finfo(raw_dtype).dtype
        if raw_shape != tuple(shape):
            lead = len(raw_shape) - len(shape)
            node_name = ("SumBackward0" if not shape else "ViewBackward0" if lead > 0
                         else "SumBackward1")
        if raw_dtype != dtype:
            node_name = "ToCopyBackward0"
        names.append(node_name)
    return tuple(names)


# torch's formula ops for the operations of a formula's program, by (primitive, operand): the
# grad_fn of the gradient of what that operand reads (Note [Naming gradients of formulas])
_READER_NODES = {("mul", 0): "MulBackward0", ("mul", 1): "MulBackward0",
                 **{(p, 0): "MulBackward0" for p in ("integer_pow", "sin", "cos", "exp")},
                 ("neg", 0): "NegBackward0", ("sub", 1): "NegBackward0", ("div", 0): "DivBackward0"}

# Note [Naming gradients of formulas]
# Under create_graph a node's formula runs as one op (``differentiable_backward_op``) whose
# node is named as the last op of torch's formula. Differentiating that op again, torch runs
# the backward of each op of its formula: an input's gradient is made by the formula of the op
# that reads it (``x.pow(2)``'s: ``MulBackward0``), or handed on unchanged through an ``add``.
# The formula's program says which operation reads each input (``input_readers``); where one
# operation reads it and torch's formula for that operation is known (``_READER_NODES``),
# that names its gradient; otherwise (several reads, other operations) the name stays
# jaxgrad's ``<Node>Backward``.


def _transparent(eqn: Any, position: int) -> bool:
    """An operation whose operand's gradient is its result's, unchanged (torch's ``add``)."""
    prim = eqn.primitive.name
    if prim == "convert_element_type":
        return eqn.invars[0].aval.dtype == eqn.outvars[0].aval.dtype
    return prim in ("add", "add_any", "copy", "copy_p") or (prim == "sub" and position == 0)


@cache(maxsize=4096)
def _names_by_readers(op: Op, metas: tuple) -> tuple:
    """The formula op ``op``'s ``(input, node name)`` pairs, for each input whose gradient is
    named by the operation of the formula that reads it (Note [Naming gradients of formulas]);
    ``metas``: its inputs as ``_abstract`` describes them, numbers as constants."""
    try:
        with x64_scope():
            closed = jax.make_jaxpr(op.forward)(*(_placeholder(m) for m in metas))
    except Exception:  # (a formula reading concrete values)
        return ()
    names = (_READER_NODES.get(reads[0]) if reads and len(reads) == 1 else None
             for reads in input_readers(closed, _transparent))
    return tuple((input, name) for input, name in zip(op.input_names(len(metas)), names)
                 if name is not None)


def vjp_op(node_name: str, fn: Callable, name: str | None = None,
           formula: bool = False) -> Op:
    """An op computing ``fn(*inputs) -> tuple`` whose backward is ``jax.vjp(fn)``; its node is
    ``node_name``, and the op (as profiles and ``__torch_dispatch__`` see it) ``name`` or that;
    ``formula``: ``fn`` is a node's formula (Note [Naming gradients of formulas])."""

    def pullback(inputs, grads):
        return tuple(torch_vjp(fn, *inputs)[1](tuple(grads)))

    return Op(name or node_name, node_name, fn, inputs=None, variadic=pullback,
              grad_nodes_by_readers=formula)


# forward-mode AD runs tangents through these entry points (see _forward_ad)
_FORWARD_AD = _forward_ad.Dispatch(apply, apply_view, apply_inplace, apply_inplace_view, make_view,
                                   vjp_op, _snapshot)
