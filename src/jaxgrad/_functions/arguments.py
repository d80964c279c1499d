"""Normalising torch's argument conventions before a dispatch: Python numbers where torch takes
a Tensor or a Scalar, broadcasting checks with torch's messages, dims.

A value that does not fit raises a bare ``TypeError`` here; the public function's wrapper
(``opgen``) then replaces it with torch's message naming the argument.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .._core.caches import cache
from .._core.tensor import Size, Tensor, _wrap_dim
from .._core.tensor_repr import concrete_here
from .._core.typename import type_name
from .._core.warn_once import warn_once


def number_or_tensor(x: Any) -> Any:
    """A Tensor, or a Python number where torch accepts one as a Tensor (``t * 2``)."""
    if isinstance(x, Tensor):  # (the common case first)
        return x
    # numpy scalars before numbers: np.float64 is a float, but JAX would compute in float64
    if isinstance(x, (np.number, np.bool_)):
        return x.item()
    if isinstance(x, (bool, int, float, complex)):
        return x
    raise TypeError(f"expected Tensor or a number, not {type_name(x)}")


def require_tensors(*values: Any) -> None:
    """A bare TypeError if one of ``values`` is not a Tensor (the wrapper names it)."""
    for value in values:
        if not isinstance(value, Tensor):
            raise TypeError(f"expected Tensor, not {type_name(value)}")


def scalar(x: Any) -> Any:
    """A ``Scalar`` argument (``alpha``, ``value``): a 0-d tensor that does not require grad
    counts as its value, as in torch; anything else raises (the wrapper names it). It reaches the
    kernel as a traced operand: Note [Argument kinds] (``_ops/_schema.py``)."""
    if isinstance(x, Tensor):
        if x.ndim or x.requires_grad:
            raise TypeError(f"expected a number, not {type_name(x)}")
        x = x.item()
    return number_or_tensor(x)


def raw_shape(t: Tensor) -> tuple:
    """``t.shape`` as a plain tuple, without building a Size (the checks below are hot)."""
    layout = t._layout
    return layout.shape if layout is not None else t._cell.array.shape


def broadcast_shapes(*shapes: tuple) -> tuple:
    """torch's broadcast of ``shapes``, folded left to right, with its error for a mismatch."""
    out = tuple(shapes[0])
    for shape in shapes[1:]:
        if shape != out:
            out = infer_size(out, tuple(shape))
    return out


@cache(maxsize=1024)
def infer_size(a: tuple, b: tuple) -> tuple:
    """The broadcast of two shapes (torch's infer_size), or torch's error."""
    n = builtins.max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    for i in range(n - 1, -1, -1):
        if a[i] != b[i] and a[i] != 1 and b[i] != 1:
            raise RuntimeError(f"The size of tensor a ({a[i]}) must match the size of tensor b "
                               f"({b[i]}) at non-singleton dimension {i}")
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def broadcast_operands(*operands: Any) -> None:
    """torch's TensorIterator check: the tensors among ``operands`` broadcast together."""
    shapes = [raw_shape(t) for t in operands if isinstance(t, Tensor)]
    first = shapes[0] if shapes else ()
    if builtins.any(s != first for s in shapes):
        broadcast_shapes(*shapes)


def check_broadcast(input: Tensor, other: Any) -> None:
    """Raise torch's error if tensor ``other`` does not broadcast with ``input``."""
    if isinstance(other, Tensor):
        a, b = raw_shape(input), raw_shape(other)
        if a != b:
            infer_size(a, b)


def check_inplace_broadcast(input: Tensor, *others: Any) -> None:
    """torch's errors for an in-place op whose operands do not broadcast to ``input``'s shape."""
    shape = out = raw_shape(input)
    for other in others:
        if isinstance(other, Tensor):
            s = raw_shape(other)
            if s != out:
                out = infer_size(out, s)
    if out != shape:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{list(out)}")


def wrap_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """Sorted non-negative dims; a 0-d tensor accepts dim 0/-1 and has no dims to reduce."""
    if isinstance(dim, int):
        dim = (dim,)
    wrapped = [_wrap_dim(d, ndim) for d in dim]
    if len(wrapped) > 1 and len(set(wrapped)) != len(wrapped):
        repeated = next(d for i, d in enumerate(wrapped) if d in wrapped[:i])
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    return tuple(sorted(wrapped)) if ndim else ()


# --- sizes, dims and values shared by the functions of several themes -------------------------

def shape_arg(shape: tuple) -> tuple:
    """A shape given as ``(2, 3)`` or ``((2, 3),)`` (torch takes both), as ints."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def sizes_text(t: Tensor) -> str:
    """``t``'s shape as torch prints it in messages: ``[2, 3]``."""
    return str(list(t.shape))


def size_of(t: Tensor, d: int) -> int:
    """torch's ensure_nonempty_size: a 0-d tensor counts as size 1 (other dims: size(d))."""
    return 1 if t.ndim == 0 else t.shape[_wrap_dim(d, t.ndim)]


def concrete_values(t: Tensor) -> np.ndarray | None:
    """The values of ``t`` when they are known here and now: not while ``jaxgrad.compile``
    traces, nor for a tensor spanning processes that this process does not hold (checks of
    values skip both)."""
    value = t._value
    return np.asarray(value) if concrete_here(value) else None


def dims_or_all(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """torch's reduction dims: None or an empty list reduce every dim."""
    if dim is None or (isinstance(dim, (list, tuple)) and not dim):
        return None
    return wrap_dims(dim, ndim)


def cumulative_dim(input: Tensor, dim: int) -> int:
    """The wrapped ``dim`` of a cumulative or index op (a 0-d input has dim 0)."""
    return _wrap_dim(dim, input.ndim) if input.ndim else 0


def first_out_of_range(index: Tensor, size: int) -> int | None:
    """The first value of ``index`` outside ``[0, size)``, if its values are known now."""
    values = concrete_values(index)
    if values is None or not values.size:
        return None
    bad = values[(values < 0) | (values >= size)]
    return int(bad.flat[0]) if bad.size else None


def warn_once_as_jaxgrad(message: str) -> None:
    """A warning torch gives once per process (its TORCH_WARN_ONCE), named for jaxgrad."""
    warn_once(message.replace("torch", "jaxgrad"))
