"""Creation functions: tensor, legacy Tensor(...), zeros/ones/full/empty/eye/arange/linspace,
the *_like variants, from_numpy and from_jax. Python floats become the default dtype (float32),
Python ints int64 and bools bool, as in torch.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core import device as _device
from .._core import dtypes as _dtypes
from .._core.jax_setup import host_to_device, in_x64_scope
from .._core.layout import check_strided
from .._core.placement import put
from .._core.storage import Layout, adopt_host_array
from .._core.tensor import Size, Tensor
from .._core.tensor_repr import held_here, spans_processes_error
from .._core.typename import type_name
from .._core.warn_once import warn_once
from .._engine.dispatch import dispatches
from .._engine.profiling import composite


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
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if not isinstance(data, numbers.Number):
        raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")
    return _dtypes.scalar_dtype(data)


def _nested_sizes(data: list | tuple) -> tuple[int, ...]:
    """torch's compute_sizes: the shape read along the first item of each nesting level."""
    sizes = []
    while isinstance(data, (list, tuple)):
        sizes.append(len(data))
        if not data:
            break
        data = data[0]
        if isinstance(data, str) and data:  # a str is a sequence of strs, without end
            raise ValueError(f"too many dimensions '{type(data).__name__}'")
    if isinstance(data, np.ndarray):  # a Tensor item is a scalar to torch, an ndarray is not
        sizes.extend(data.shape)
    return tuple(sizes)


def _sequence_array(data: list | tuple, sizes: tuple[int, ...], d: _dtypes.dtype) -> np.ndarray:
    """Nested lists as an array, with torch's errors for ragged, mistyped or overflowing data."""
    if 0 in sizes:
        return np.zeros(sizes, d.np)  # torch stores nothing, so ragged empty lists pass
    try:
        array = _to_numpy(data)
    except ValueError:  # numpy's "inhomogeneous shape"
        array = None
    if array is None or array.shape != sizes or array.dtype.kind in "uO":
        _check_store(data, sizes, 0, d)
        if array is None or array.shape != sizes:  # one-element tensors stored as scalars
            array = np.array(_items_as_scalars(data, len(sizes)))
    return array.astype(d.np) if array.dtype.kind == "O" else array


def _items_as_scalars(data: Any, depth: int) -> Any:
    if depth == 0:
        return data.item() if isinstance(data, Tensor) else data
    return [_items_as_scalars(x, depth - 1) for x in data]


_INT64_RANGE = range(-2**63, 2**63)


def _check_int_range(item: Any, d: _dtypes.dtype) -> None:
    """torch reads a Python int for an integral tensor as a C long long."""
    if d._category <= 1 and isinstance(item, int) and item not in _INT64_RANGE:
        raise ValueError("Overflow when unpacking long long")


def _check_numbers_fit(array: np.ndarray, d: _dtypes.dtype) -> None:
    """torch checks each Python number it stores into an integer dtype (c10's checked_convert):
    in range (an unsigned type wraps a negative one), no NaN or infinity."""
    if d.is_floating_point or d.is_complex or d.name == "bool" or array.dtype.kind not in "iuf":
        return
    lowest, largest = _dtypes.convertible_range(d, of_floats=array.dtype.kind == "f")
    bad = (array < lowest) | (array > largest)
    if array.dtype.kind == "f":
        bad |= ~np.isfinite(array)
    if bad.any():
        raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")


def _check_store(item: Any, sizes: tuple[int, ...], dim: int, d: _dtypes.dtype) -> None:
    """Walk ``item`` as torch's recursive_store does, raising its error for the first bad one."""
    if dim == len(sizes):
        if isinstance(item, Tensor) and item.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if isinstance(item, (list, tuple)):
            name = type(item).__name__
            raise TypeError(f"'{name}' object cannot be interpreted as an integer"
                            if d._category <= 1 else f"must be real number, not {name}")
        _check_int_range(item, d)
        return
    if not isinstance(item, (list, tuple, Tensor, np.ndarray)):
        raise TypeError("not a sequence")
    if len(item) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                         f"(got {len(item)})")
    if isinstance(item, (list, tuple)):
        for x in item:
            _check_store(x, sizes, dim + 1, d)


def _to_numpy(data: Any) -> np.ndarray:
    if isinstance(data, Tensor):
        if not held_here(data._value):
            raise spans_processes_error("Copying it into a new tensor")
        return np.asarray(data._value)
    if isinstance(data, (list, tuple)):
        return np.array([_to_numpy(d) for d in data]) if data and any(
            isinstance(d, Tensor) for d in data) else np.array(data)
    return np.asarray(data)


def _converted(array: np.ndarray, dtype: Any) -> jax.Array | np.ndarray:
    """``array`` as ``dtype``: by numpy where the cast keeps the kind or widens it (float64 data
    into float32, ints into floats: rounded as XLA rounds, and no XLA kernel to compile per new
    shape), else by XLA (a float into an int: XLA's conversion of NaN and out-of-range values)."""
    with np.errstate(over="ignore"):  # (a float too large for ``dtype`` is its infinity)
        if array.dtype == dtype or (np.can_cast(array.dtype, dtype, "same_kind")
                                    and np.dtype(dtype).itemsize > 2):  # (XLA: halves via f32)
            return array.astype(dtype, copy=False)
        return jnp.asarray(array, dtype=dtype)


def _place(array: jax.Array | np.ndarray, device: Any) -> jax.Array:
    dev = _device.placement(device)
    if isinstance(array, np.ndarray):
        return host_to_device(array, array.dtype, dev)
    return put(array, dev) if dev is not None else array


# the largest tensor of zeros or ones filled on the host: see ``_filled``
HOST_FILL_LIMIT = 1 << 16


def _filled(shape: tuple, value: int, dtype: Any) -> jax.Array | np.ndarray:
    """A new array of zeros or ones. A small one is filled by numpy and transferred when
    placed (``_place``), so a new shape compiles no XLA kernel (a device fill is one kernel per
    shape: 10-40 ms to compile on CPU); a large one is filled on the device."""
    if math.prod(shape) <= HOST_FILL_LIMIT:
        return np.full(shape, value, dtype)
    return (jnp.ones if value else jnp.zeros)(shape, dtype)


def _finish(array: jax.Array, device: Any, requires_grad: bool) -> Tensor:
    t = Tensor._make(_place(array, device))
    if requires_grad:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t._requires_grad = True
    return t


@in_x64_scope
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
    sizes = _nested_sizes(data) if isinstance(data, (list, tuple)) else None
    d = _dtypes.to_dtype(dtype) if dtype is not None else _infer_dtype(data)
    if sizes is None:
        _check_int_range(data, d)
        array = _to_numpy(data)
    else:
        array = _sequence_array(data, sizes, d)
    if not isinstance(data, (np.ndarray, Tensor)):
        _check_numbers_fit(array, d)
    return _finish(_converted(array, d.np), device, requires_grad)


@in_x64_scope
def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like ``tensor`` but returns ``data`` itself when it is already a matching Tensor.

    >>> import jaxgrad
    >>> t = jaxgrad.tensor([1, 2])
    >>> jaxgrad.as_tensor(t) is t
    True
    >>> jaxgrad.as_tensor([1.5, 2.5])
    tensor([1.5000, 2.5000])
    """
    if isinstance(data, Tensor) and (dtype is None or _dtypes.to_dtype(dtype) is data.dtype):
        return data
    if isinstance(data, Tensor):
        return data.to(dtype)
    return tensor(data, dtype=dtype, device=device)


@in_x64_scope
def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor over a numpy array's memory, as torch's: on CPU, writes through the array show
    in the tensor and in-place ops on the tensor show in the array (JAX's own buffers are
    immutable, so jaxgrad copies between them and the array when either side changed).

    >>> import numpy as np
    >>> import jaxgrad
    >>> a = np.array([1, 2], dtype=np.int32)
    >>> t = jaxgrad.from_numpy(a); a[0] = 7
    >>> t
    tensor([7, 2], dtype=jaxgrad.int32)
    """
    if not isinstance(array, np.ndarray):
        kind = type(array)  # torch prints a C type's full name: jaxlib._jax.ArrayImpl
        got = (f"{kind.__module__}.{kind.__qualname__}" if isinstance(array, jax.Array)
               else type_name(array))
        raise TypeError(f"expected np.ndarray (got {got})")
    _dtypes.from_numpy_dtype(array.dtype)
    if any(stride < 0 for stride in array.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with "
            "negative strides are not currently supported. (You can probably work around this "
            "by making a copy of your array  with array.copy().) ")
    if not array.flags.writeable:
        warn_once(_NOT_WRITABLE, UserWarning)
    shared = _shared_numpy(array)
    if shared is not None:
        return shared
    return Tensor._make(jnp.asarray(array, dtype=array.dtype))


_NOT_WRITABLE = (
    "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. "
    "This means writing to this tensor will result in undefined behavior. You may want to copy "
    "the array to protect its data or make it writable before converting it to a tensor. This "
    "type of warning will be suppressed for the rest of this program.")


def _shared_numpy(array: np.ndarray) -> Tensor | None:
    """A tensor sharing ``array``'s memory (a strided view over the span its elements cover),
    or None where it cannot be shared: not writable, empty, byte-swapped, or strides that
    are not whole elements."""
    item = array.itemsize
    if (not array.flags.writeable or array.size == 0 or not array.dtype.isnative
            or any(stride % item for stride in array.strides)):
        return None
    if array.flags.c_contiguous:
        return Tensor._make(None, cell=adopt_host_array(array))
    strides = tuple(stride // item for stride in array.strides)
    extent = 1 + sum((n - 1) * s for n, s in zip(array.shape, strides))
    span = np.lib.stride_tricks.as_strided(array, (extent,), (item,))
    out = Tensor._make(None, cell=adopt_host_array(span))
    out._layout = Layout(tuple(array.shape), strides, 0)
    return out


@in_x64_scope
def from_jax(array: jax.Array, requires_grad: bool = False) -> Tensor:
    """A leaf tensor over ``array`` itself: no copy, its device, sharding and committed-ness
    kept; inside ``jax.jit``/``vmap`` the array may be a tracer. ``t.jax()`` gives it back.

    >>> import jax.numpy as jnp
    >>> import jaxgrad
    >>> a = jnp.array([1.0, 2.0], dtype=jnp.float32)
    >>> t = jaxgrad.from_jax(a, requires_grad=True)
    >>> (t * t).sum().backward(); t.grad, t.jax() is a
    (tensor([2., 4.]), True)
    """
    if not isinstance(array, jax.Array):
        raise TypeError(f"from_jax(): expected jax.Array (got {type_name(array)})")
    try:
        d = _dtypes.from_numpy_dtype(array.dtype)
    except TypeError as e:
        raise TypeError(str(e).replace("np.ndarray", "jax.Array")) from None
    if requires_grad and not (d.is_floating_point or d.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return Tensor._make(array, bool(requires_grad))


def _size(size: Sequence[Any]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = size[0]
    return tuple(int(s) for s in size)


def requested_size(name: str, sizes: tuple, size: Any, required: bool = True) -> tuple:
    """A factory's size as given positionally (``zeros(2, 3)``, ``zeros((2, 3))``) or as the
    ``size=`` keyword (``zeros(size=(2, 3))``), with torch's errors for neither or both."""
    if size is None:
        if required and not sizes:
            raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
        return sizes
    if sizes:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,)


def _shape(size: Sequence[Any]) -> tuple[int, ...]:
    """``_size`` with torch's error for a negative size."""
    shape = _size(size)
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")
    return shape


def _float_or(dtype: Any) -> np.dtype:
    return (_dtypes.to_dtype(dtype) if dtype is not None else _dtypes.get_default_dtype()).np


@composite("aten::zeros")
def zeros(*sizes: Any, size: Any = None,
          dtype: Any = None, device: Any = None, layout: Any = None, requires_grad: bool = False,
          out: Any = None) -> Tensor:
    """A tensor of zeros (float32 unless ``dtype`` says otherwise), as ``torch.zeros``.

    >>> import jaxgrad
    >>> jaxgrad.zeros(2, 3, dtype=jaxgrad.int64)
    tensor([[0, 0, 0],
            [0, 0, 0]])
    """
    check_strided(layout)
    shape = _size(requested_size("zeros", sizes, size))
    if any(s < 0 for s in shape):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _finish(_filled(shape, 0, _float_or(dtype)), device, requires_grad)


@composite("aten::ones")
def ones(*sizes: Any, size: Any = None,
         dtype: Any = None, device: Any = None, layout: Any = None, requires_grad: bool = False,
         out: Any = None) -> Tensor:
    """A tensor of ones.

    >>> import jaxgrad
    >>> jaxgrad.ones(2, 2)
    tensor([[1., 1.],
            [1., 1.]])
    """
    check_strided(layout)
    shape = _shape(requested_size("ones", sizes, size))
    return _finish(_filled(shape, 1, _float_or(dtype)), device, requires_grad)


@composite("aten::empty")
def empty(*sizes: Any, size: Any = None,
          dtype: Any = None, device: Any = None, layout: Any = None, requires_grad: bool = False,
          memory_format: Any = None) -> Tensor:
    """An uninitialised tensor (zeros here: JAX has no uninitialised memory).

    >>> import jaxgrad
    >>> t = jaxgrad.empty(2, 3)
    >>> t.shape, t.dtype
    (jaxgrad.Size([2, 3]), jaxgrad.float32)
    """
    check_strided(layout)
    return _finish(_filled(_shape(requested_size("empty", sizes, size)), 0, _float_or(dtype)),
                   device, requires_grad)


@composite("aten::full")
def full(size: Sequence[int], fill_value: Any, *, dtype: Any = None, device: Any = None,
         layout: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` (dtype inferred from it, as in torch).

    >>> import jaxgrad
    >>> jaxgrad.full((2, 2), 7)
    tensor([[7, 7],
            [7, 7]])
    """
    check_strided(layout)
    d = _dtypes.to_dtype(dtype) if dtype is not None else _dtypes.scalar_dtype(fill_value)
    shape = _shape((size,))
    fill_value = _dtypes.checked_scalar(fill_value, d, math.prod(shape))
    return _finish(jnp.full(shape, fill_value, d.np), device, requires_grad)


@composite("aten::scalar_tensor")
def scalar_tensor(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  pin_memory: bool | None = None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding the number ``s``, of the default dtype unless ``dtype`` is given.

    >>> import jaxgrad
    >>> jaxgrad.scalar_tensor(3), jaxgrad.scalar_tensor(3, dtype=jaxgrad.int64)
    (tensor(3.), tensor(3))
    """
    check_strided(layout)
    if isinstance(s, Tensor):
        s = s.item()
    d = _dtypes.to_dtype(dtype) if dtype is not None else _dtypes.get_default_dtype()
    return _finish(jnp.full((), s, d.np), device, requires_grad)


@composite("aten::eye")
def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        layout: Any = None, requires_grad: bool = False) -> Tensor:
    """A 2-D tensor with ones on the diagonal and zeros elsewhere, as ``torch.eye``.

    >>> import jaxgrad
    >>> jaxgrad.eye(2, 3)
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    check_strided(layout)
    for name, size in (("n", n), ("m", m)):
        if size is not None and size < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {size}")
    return _finish(jnp.eye(n, m, dtype=_float_or(dtype)), device, requires_grad)


@composite("aten::arange")
def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
           layout: Any = None, requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive); int64 unless any argument is a float.

    >>> import jaxgrad
    >>> jaxgrad.arange(4)
    tensor([0, 1, 2, 3])
    >>> jaxgrad.arange(0, 1, 0.25)
    tensor([0.0000, 0.2500, 0.5000, 0.7500])
    """
    check_strided(layout)
    if end is None:
        start, end = 0, start
    args = [start, end, step]
    if dtype is None:
        is_float = any(isinstance(a, float) or (isinstance(a, Tensor) and a.is_floating_point())
                       for a in args)
        d = _dtypes.get_default_dtype() if is_float else _dtypes.int64
    else:
        d = _dtypes.to_dtype(dtype)
    _check_kernel("arange_cpu", d)
    start, end, step = [a.item() if isinstance(a, Tensor) else a for a in args]
    _check_range(start, end, step)
    return _finish(host_to_device(np.arange(start, end, step), d.np), device, requires_grad)


_RANGE_DEPRECATED = (
    "torch.range is deprecated and will be removed in a future release because its behavior is "
    "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values "
    "in [start, end).").replace("torch", "jaxgrad")


@composite("aten::range")
def range(start: Any, end: Any, step: Any = 1, *, dtype: Any = None, device: Any = None,
          layout: Any = None, requires_grad: bool = False) -> Tensor:
    """Deprecated (warns): values from ``start`` to ``end`` *inclusive*, in the default float
    dtype unless ``dtype`` says otherwise; use :func:`arange`.

    >>> import warnings
    >>> import jaxgrad
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     jaxgrad.range(1, 4)
    tensor([1., 2., 3., 4.])
    """
    warnings.warn(_RANGE_DEPRECATED, UserWarning, stacklevel=2)
    check_strided(layout)
    d = _dtypes.to_dtype(dtype) if dtype is not None else _dtypes.get_default_dtype()
    _check_kernel("range_cpu", d)
    start, end, step = [a.item() if isinstance(a, Tensor) else a for a in (start, end, step)]
    integral = not (d.is_floating_point or d.is_complex)
    if integral:  # torch's accumulate type of an integer range is int64
        start, end, step = int(start), int(end), int(step)
    _check_range(start, end, step)
    size = (end - start) // step + 1 if integral else int((end - start) / step + 1)
    values = start + np.arange(size, dtype=np.int64 if integral else np.float64) * step
    return _finish(host_to_device(values, d.np), device, requires_grad)


def _check_kernel(kernel: str, d: Any) -> None:
    """torch's refusal of a dtype its range kernels have no loop for (bool; complex for
    arange/range)."""
    if d is _dtypes.bool_ or (d.is_complex and kernel in ("arange_cpu", "range_cpu")):
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_dtypes.scalar_type_name(d)}'")


def _check_range(start: Any, end: Any, step: Any) -> None:
    """torch's errors for an arange that is empty by a wrong sign, or infinite."""
    if not (step > 0 or step < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start:g} -> {end:g}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


@composite("aten::linspace")
def linspace(start: float, end: float, steps: int, *, dtype: Any = None, device: Any = None,
             layout: Any = None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive, as ``torch.linspace``.

    >>> import jaxgrad
    >>> jaxgrad.linspace(0, 1, 5)
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    check_strided(layout)
    if steps > 1:  # (one or no step needs no kernel)
        _check_kernel("linspace_cpu", _dtypes.from_numpy_dtype(_float_or(dtype)))
    return _finish(host_to_device(_spaced(start, end, steps, _float_or(dtype)), _float_or(dtype)),
                   device, requires_grad)


@composite("aten::logspace")
def logspace(start: float, end: float, steps: int, base: float = 10.0, *, dtype: Any = None,
             device: Any = None, layout: Any = None, requires_grad: bool = False) -> Tensor:
    """``base`` to the powers of ``steps`` evenly spaced exponents from ``start`` to ``end``,
    as ``torch.logspace``.

    >>> import jaxgrad
    >>> jaxgrad.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    """
    check_strided(layout)
    d = _float_or(dtype)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if steps > 1:
        _check_kernel("logspace_cpu", _dtypes.from_numpy_dtype(d))
    # torch: the ends in the dtype, the exponents and the power in double, then cast
    first, last = (_dtypes_cast(v, d) for v in (start, end))
    if steps == 1:  # torch: base ** start, start as a double
        first = last = float(start.item() if isinstance(start, Tensor) else start)
    step = (last - first) / max(steps - 1, 1)
    index = np.arange(steps)
    low = index < steps // 2
    exponents = _fused_multiply_add(np.full(steps, step), np.where(low, index, index - (steps - 1))
                                    .astype(np.float64), np.where(low, first, last))
    with np.errstate(over="ignore", invalid="ignore"):
        powers = np.power(np.float64(base), exponents).astype(d)
    return _finish(host_to_device(powers, d), device, requires_grad)


def _dtypes_cast(value: Any, d: np.dtype) -> float:
    """A Python number as torch's ``Scalar.to<scalar_t>()`` makes it, back as a double."""
    value = value.item() if isinstance(value, Tensor) else value
    return float(int(value)) if d.kind in "iub" else float(d.type(value))


def _spaced(start: Any, end: Any, steps: int, d: np.dtype) -> np.ndarray:
    """torch's CPU linspace kernel on the host: the first half ``start + step * i``, the second
    ``end - step * (steps - 1 - i)`` (so both ends are exact), each a fused multiply-add, in the
    kernel's type (double for integer dtypes, whose ends are truncated first)."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    first, last = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    if d.kind in "iub":
        first, last, d = int(first), int(last), np.dtype(np.float64)
    first, last = d.type(first), d.type(last)
    if steps == 1:
        return np.array([first], d)
    step = (last - first) / d.type(steps - 1)
    index = np.arange(steps)
    low = index < steps // 2
    base = np.where(low, first, last)
    scale = np.where(low, index, index - (steps - 1)).astype(d)  # end - step * k = end + step * -k
    return _fused_multiply_add(np.full(steps, step, d), scale, base).astype(d)


def _fused_multiply_add(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``a * b + c`` rounded once, as the compiled C++ kernels compute it: float32 exactly
    through float64; float64 by an error-free product (Veltkamp/Dekker) and a compensated sum;
    the 16-bit floats round after each operation (they have no fused form in torch)."""
    if a.dtype == np.float32:
        return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(
            np.float32)
    if a.dtype != np.float64:
        return a * b + c
    product = a * b
    split = 134217729.0  # 2**27 + 1
    a_hi = a * split - (a * split - a)
    b_hi = b * split - (b * split - b)
    product_error = ((a_hi * b_hi - product) + a_hi * (b - b_hi) + (a - a_hi) * b_hi) \
        + (a - a_hi) * (b - b_hi)
    total = product + c
    virtual = total - product
    sum_error = (product - (total - virtual)) + (c - virtual)
    return total + (sum_error + product_error)


def _like(t: Tensor, dtype: Any) -> tuple[tuple[int, ...], np.dtype]:
    return tuple(t.shape), (_dtypes.to_dtype(dtype).np if dtype is not None else t._value.dtype)


@composite("aten::zeros_like")
@dispatches("zeros_like")
def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               layout: Any = None, requires_grad: bool = False,
               memory_format: Any = None) -> Tensor:
    """Zeros with the shape (and, by default, dtype and device) of ``input``.

    >>> import jaxgrad
    >>> jaxgrad.zeros_like(jaxgrad.tensor([[1, 2], [3, 4]]))
    tensor([[0, 0],
            [0, 0]])
    """
    check_strided(layout)
    shape, d = _like(input, dtype)
    return _finish(_filled(shape, 0, d), _device.like(input, device), requires_grad)


@composite("aten::ones_like")
@dispatches("ones_like")
def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              layout: Any = None, requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Ones with the shape (and, by default, dtype and device) of ``input``.

    >>> import jaxgrad
    >>> jaxgrad.ones_like(jaxgrad.tensor([1.5, 2.5]))
    tensor([1., 1.])
    """
    check_strided(layout)
    shape, d = _like(input, dtype)
    return _finish(_filled(shape, 1, d), _device.like(input, device), requires_grad)


@composite("aten::empty_like")
@dispatches("empty_like")
def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               layout: Any = None, requires_grad: bool = False,
               memory_format: Any = None) -> Tensor:
    """An uninitialised tensor shaped like ``input`` (zeros here, as ``empty``).

    >>> import jaxgrad
    >>> t = jaxgrad.empty_like(jaxgrad.tensor([1, 2, 3]))
    >>> t.shape, t.dtype
    (jaxgrad.Size([3]), jaxgrad.int64)
    """
    check_strided(layout)
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


@composite("aten::full_like")
@dispatches("full_like")
def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              layout: Any = None, requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """A tensor shaped like ``input`` filled with ``fill_value`` (``input``'s dtype by default).

    >>> import jaxgrad
    >>> jaxgrad.full_like(jaxgrad.tensor([1.0, 2.0]), 3)
    tensor([3., 3.])
    """
    check_strided(layout)
    shape, d = _like(input, dtype)
    fill_value = _dtypes.checked_scalar(fill_value, _dtypes.to_dtype(d), math.prod(shape))
    return _finish(jnp.full(shape, fill_value, d), _device.like(input, device), requires_grad)
