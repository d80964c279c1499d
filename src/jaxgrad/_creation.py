"""Creation functions: tensor, legacy Tensor(...), zeros/ones/full/empty/eye/arange/linspace,
the *_like variants and from_numpy. Python floats become the default dtype (float32), Python ints
int64 and bools bool, as in torch.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtypes
from ._device import to_jax
from ._tensor import Size, Tensor, as_subclass


def _infer_dtype(data: Any) -> _dtypes.dtype:
    """torch's dtype inference: promote over all leaves (bool < int64 < default float)."""
    if isinstance(data, Tensor):
        return data.dtype
    if isinstance(data, (np.ndarray, np.generic, jax.Array)):
        return _dtypes.from_numpy_dtype(data.dtype)
    if isinstance(data, (list, tuple)):
        found = None
        for item in data:
            d = _infer_dtype(item)
            found = d if found is None else _dtypes.promote_types(found, d)
        return found if found is not None else _dtypes.get_default_dtype()
    return _dtypes.scalar_dtype(data)


def _to_numpy(data: Any) -> np.ndarray:
    if isinstance(data, Tensor):
        return np.asarray(data._value)
    if isinstance(data, (list, tuple)):
        return np.array([_to_numpy(d) for d in data]) if data and any(
            isinstance(d, Tensor) for d in data) else np.array(data)
    return np.asarray(data)


def _place(array: jax.Array, device: Any) -> jax.Array:
    dev = to_jax(device)
    return jax.device_put(array, dev) if dev is not None else array


def _finish(array: jax.Array, device: Any, requires_grad: bool) -> Tensor:
    t = Tensor._make(_place(array, device))
    if requires_grad:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t._requires_grad = True
    return t


def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (nested lists, numbers, numpy arrays).

    >>> import jaxgrad
    >>> jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    """
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "jaxgrad.tensor(sourceTensor).", UserWarning, stacklevel=2)
    d = _dtypes.to_dtype(dtype) if dtype is not None else _infer_dtype(data)
    array = jnp.asarray(_to_numpy(data), dtype=d.np)
    return _finish(array, device, requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like ``tensor`` but returns ``data`` itself when it is already a matching Tensor."""
    if isinstance(data, Tensor) and (dtype is None or _dtypes.to_dtype(dtype) is data.dtype):
        return data
    if isinstance(data, Tensor):
        return data.to(dtype)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor with the data of a numpy array (copied: JAX arrays are immutable)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _dtypes.from_numpy_dtype(array.dtype)
    return Tensor._make(jnp.asarray(array))


def legacy_tensor(cls: type, *args: Any, **kwargs: Any) -> Tensor:
    """``Tensor(sequence)`` -> float32 data; ``Tensor(*sizes)`` -> uninitialised float32."""
    if kwargs.get("device") is not None:
        kwargs = dict(kwargs)
        kwargs.pop("device")
    if not args:
        t = Tensor._make(jnp.zeros((0,), _dtypes.get_default_dtype().np))
    elif len(args) == 1 and not isinstance(args[0], int):
        data = args[0]
        array = _to_numpy(data)
        t = Tensor._make(jnp.asarray(array, _dtypes.get_default_dtype().np))
    else:
        t = Tensor._make(jnp.zeros(_size(args), _dtypes.get_default_dtype().np))
    return as_subclass(t, cls)


def _size(size: Sequence[Any]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = size[0]
    return tuple(int(s) for s in size)


def _float_or(dtype: Any) -> np.dtype:
    return (_dtypes.to_dtype(dtype) if dtype is not None else _dtypes.get_default_dtype()).np


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          out: Any = None) -> Tensor:
    """A tensor of zeros (float32 unless ``dtype`` says otherwise)."""
    return _finish(jnp.zeros(_size(size), _float_or(dtype)), device, requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         out: Any = None) -> Tensor:
    """A tensor of ones.

    >>> import jaxgrad
    >>> jaxgrad.ones(2, 2)
    tensor([[1., 1.],
            [1., 1.]])
    """
    return _finish(jnp.ones(_size(size), _float_or(dtype)), device, requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          memory_format: Any = None) -> Tensor:
    """An uninitialised tensor (zeros here: JAX has no uninitialised memory)."""
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def full(size: Sequence[int], fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` (dtype inferred from it, as in torch)."""
    d = _dtypes.to_dtype(dtype) if dtype is not None else _dtypes.scalar_dtype(fill_value)
    return _finish(jnp.full(_size((size,)), fill_value, d.np), device, requires_grad)


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    return _finish(jnp.eye(n, m, dtype=_float_or(dtype)), device, requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive); int64 unless any argument is a float."""
    if end is None:
        start, end = 0, start
    args = [start, end, step]
    if dtype is None:
        is_float = any(isinstance(a, float) or (isinstance(a, Tensor) and a.is_floating_point())
                       for a in args)
        d = _dtypes.get_default_dtype() if is_float else _dtypes.int64
    else:
        d = _dtypes.to_dtype(dtype)
    values = np.arange(*[a.item() if isinstance(a, Tensor) else a for a in args])
    return _finish(jnp.asarray(values, d.np), device, requires_grad)


def linspace(start: float, end: float, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    return _finish(jnp.linspace(start, end, steps, dtype=_float_or(dtype)), device, requires_grad)


def _like(t: Tensor, dtype: Any) -> tuple[tuple[int, ...], np.dtype]:
    return tuple(t.shape), (_dtypes.to_dtype(dtype).np if dtype is not None else t._value.dtype)


def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    shape, d = _like(input, dtype)
    return _finish(jnp.zeros(shape, d), device or input.device, requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    shape, d = _like(input, dtype)
    return _finish(jnp.ones(shape, d), device or input.device, requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    shape, d = _like(input, dtype)
    return _finish(jnp.full(shape, fill_value, d), device or input.device, requires_grad)
