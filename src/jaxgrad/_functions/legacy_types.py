"""torch's legacy typed constructors: ``FloatTensor``, ``LongTensor``, ... and ``Tensor(...)``.

``jaxgrad.FloatTensor([1, 2])`` makes float32 data, ``jaxgrad.FloatTensor(2, 3)`` an
uninitialised 2x3 tensor (zeros here), ``jaxgrad.FloatTensor(t)`` an alias of a float32 ``t``;
``isinstance(t, jaxgrad.FloatTensor)`` is true for a float32 CPU tensor, as in torch. The
``jaxgrad.cuda`` twins are the same types on the GPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core import dtypes as _dtypes
from .._core.device import device as _device
from .._core.jax_setup import host_to_device
from .._core.tensor import Size, Tensor, as_subclass
from .._core.typename import public_path
from . import shapes
from .creation import _nested_sizes, _sequence_array, _shape, _to_numpy
from .creation import _place as _creation_place


def _options(d: _dtypes.dtype, device_type: str) -> str:
    return (f"TensorOptions(dtype={_dtypes.c_type_name(d)}, device={device_type}, "
            "layout=Strided, requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


def _is_sizes(args: tuple) -> bool:
    return all(isinstance(a, int) and not isinstance(a, bool) for a in args)


def _check_device(device: Any, device_type: str | None) -> Any:
    if device is None or device_type is None:
        return device
    kind = _device(device).type if not isinstance(device, int) else "cuda"
    if kind != device_type:
        raise RuntimeError(f"legacy constructor expects device type: {device_type} but device "
                           f"type: {kind} was passed")
    return device


def _place(array: Any, device: Any, device_type: str | None) -> Tensor:
    """A new tensor on ``device``, or on the legacy type's own device type when none is given."""
    return Tensor._make(_creation_place(array, device if device is not None else device_type))


def legacy_new(d: _dtypes.dtype | None, device_type: str | None, *args: Any,
               device: Any = None) -> Tensor:
    """torch's legacy constructor: no args -> empty; ints or a Size -> uninitialised of that
    shape; a Tensor -> an alias (its dtype must be ``d``); a sequence -> a copy cast to ``d``.
    ``d=None`` is ``jaxgrad.Tensor``: the default dtype, and any dtype for an alias.

    >>> import jaxgrad
    >>> jaxgrad.LongTensor([1.5, 2.0])
    tensor([1, 2])
    """
    device = _check_device(device, device_type)
    dtype = d or _dtypes.get_default_dtype()
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if d is not None and (other.dtype is not d or
                              (device_type is not None and other.device.type != device_type)):
            raise TypeError(f"expected {_options(d, device_type or 'cpu')} (got "
                            f"{_options(other.dtype, other.device.type)})")
        return shapes.alias(other)
    if (len(args) == 1 and isinstance(args[0], Size)) or (args and _is_sizes(args)):
        return _place(host_to_device(np.zeros(_shape(args), dtype.np), dtype.np), device,
                      device_type)
    if not args:
        return _place(host_to_device(np.zeros((0,), dtype.np), dtype.np), device, device_type)
    if len(args) > 1:
        bad = next(a for a in args if not (isinstance(a, int) and not isinstance(a, bool)))
        raise TypeError(f"new(): argument 'size' failed to unpack the object at pos "
                        f"{args.index(bad) + 1} with error \"type must be tuple of ints,but got "
                        f"{type(bad).__name__}\"")
    data = args[0]
    if isinstance(data, (int, float, complex, bool)):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    array = (_sequence_array(data, _nested_sizes(data), dtype) if isinstance(data, (list, tuple))
             else _to_numpy(data))
    return _place(host_to_device(array, dtype.np), device, device_type)


@public_path("jaxgrad")  # prints as torch's does: <class 'jaxgrad.tensortype'>
class tensortype(type):
    """The type of the legacy typed tensor classes, as ``torch.tensortype``.

    >>> import jaxgrad
    >>> isinstance(jaxgrad.ones(2), jaxgrad.FloatTensor), type(jaxgrad.FloatTensor).__name__
    (True, 'tensortype')
    """

    dtype: _dtypes.dtype
    is_cuda: bool

    def __instancecheck__(cls, obj: Any) -> bool:
        return (isinstance(obj, Tensor) and obj.dtype is cls.dtype
                and obj.is_cuda == cls.is_cuda)

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:
        return legacy_new(cls.dtype, "cuda" if cls.is_cuda else "cpu", *args, device=device)

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__qualname__}'>"



LEGACY_DTYPES = (_dtypes.float32, _dtypes.float64, _dtypes.float16, _dtypes.bfloat16,
                 _dtypes.uint8, _dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64,
                 _dtypes.bool_)


def _make_types(module: str, is_cuda: bool) -> dict[str, tensortype]:
    types = {}
    for d in LEGACY_DTYPES:
        name = _dtypes.legacy_type_name(d)
        path = f"{module}.{name}"
        doc = (f"Legacy constructor of {d} tensors{' on the GPU' if is_cuda else ''}.\n\n"
               f"    >>> import jaxgrad\n    >>> {path}.dtype, {path}.is_cuda\n"
               f"    ({d}, {is_cuda})\n    ")
        types[name] = tensortype(name, (), {"dtype": d, "is_cuda": is_cuda, "is_sparse": False,
                                            "__module__": module, "__doc__": doc})
    return types


CPU_TYPES = _make_types("jaxgrad", is_cuda=False)
CUDA_TYPES = _make_types("jaxgrad.cuda", is_cuda=True)


def by_name(name: str) -> tensortype | None:
    """The legacy type named ``'jaxgrad.FloatTensor'`` / ``'torch.cuda.LongTensor'``, or None.

    >>> from jaxgrad._functions.legacy_types import by_name
    >>> by_name("torch.DoubleTensor").dtype
    jaxgrad.float64
    """
    package, _, short = name.rpartition(".")
    if package in ("jaxgrad", "torch"):
        return CPU_TYPES.get(short)
    if package in ("jaxgrad.cuda", "torch.cuda"):
        return CUDA_TYPES.get(short)
    return None


def tensor_new(cls: type, *args: Any, device: Any = None) -> Tensor:
    """``Tensor(sequence)`` -> default-dtype data; ``Tensor(*sizes)`` -> uninitialised;
    ``Tensor(t)`` -> an alias of ``t``; as ``torch.Tensor(...)``.

    >>> import jaxgrad
    >>> jaxgrad.Tensor([1, 2])
    tensor([1., 2.])
    >>> jaxgrad.Tensor(2, 3).shape
    jaxgrad.Size([2, 3])
    """
    t = legacy_new(None, None, *args, device=device)
    return t if cls is Tensor else as_subclass(t, cls)


def type_string(t: Tensor) -> str:
    """The legacy type name of ``t``, as ``Tensor.type()`` returns it.

    >>> import jaxgrad
    >>> from jaxgrad._functions.legacy_types import type_string
    >>> type_string(jaxgrad.ones(1, dtype=jaxgrad.int64))
    'jaxgrad.LongTensor'
    """
    return f"jaxgrad.{'cuda.' if t.is_cuda else ''}{_dtypes.legacy_type_name(t.dtype)}"


def resolve_type(spec: Any) -> tuple[_dtypes.dtype, str | None]:
    """What ``Tensor.type(spec)`` converts to: (dtype, device type or None to stay)."""
    if isinstance(spec, str):
        found = by_name(spec)
        if found is None:
            raise ValueError(f"invalid type: '{spec}'")
        spec = found
    if isinstance(spec, tensortype):
        return spec.dtype, "cuda" if spec.is_cuda else "cpu"
    return _dtypes.to_dtype(spec), None
