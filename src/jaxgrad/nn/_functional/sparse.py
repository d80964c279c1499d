"""Lookups: one_hot and embedding (padding_idx, max_norm renormalisation in place).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..._core import dtypes as _dtypes
from ..._core.grad_mode import no_grad
from ..._core.jax_setup import host_to_device, x64_scope
from ..._core.tensor import Tensor
from ..._core.tensor_repr import concrete_here, spans_processes_error
from ..._engine.dispatch import apply as _apply
from ..._functions import pointwise
from ..._ops import nn as N


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
