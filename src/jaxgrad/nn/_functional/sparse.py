"""Lookups: one_hot, embedding (padding_idx, max_norm renormalisation in place) and
embedding_bag.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ..._core import dtypes as _dtypes
from ..._core.grad_mode import no_grad
from ..._core.jax_setup import host_to_device, x64_scope
from ..._core.tensor import Tensor
from ..._core.tensor_repr import concrete_here, spans_processes_error
from ..._engine.dispatch import apply as _apply
from ..._functions import creation as _creation
from ..._functions import pointwise
from ..._ops import nn as N
from ..._ops import nn_embedding_bag as EB


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor with a trailing dim of size ``num_classes`` (by default one more than
    the largest class), 1 at each element's class and 0 elsewhere.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.one_hot(jaxgrad.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    if not isinstance(tensor, Tensor):
        raise TypeError("one_hot(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    if tensor.dtype.name != "int64":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if isinstance(tensor._value, jax.core.Tracer):
        return _traced_one_hot(tensor, num_classes)
    if not concrete_here(tensor._value):  # spanning processes: computed on the devices
        if num_classes == -1:
            raise spans_processes_error("one_hot with num_classes=-1")
        return _traced_one_hot(tensor, num_classes)
    values = np.asarray(tensor._value)
    if values.size == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        if values.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = int(values.max()) + 1
        elif values.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    classes = np.arange(num_classes)
    out = Tensor._make(host_to_device(values[..., None] == classes, np.int64))
    if values.size:
        out._vc.value += 2  # torch fills a zeros tensor and scatters the ones in: two writes
    return out


def _traced_one_hot(tensor: Tensor, num_classes: int) -> Tensor:
    """one_hot of traced class indices (``jax.jit``, ``jaxgrad.func``), or of indices spanning
    processes: the values cannot be checked or counted, so ``num_classes`` must be given."""
    if num_classes == -1:
        raise RuntimeError("one_hot: num_classes=-1 infers the number of classes from the "
                           "values, which a JAX trace does not have; pass num_classes")
    with x64_scope():
        classes = jnp.arange(num_classes, dtype=jnp.int64)
        out = Tensor._make((tensor._value[..., None] == classes).astype(jnp.int64))
    if tensor.numel():
        out._vc.value += 2
    return out


def _embedding_renorm(weight: Tensor, indices: Tensor, max_norm: float,
                      norm_type: float) -> None:
    """torch's embedding_renorm_: rows used by ``indices`` scaled down to norm ``max_norm``."""
    if not isinstance(indices._value, jax.core.Tracer) and not concrete_here(indices._value):
        raise spans_processes_error("embedding with max_norm")  # (its rows: jnp.unique's)
    with x64_scope():
        rows = jnp.unique(indices._value.reshape(-1))
        selected = weight._value[rows]
        norms = jnp.linalg.norm(selected, ord=norm_type, axis=-1, keepdims=True)
        scale = jnp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        renormed = Tensor._make(weight._value.at[rows].set(selected * scale))
    with no_grad():
        pointwise.copy_(weight, renormed)


def _legacy_type(tensor: Tensor) -> str:
    """How torch's argument checks name a CPU tensor's type: ``Tensor.type()`` (e.g.
    ``jaxgrad.FloatTensor``) for the legacy tensor types, ``CPUBoolType`` and the like for
    bool, bfloat16 and complex, which have none."""
    if tensor.dtype.name in ("bool", "bfloat16") or tensor.dtype.is_complex:
        return f"CPU{_dtypes.scalar_type_name(tensor.dtype)}Type"
    return tensor.type()


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input``; ``padding_idx`` gets no gradient.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.embedding(jaxgrad.tensor([1]), jaxgrad.eye(2))
    tensor([[0., 1.]])
    """
    num = weight.shape[0]
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx >= num or padding_idx < -num:
        raise AssertionError("Padding_idx must be within num_embeddings")
    elif padding_idx < 0:
        padding_idx += num
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("jaxgrad's embedding has no scale_grad_by_freq/sparse "
                                  "gradients")
    if input.dtype.name not in ("int64", "int32"):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {_legacy_type(input)} "
                           "instead (while checking arguments for embedding)")
    if concrete_here(input._value):  # a traced index (or one on other processes): unchecked
        indices = np.asarray(input._value)
        if indices.size and (indices.min() < 0 or indices.max() >= num):
            raise IndexError("index out of range in self")
    if max_norm is not None:
        _embedding_renorm(weight, input, max_norm, norm_type)
    return _apply(N.EMBEDDING, weight, aux=(input,), weight_sym_argsize_0=num,
                 padding_idx=padding_idx)


_BAG_MODES = {"sum": EB.SUM, "mean": EB.MEAN, "max": EB.MAX}


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxima of bags of ``weight`` rows: a 2-D ``input`` is one bag per row, a
    1-D one is split at ``offsets`` (``EmbeddingBagBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> w = jaxgrad.arange(6.0).reshape(3, 2)
    >>> F.embedding_bag(jaxgrad.tensor([0, 2, 1]), w, jaxgrad.tensor([0, 2]), mode="sum")
    tensor([[4., 6.],
            [2., 3.]])
    """
    if weight.dtype.name == "int64" and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) "
                         "is not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {type(offsets)}")
        offsets = _creation.arange(0, input.numel(), input.shape[1], dtype=input.dtype,
                                   device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        _embedding_renorm(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    return embedding_bag_native(weight, input, offsets, scale_grad_by_freq, _BAG_MODES[mode],
                                sparse, per_sample_weights, include_last_offset,
                                padding_idx)[0]


def embedding_bag_native(weight: Tensor, indices: Tensor, offsets: Tensor,
                         scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                         per_sample_weights: Tensor | None = None,
                         include_last_offset: bool = False,
                         padding_idx: int | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """torch's native ``embedding_bag`` (see ``aten_forms.embedding_bag``).

    >>> import jaxgrad
    >>> from jaxgrad.nn._functional.sparse import embedding_bag_native
    >>> w = jaxgrad.arange(6.0).reshape(3, 2)
    >>> embedding_bag_native(w, jaxgrad.tensor([0, 2, 1]), jaxgrad.tensor([0, 2]))[0]
    tensor([[4., 6.],
            [2., 3.]])
    """
    if sparse:
        raise NotImplementedError("jaxgrad has no sparse gradients (embedding_bag(sparse=True))")
    num = weight.shape[0]
    if padding_idx is None:
        padding_idx = -1
    elif not -num <= padding_idx < num:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, {-num} "
                           f"through {num - 1}, but got {padding_idx}")
    elif padding_idx < 0:
        padding_idx += num
    _check_bags(indices, offsets, num)
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError("Expected tensor for argument #1 'weight' to have the same type as "
                           "tensor for argument #1 'per_sample_weights'; but type "
                           f"{weight.type()} does not equal {per_sample_weights.type()} (while "
                           "checking arguments for embedding_bag)")
    return _apply(EB.EMBEDDING_BAG, weight, per_sample_weights, aux=(indices, offsets),
                  mode=int(mode), include_last_offset=bool(include_last_offset),
                  padding_idx=int(padding_idx), scale_grad_by_freq=bool(scale_grad_by_freq))


def _check_bags(indices: Tensor, offsets: Tensor, num: int) -> None:
    """torch's embedding_bag kernel checks on the index and offset values."""
    for name, t in (("indices", indices), ("offsets", offsets)):
        if t.dtype.name not in ("int64", "int32"):
            raise RuntimeError(f"Expected tensor for argument #{1 if name == 'indices' else 2} "
                               f"'{name}' to have one of the following scalar types: Long, Int; "
                               f"but got {t.type()} instead (while checking arguments for "
                               "embedding_bag)")
    if not (concrete_here(indices._value) and concrete_here(offsets._value)):
        return
    idx, off = np.asarray(indices._value), np.asarray(offsets._value)
    if off.size and off[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {off[0]}\n"
                           f"[ {offsets.type()}{{}} ]")
    if off.size and off[-1] > idx.size:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {idx.size} but "
                           f"got offsets[-1] of {off[-1]}")
    bad = idx[(idx < 0) | (idx >= num)]
    if bad.size:
        raise RuntimeError("embedding_bag: Expected idx >= 0 && idx < num_embeddings but found "
                           f"idx to be {bad[0]}")
