"""Tensor methods and properties that compute little or nothing on the device: ``nbytes``,
``itemsize``, ``byte``/``char``/``chalf``, ``get_device``, ``new_empty_strided``,
``as_subclass``, the CPU Python-callable maps ``apply_``/``map_``/``map2_``, ``pin_memory``/
``is_pinned``, ``is_set_to``, ``dim_order``, the deprecated ``resize``/``resize_as`` and the
method forms of ``hardshrink``/``prelu``.
:data:`SURFACE` is attached with the other hand-written methods (``methods``).

>>> import jaxgrad
>>> t = jaxgrad.zeros(2, 3)
>>> t.nbytes, t.itemsize, t.get_device(), t.dim_order()
(24, 4, -1, (0, 1))
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes
from .._core.tensor import Tensor, as_subclass
from .._core.warn_once import warn_at_user_line
from .._engine.dispatch import apply, apply_view
from .._ops import nn as N
from .._ops import views as V
from . import shapes


def _get_device(self: Tensor) -> int:
    """The index of the device ``self`` is on; -1 on the CPU (torch's convention)."""
    device = self.device
    return -1 if device.type == "cpu" else (device.index or 0)


def _chalf(self: Tensor, memory_format: Any = None) -> Tensor:
    raise TypeError("jaxgrad has no complex32 (ComplexHalf) dtype: Tensor.chalf() is not "
                    "supported; use .cfloat() for complex64")


def _new_empty_strided(self: Tensor, size: Any, stride: Any, *, dtype: Any = None,
                       device: Any = None, requires_grad: bool = False, layout: Any = None,
                       pin_memory: bool = False) -> Tensor:
    return shapes.empty_strided(size, stride, dtype=dtype or self.dtype,
                                device=device or self.device, requires_grad=requires_grad,
                                layout=layout)


def _as_subclass(self: Tensor, cls: type) -> Tensor:
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    return as_subclass(apply_view(V.ALIAS, V.alias_geometry, self), cls)  # (AliasBackward0)


def _python_map(self: Tensor, name: str, fn: Callable, *others: Tensor) -> Tensor:
    """``self[i] = fn(self[i], others[0][i], ...)`` with Python numbers, others broadcast to
    ``self``; torch's CPU-only loop, which writes without a version bump."""
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")
    values = [np.asarray(self.detach()._value)]
    for other in others:
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}(): argument 'tensor' must be Tensor, not "
                            f"{type(other).__name__}")
        values.append(np.asarray(shapes.expand(other.detach(), tuple(self.shape))._value))
    kind = {"b": bool, "c": complex, "f": float}.get(values[0].dtype.kind, int)
    flat = [kind(fn(*(v.item() for v in items))) for items in zip(*(v.reshape(-1)
                                                                    for v in values))]
    result = np.asarray(flat, dtype=values[0].dtype).reshape(values[0].shape)
    self._write(jnp.asarray(result, dtype=self._value.dtype))
    return self


def _pin_memory(self: Tensor, device: Any = None) -> Tensor:
    raise RuntimeError("Cannot access accelerator device when none is available.")


def _is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether both tensors use the same storage at the same offset, sizes and strides."""
    return (self._cell is tensor._cell and self._geometry() == tensor._geometry())


def _dim_order(self: Tensor, *, ambiguity_check: Any = False) -> tuple[int, ...]:
    """The dims from outermost to innermost in memory (strides, largest first; stable)."""
    strides = self.stride()
    order = tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))
    if ambiguity_check is not False:
        sizes = self.shape
        if any(sizes[d] == 1 for d in range(self.ndim)) or len(set(strides)) < len(strides):
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to "
                               "exact one of the given memory formats.")
    return order


def _resize(self: Tensor, *sizes: int) -> Tensor:
    """torch's deprecated non-inplace resize: a copy of ``self`` with the same elements in the
    shape ``sizes`` (ResizeBackward)."""
    warn_at_user_line("non-inplace resize is deprecated")
    return _resized(self, tuple(sizes))


def _resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    warn_at_user_line("non-inplace resize_as is deprecated")
    return _resized(self, tuple(tensor.shape))


def _resized(self: Tensor, sizes: tuple) -> Tensor:
    numel = math.prod(sizes)
    if self.numel() != numel:
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), but "
            f"the given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} "
            "elements). autograd's resize can only change the shape of a given tensor, while "
            "preserving the number of elements. ")
    return apply(V.RESIZE, self, shape=sizes)


def prelu(self: Tensor, weight: Tensor) -> Tensor:
    """torch's prelu: its checks, the weight shaped to broadcast over dim 1, the kernel
    (``PreluKernelBackward0``); ``Tensor.prelu`` and ``nn.functional.prelu``.

    >>> import jaxgrad
    >>> jaxgrad.tensor([-2.0, 3.0]).prelu(jaxgrad.tensor([0.25]))
    tensor([-0.5000,  3.0000])
    """
    if self.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{_dtypes.scalar_type_name(self.dtype)} and "
                           f"{_dtypes.scalar_type_name(weight.dtype)}")
    if weight.numel() != 1:
        if self.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = self.shape[1] if self.dim() > 1 else 1
        if channels != weight.numel():
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{channels}.")
    if weight.dim() > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    if self.dim() != weight.dim():
        dims = [1] * self.dim()
        if self.dim() > 1:
            dims[1] = weight.numel()
        weight = shapes.reshape(weight, tuple(dims))
    return apply(N.PRELU_KERNEL, self, weight)


SURFACE: dict[str, Any] = {
    "nbytes": property(lambda self: self.numel() * self.element_size()),
    "itemsize": property(lambda self: self.element_size()),
    "byte": lambda self, memory_format=None: shapes.to_dtype(self, _dtypes.uint8),
    "char": lambda self, memory_format=None: shapes.to_dtype(self, _dtypes.int8),
    "chalf": _chalf,
    "get_device": _get_device,
    "new_empty_strided": _new_empty_strided,
    "as_subclass": _as_subclass,
    "apply_": lambda self, callable: _python_map(self, "apply_", callable),
    "map_": lambda self, tensor, callable: _python_map(self, "map_", callable, tensor),
    "map2_": lambda self, x, y, callable: _python_map(self, "map2_", callable, x, y),
    "pin_memory": _pin_memory,
    "is_pinned": lambda self, device=None: False,
    "is_set_to": _is_set_to,
    "dim_order": _dim_order,
    "hardshrink": lambda self, lambd=0.5: apply(N.HARDSHRINK, self, aux=(lambd,)),
    "prelu": prelu,
    "resize": _resize,
    "resize_as": _resize_as,
}
