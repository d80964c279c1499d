"""How a DataLoader turns a list of samples into a batch (``default_collate``) or converts one
sample (``default_convert``): tensors are stacked, Python numbers become tensors (float ->
float64, int -> int64, bool -> bool), NumPy arrays and scalars become tensors, mappings,
namedtuples and sequences are collated field by field, strings and bytes stay lists."""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ...._core.dtypes import float64
from ...._core.tensor import Tensor
from ...._functions import joins
from ...._functions.creation import as_tensor, empty, tensor
from .worker import get_worker_info

_NUMPY_TEXT_OR_OBJECT = re.compile(r"[SaUO]")  # dtype.str of arrays of strings or objects

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
    "found {}")


def _rebuild_mapping(data: Any, values: dict) -> Any:
    """A mapping like ``data`` holding ``values``: a copy of a mutable one, else its type's
    constructor, else a plain dict (as torch falls back)."""
    try:
        if isinstance(data, collections.abc.MutableMapping):
            clone = copy.copy(data)
            clone.update(values)
            return clone
        return type(data)(values)
    except TypeError:
        return dict(values)


def _rebuild_sequence(data: Any, values: list) -> Any:
    try:
        if isinstance(data, collections.abc.MutableSequence):
            clone = copy.copy(data)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(data)(values)
    except TypeError:
        return list(values)


def default_convert(data: Any) -> Any:
    """Convert NumPy arrays and scalars (inside mappings, namedtuples and sequences too) to
    tensors; everything else is returned as it is. Tuples become lists, as in torch.

    >>> import numpy as np
    >>> from jaxgrad.utils.data import default_convert
    >>> default_convert({"x": np.array([1, 2]), "name": "a", "n": 3})
    {'x': tensor([1, 2]), 'name': 'a', 'n': 3}
    """
    kind = type(data)
    if isinstance(data, Tensor):
        return data
    if kind.__module__ == "numpy" and kind.__name__ not in ("str_", "string_"):
        if kind.__name__ == "ndarray" and _NUMPY_TEXT_OR_OBJECT.search(data.dtype.str):
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: default_convert(data[k]) for k in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return kind(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def collate(batch: Any, *, collate_fn_map: dict[type | tuple[type, ...], Callable] | None = None
            ) -> Any:
    """Collate ``batch`` by the type of its first element: a type (or a base of it) found in
    ``collate_fn_map`` is collated by its function, mappings/namedtuples/sequences field by
    field; anything else raises TypeError.

    >>> import jaxgrad
    >>> from jaxgrad.utils.data._utils.collate import collate
    >>> table = {str: lambda b, *, collate_fn_map: "".join(b),
    ...          int: lambda b, *, collate_fn_map: sum(b)}
    >>> collate([(1, "a"), (2, "b")], collate_fn_map=table)
    [3, 'ab']
    """
    elem = batch[0]
    kind = type(elem)
    if collate_fn_map is not None:
        if kind in collate_fn_map:
            return collate_fn_map[kind](batch, collate_fn_map=collate_fn_map)
        for key, fn in collate_fn_map.items():
            if isinstance(elem, key):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {k: collate([d[k] for d in batch],
                                                  collate_fn_map=collate_fn_map) for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return kind(*(collate(list(s), collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(list(s), collate_fn_map=collate_fn_map) for s in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuild_sequence(elem, columns)
    raise TypeError(default_collate_err_msg_format.format(kind))


def collate_tensor_fn(batch: list[Tensor], *, collate_fn_map: Any = None) -> Tensor:
    """Stack tensors along a new first dimension (torch.stack's errors for ragged ones). In a
    worker, torch stacks into a preallocated shared-memory tensor (``out=``), so a batch of
    tensors that require grad raises there; so it does here.

    >>> import jaxgrad
    >>> from jaxgrad.utils.data._utils.collate import collate_tensor_fn
    >>> collate_tensor_fn([jaxgrad.ones(2), jaxgrad.zeros(2)])
    tensor([[1., 1.],
            [0., 0.]])
    """
    if get_worker_info() is None:
        return joins.stack(batch, 0)
    elem = batch[0]
    out = empty((len(batch), *elem.shape), dtype=elem.dtype, device=elem.device)
    return joins.stack(batch, 0, out=out)


def collate_numpy_array_fn(batch: list[np.ndarray], *, collate_fn_map: Any = None) -> Any:
    """NumPy arrays become tensors, then are collated as tensors; arrays of strings or objects
    raise TypeError.

    >>> import numpy as np
    >>> from jaxgrad.utils.data import default_collate
    >>> default_collate([np.zeros(2), np.ones(2)]).dtype
    jaxgrad.float64
    """
    if _NUMPY_TEXT_OR_OBJECT.search(batch[0].dtype.str):
        raise TypeError(default_collate_err_msg_format.format(batch[0].dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: list[Any], *, collate_fn_map: Any = None) -> Tensor:
    """NumPy scalars become one tensor of their dtype.

    >>> import numpy as np
    >>> from jaxgrad.utils.data import default_collate
    >>> default_collate([np.int32(1), np.int32(2)])
    tensor([1, 2], dtype=jaxgrad.int32)
    """
    return as_tensor(batch)


def collate_float_fn(batch: list[float], *, collate_fn_map: Any = None) -> Tensor:
    """Python floats become one float64 tensor.

    >>> from jaxgrad.utils.data import default_collate
    >>> default_collate([0.5, 1.5]).dtype
    jaxgrad.float64
    """
    return tensor(batch, dtype=float64)


def collate_int_fn(batch: list[int], *, collate_fn_map: Any = None) -> Tensor:
    """Python ints (int64) and bools (bool) become one tensor.

    >>> from jaxgrad.utils.data import default_collate
    >>> default_collate([1, 2]).dtype, default_collate([True, False]).dtype
    (jaxgrad.int64, jaxgrad.bool)
    """
    return tensor(batch)


def collate_str_fn(batch: list[Any], *, collate_fn_map: Any = None) -> list:
    """Strings and bytes stay as they are, in a list.

    >>> from jaxgrad.utils.data import default_collate
    >>> default_collate(["a", "b"])
    ['a', 'b']
    """
    return batch


default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: list[Any]) -> Any:
    """Put a list of samples into one batch, adding a first dimension of the batch's size:
    tensors are stacked, numbers become tensors, mappings/namedtuples/tuples/lists are collated
    field by field (tuples become lists), strings stay lists. ``default_collate_fn_map`` holds
    the per-type rules; add an entry to extend it.

    >>> from collections import namedtuple
    >>> import jaxgrad
    >>> from jaxgrad.utils.data import default_collate
    >>> default_collate([{"A": 0, "B": 1.0}, {"A": 100, "B": 2.0}])
    {'A': tensor([  0, 100]), 'B': tensor([1., 2.], dtype=jaxgrad.float64)}
    >>> Point = namedtuple("Point", ["x", "y"])
    >>> default_collate([Point(0, 0), Point(1, 1)])
    Point(x=tensor([0, 1]), y=tensor([0, 1]))
    >>> default_collate([(jaxgrad.ones(2), "a"), (jaxgrad.zeros(2), "b")])
    [tensor([[1., 1.],
            [0., 0.]]), ['a', 'b']]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
