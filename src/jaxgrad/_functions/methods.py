"""``Tensor``'s op methods, attached once by :func:`attach_tensor_methods` (the top layer, as JAX
attaches its array methods with ``register_jax_array_methods()``).

The methods of declared ops (``t.exp()``, ``t.exp_()``, ``t.add(...)``) come from ``opgen.DECLARED``
(every theme declared: ``catalog``); written here by hand are only what torch defines in Python or
as aliases: the operators (a ``TypeError`` becomes ``NotImplemented``, as torch's binary operators
do, so Python reports ``unsupported operand type(s)``), ``view_as``/``expand_as``/``T``, the dtype
shortcuts (``t.float()``), ``to``/``cpu``/``cuda``/``type``, ``new_*``, ``backward`` and the legacy
constructor ``Tensor([1, 2])``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from .._core import device as _device_mod
from .._core import dtypes as _dtypes
from .._core.jax_setup import in_x64_scope
from .._core.placement import move
from .._core.tensor import Tensor
from .._engine.dispatch import dispatches, regenerate_view_node, replay_view_steps
from .._engine.engine import backward as _backward
from . import complex_numbers, indexing, linalg, pointwise, pointwise_bits, shapes, special
from . import creation as _creation
from . import legacy_types as _legacy_types
from . import random as _random
from . import removed_linalg as _removed_linalg
from . import tensor_memory as _tensor_memory
from . import tensor_surface as _tensor_surface
from .catalog import DECLARED
from .opgen import method_form


def attach_tensor_methods() -> None:
    """Give ``Tensor`` its op methods: one per declared op with a method variant, plus the
    hand-written ones below.

    >>> import jaxgrad
    >>> jaxgrad.tensor([0.0]).exp()
    tensor([1.])
    """
    for name, decl in DECLARED.items():
        if "method" in decl.variants:
            setattr(Tensor, name, method_form(decl))
    for name, value in _HAND_WRITTEN.items():
        setattr(Tensor, name, _in_x64(value) if name not in _OUTSIDE_X64 else value)
    for name, value in vars(Tensor).items():  # found again where they live, as pickle does
        if callable(value) and getattr(value, "__module__", "") == __name__:
            value.__name__, value.__qualname__ = name, f"Tensor.{name}"
            value.__module__ = "jaxgrad._core.tensor"


# backward runs the user's hooks and Functions: the engine scopes its own computations
_OUTSIDE_X64 = frozenset({"__new__", "backward"})


def _in_x64(value: Any) -> Any:
    """A hand-written method (or property) run inside ``x64_scope``, as the declared ops are."""
    if isinstance(value, property):
        return property(_in_x64(value.fget), value.fset and _in_x64(value.fset))
    return in_x64_scope(value) if callable(value) else value


def _operator(fn: Callable, reflected: bool = False,
              tensor_first: Callable | None = None) -> Callable:
    """A binary operator: torch turns a TypeError into NotImplemented (numpy then computes with
    ``__array__`` and wraps the result back, as with torch). A JAX array (or tracer) is taken as
    a tensor without history, in either order: ``jnp_array * t`` reaches here too, because JAX's
    operators return NotImplemented for a Tensor; a reflected operator then computes as the
    tensor's own operator would (``tensor_first(array, self)``: ``c / t`` is a division).
    Checked only after a failure: no cost to the usual call."""

    def operator(self: Tensor, other: Any) -> Any:
        try:
            return fn(other, self) if reflected else fn(self, other)
        except TypeError:
            if not isinstance(other, jax.Array):
                return NotImplemented
        other = _creation.from_jax(other)
        if tensor_first is not None:
            return tensor_first(other, self)
        return fn(other, self) if reflected else fn(self, other)

    return operator


def _equality(fn: Callable, none: bool) -> Callable:
    """``==``/``!=``: None compares by identity; ``==`` takes a numpy array as a tensor, as
    torch's does (its ``!=`` does not, so Python's identity fallback answers)."""

    def compare(self: Tensor, other: Any) -> Any:
        if other is None:
            return none
        if isinstance(other, np.ndarray) and not none:
            other = _creation.as_tensor(other)
        return fn(self, other)

    return _operator(compare)


def _array_wrap(self: Tensor, array: np.ndarray, context: Any = None,
                return_scalar: bool = False) -> Tensor:
    """A numpy ufunc's result on tensors comes back as a tensor (bool as uint8, as torch)."""
    return _creation.from_numpy(array.astype(np.uint8) if array.dtype == bool else array)


def _mH(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {self.ndim}-D tensor.")
    return complex_numbers.adjoint(self)


def _H(self: Tensor) -> Tensor:
    if self.ndim not in (0, 2):
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor." + (" For batches of matrices, consider using "
                                                       "tensor.mH" if self.ndim > 2 else ""))
    if self.ndim == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=2)
        return complex_numbers.conj(self)
    return complex_numbers.adjoint(self)


def _set_real(self: Tensor, value: Any) -> None:
    complex_numbers.real(self).copy_(value)


def _set_imag(self: Tensor, value: Any) -> None:
    complex_numbers.imag(self).copy_(value)


def _cast(dtype: _dtypes.dtype) -> Callable:
    def cast(self: Tensor, memory_format: Any = None) -> Tensor:
        return shapes.to_dtype(self, dtype)

    cast.__doc__ = f"``self.to(jaxgrad.{dtype})``."
    return cast


def _new(factory: Callable) -> Callable:
    """``t.new_zeros(...)`` & co.: the factory with ``t``'s dtype and device by default."""

    def new(self: Tensor, *args: Any, dtype: Any = None, device: Any = None,
            requires_grad: bool = False) -> Tensor:
        return factory(*args, dtype=dtype or self.dtype, device=device or self.device,
                       requires_grad=requires_grad)

    new.__doc__ = f"``jaxgrad.{factory.__name__}`` with this tensor's dtype and device."
    return new


def _to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Move to a device and/or cast to a dtype: ``.to('cpu')``, ``.to(jaxgrad.float64)``,
    ``.to(other)``; a device may be a ``jax.Device``, and a ``jax.sharding.Sharding`` places
    the tensor as ``jax.device_put`` does. Gradients flow back to the source's placement.

    >>> import jax, jaxgrad
    >>> jaxgrad.tensor([1, 2]).to(jaxgrad.float64)
    tensor([1., 2.], dtype=jaxgrad.float64)
    >>> jaxgrad.ones(2).to(jax.devices("cpu")[0]).device
    device(type='cpu')
    """
    dev, dt = kwargs.pop("device", None), kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("copy", None)
    for a in args:
        if isinstance(a, Tensor):
            dev, dt = a._value.sharding, a.dtype
        elif _device_mod.is_placement(a) or (isinstance(a, int) and not isinstance(a, bool)):
            dev = a
        elif a is not None:
            dt = a
    out = self if dt is None else shapes.to_dtype(self, dt)
    if dev is not None:
        target = _device_mod.placement(dev)
        array = out._value
        if isinstance(array, jax.core.Tracer):  # inside a transform: where the trace places it
            if not (isinstance(target, jax.Device) and _device_mod.of_jax(target) == out.device):
                out = move(out, target)
        elif (array.devices() != {target} if isinstance(target, jax.Device)
                else not array.sharding.is_equivalent_to(target, array.ndim)):
            out = move(out, target)
    return out


def _cuda(self: Tensor, device: Any = None, non_blocking: bool = False) -> Tensor:
    """A copy on the GPU (torch's ``Tensor.cuda``)."""
    return self.to("cuda" if device is None else _device_mod.device("cuda", device)
                   if isinstance(device, int) else device)


def _type(self: Tensor, dtype: Any = None, non_blocking: bool = False) -> Any:
    """The legacy type string (``'jaxgrad.FloatTensor'``), or a cast to a dtype, a legacy type
    or its name (``'torch.DoubleTensor'`` is accepted as written for torch).

    >>> import jaxgrad
    >>> jaxgrad.ones(1).type(), jaxgrad.ones(1).type(jaxgrad.LongTensor)
    ('jaxgrad.FloatTensor', tensor([1]))
    """
    if dtype is None:
        return _legacy_types.type_string(self)
    if not isinstance(dtype, (str, _dtypes.dtype, _legacy_types.tensortype)):
        raise TypeError("dtype must be a type, str, or dtype object")
    target, device_type = _legacy_types.resolve_type(dtype)
    if device_type is None or device_type == self.device.type:
        return self.to(target)
    return self.to(device_type, target)


def _tensor_backward(self: Tensor, gradient: Tensor | None = None,
                     retain_graph: bool | None = None, create_graph: bool = False,
                     inputs: Any = None) -> None:
    """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (torch.Tensor.backward).

    >>> import jaxgrad
    >>> x = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward(); x.grad
    tensor([2., 4.])
    """
    _backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _random_(self: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
    """Fill in place with integers uniform on ``[from, to)``: ``random_(from, to)``,
    ``random_(to)`` (from 0), ``random_()`` (up to the largest integer the dtype holds
    exactly); ``from=``/``to=`` as keywords, as torch names them.

    >>> import jaxgrad
    >>> t = jaxgrad.zeros(50, dtype=jaxgrad.int64).random_(to=3)
    >>> sorted(set(t.tolist())) == [0, 1, 2]
    True
    """
    unknown = set(kwargs) - {"from", "to"}
    if unknown or len(args) > 2:
        raise TypeError(f"random_() got an unexpected keyword argument '{unknown.pop()}'"
                        if unknown else f"random_() takes at most 2 arguments ({len(args)} "
                        "given)")
    values = dict(zip(("from", "to"), args), **kwargs)
    return _random.random_(self, values.get("from"), values.get("to", _random._UNSET),
                           generator=generator)


def _regenerate_view_grad_fn(self: Tensor) -> Any:
    """After an in-place op touched a view or its base: AsStridedBackward0 on the base."""
    regenerate_view_node(self)
    return self._grad_node


def _view_func(self: Tensor, new_base: Any) -> Tensor | None:
    """This view remade on ``new_base``, which must have its base's sizes, strides and storage
    offset (else None; None too for a tensor that is no view for autograd): torch's
    ``_view_func``, for functionalization and view replay."""
    return _replayed_view(self, new_base, "_view_func", same_meta=True)


def _view_func_unsafe(self: Tensor, new_base: Any) -> Tensor | None:
    """``_view_func`` without the check that ``new_base`` is laid out as the base."""
    return _replayed_view(self, new_base, "_view_func_unsafe", same_meta=False)


def _replayed_view(view: Tensor, new_base: Any, name: str, same_meta: bool) -> Tensor | None:
    if not isinstance(new_base, Tensor):
        raise TypeError(f"{name}(): argument 'new_base' (position 1) must be Tensor, not "
                        f"{type(new_base).__name__}")
    base = view._base
    if base is None:
        return None
    if same_meta and (new_base.shape, new_base.stride(), new_base.storage_offset()) != (
            base.shape, base.stride(), base.storage_offset()):
        return None
    if view._view_fn is not None:
        return replay_view_steps(view._view_fn, new_base)
    return shapes.as_strided(new_base, tuple(view.shape), view.stride(), view.storage_offset())


_HAND_WRITTEN: dict[str, Any] = {
    "__new__": staticmethod(_legacy_types.tensor_new),
    "backward": _tensor_backward,
    "_regenerate_view_grad_fn": _regenerate_view_grad_fn,
    "_view_func": _view_func,
    "_view_func_unsafe": _view_func_unsafe,
    # operators
    "__add__": _operator(pointwise.add),
    "__radd__": _operator(pointwise.add),
    "__sub__": _operator(pointwise.sub),
    "__rsub__": _operator(pointwise.rsub),
    "__mul__": _operator(pointwise.mul),
    "__rmul__": _operator(pointwise.mul),
    "__truediv__": _operator(pointwise.div),
    "__rtruediv__": _operator(lambda self, other: pointwise.mul(pointwise.reciprocal(self), other),
                              tensor_first=pointwise.div),
    "__pow__": _operator(pointwise.pow),
    "__rpow__": _operator(pointwise.pow, reflected=True),
    "__matmul__": _operator(linalg.matmul),
    "__rmatmul__": _operator(linalg.matmul, reflected=True),
    "__iadd__": _operator(pointwise.add_),
    "__isub__": _operator(pointwise.sub_),
    "__imul__": _operator(pointwise.mul_),
    "__itruediv__": _operator(pointwise.div_),
    "__eq__": _equality(pointwise.eq, none=False),
    "__ne__": _equality(pointwise.ne, none=True),
    "__array_wrap__": _array_wrap,
    "__lt__": _operator(pointwise.lt),
    "__le__": _operator(pointwise.le),
    "__gt__": _operator(pointwise.gt),
    "__ge__": _operator(pointwise.ge),
    "__neg__": lambda self: pointwise.neg(self),
    "__pos__": lambda self: pointwise_bits.positive(self),
    "__abs__": lambda self: pointwise.abs(self),
    "__getitem__": indexing.getitem,
    "__setitem__": indexing.setitem,
    # torch's %, //, &, |, ^, ~ and their in-place forms
    "__mod__": _operator(pointwise.remainder),
    "__rmod__": _operator(pointwise.remainder, reflected=True),
    "__imod__": _operator(pointwise.remainder_),
    "__floordiv__": _operator(pointwise.floor_divide),
    "__rfloordiv__": _operator(pointwise.floor_divide, reflected=True),
    "__ifloordiv__": _operator(pointwise.floor_divide_),
    "__and__": _operator(pointwise.bitwise_and),
    "__rand__": _operator(pointwise.bitwise_and, reflected=True),
    "__iand__": _operator(pointwise.bitwise_and_),
    "__or__": _operator(pointwise.bitwise_or),
    "__ror__": _operator(pointwise.bitwise_or, reflected=True),
    "__ior__": _operator(pointwise.bitwise_or_),
    "__xor__": _operator(pointwise.bitwise_xor),
    "__rxor__": _operator(pointwise.bitwise_xor, reflected=True),
    "__ixor__": _operator(pointwise.bitwise_xor_),
    "__invert__": lambda self: pointwise.invert(self),
    "__lshift__": _operator(pointwise_bits.bitwise_left_shift),
    "__rlshift__": _operator(pointwise_bits.bitwise_left_shift, reflected=True),
    "__ilshift__": _operator(pointwise_bits.bitwise_left_shift_),
    "__rshift__": _operator(pointwise_bits.bitwise_right_shift),
    "__rrshift__": _operator(pointwise_bits.bitwise_right_shift, reflected=True),
    "__irshift__": _operator(pointwise_bits.bitwise_right_shift_),
    # shortcuts torch defines
    "where": lambda self, condition, other: indexing.where(condition, self, other),
    "polygamma": special.polygamma_method,  # (torch's method takes n after the tensor)
    "view_as": lambda self, other: shapes.view(self, tuple(other.shape)),
    "reshape_as": lambda self, other: shapes.reshape(self, tuple(other.shape)),
    "expand_as": lambda self, other: shapes.expand(self, tuple(other.shape)),
    "T": property(lambda self: shapes.permute(self, tuple(reversed(range(self.ndim))))),
    "mT": property(lambda self: shapes.transpose(self, -2, -1)),
    "mH": property(_mH),
    "H": property(_H),
    "real": property(complex_numbers.real, _set_real),
    "imag": property(complex_numbers.imag, _set_imag),
    "normal_": lambda self, mean=0.0, std=1.0, *, generator=None: _random.normal_(
        self, mean, std, generator),
    "uniform_": lambda self, a=0.0, b=1.0, *, generator=None: _random.uniform_(
        self, a, b, generator),
    # in-place samplers
    "random_": _random_,
    "exponential_": lambda self, lambd=1.0, *, generator=None: _random.exponential_(
        self, lambd, generator=generator),
    "geometric_": lambda self, p, *, generator=None: _random.geometric_(
        self, p, generator=generator),
    "cauchy_": lambda self, median=0.0, sigma=1.0, *, generator=None: _random.cauchy_(
        self, median, sigma, generator=generator),
    "log_normal_": lambda self, mean=1.0, std=2.0, *, generator=None: _random.log_normal_(
        self, mean, std, generator=generator),
    "bernoulli_": lambda self, p=0.5, *, generator=None: _random.bernoulli_(
        self, p, generator=generator),
    "bernoulli": lambda self, p=None, *, generator=None: _random.bernoulli(
        self, p, generator=generator),
    "multinomial": lambda self, num_samples, replacement=False, *, generator=None:
        _random.multinomial(self, num_samples, replacement, generator=generator),
    # dtype and device
    "to": _to,
    "cpu": lambda self: self.to("cpu"),
    "cuda": _cuda,
    "type": _type,
    "type_as": lambda self, other: self.to(other.dtype),
    "float": _cast(_dtypes.float32),
    "double": _cast(_dtypes.float64),
    "half": _cast(_dtypes.float16),
    "bfloat16": _cast(_dtypes.bfloat16),
    "cfloat": _cast(_dtypes.complex64),
    "cdouble": _cast(_dtypes.complex128),
    "long": _cast(_dtypes.int64),
    "int": _cast(_dtypes.int32),
    "short": _cast(_dtypes.int16),
    "bool": _cast(_dtypes.bool_),
    "new_tensor": lambda self, data, *, dtype=None, device=None, requires_grad=False:
        _creation.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad),
    "new": lambda self, *args, device=None: _legacy_types.legacy_new(
        self.dtype, None, *args, device=device or self.device),
    "new_zeros": dispatches("new_zeros")(_new(_creation.empty)),  # (zero-filled; new_zeros'
    "new_empty": dispatches("new_empty")(_new(_creation.empty)),  # size checks and messages)
    "new_ones": dispatches("new_ones")(_new(_creation.ones)),
    "new_full": dispatches("new_full")(_new(_creation.full)),
    **_tensor_surface.SURFACE,
    **_removed_linalg.METHODS,
    **_tensor_memory.METHODS,
}
