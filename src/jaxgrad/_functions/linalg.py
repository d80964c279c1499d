"""Matrix products and linear algebra: mm, bmm, mv, dot, matmul, addmm/baddbmm/addbmm,
outer, inner, tensordot, kron, cross, trace, diag, norms (torch.norm, linalg norms), tril/triu
indices, cov and corrcoef; the rows of ``_ops/linalg.py`` are generated here.
"""

from __future__ import annotations

import builtins
import math
import warnings
from typing import Any

import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes
from .._core.jax_setup import host_to_device
from .._core.tensor import Tensor, _wrap_dim
from .._engine.dispatch import apply, apply_inplace
from .._ops import linalg as L
from .._ops import linalg_decomp as DC
from .._ops import reductions as R
from .._ops import views as V
from .arguments import (
    broadcast_shapes,
    require_tensors,
    scalar,
    size_of,
    sizes_text,
    warn_once_as_jaxgrad,
    wrap_dims,
)
from .complex_numbers import complex as jaxgrad_complex
from .opgen import declare, declare_alias, generate
from .pointwise import mul
from .reductions import amax, amin, sum
from .shapes import (
    _dim_list,
    _expanded_shape,
    _unsafe_view,
    contiguous,
    expand,
    flatten,
    permute,
    reshape,
    squeeze,
    t,
    to_dtype,
    transpose,
    unsqueeze,
)

# The ops a row of ``_ops`` declares whole (``variants=``/``inplace=``) are generated here from
# their schemas (see ``opgen``).
globals().update(generate(L))


@declare('outer(Tensor self, Tensor vec2) -> Tensor', variants='function method out')
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two 1-d tensors, as torch computes it:
    ``input.reshape(n, 1) * vec2``.

    >>> import jaxgrad
    >>> jaxgrad.outer(jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([1.0, 10.0, 100.0]))
    tensor([[  1.,  10., 100.],
            [  2.,  20., 200.]])
    """
    require_tensors(vec2)
    for name, vector in (("self", input), ("vec2", vec2)):
        if vector.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {vector.ndim}-D")
    return mul(reshape(input, (input.shape[0], 1)), vec2)


ger = declare_alias("ger", "outer")  # (torch's older name of outer)


@declare(
    'norm(Tensor self, Any p="fro", int[1]? dim=None, bool keepdim=False, '
    'ScalarType? dtype=None) -> Tensor',
    variants='function method out', python_level=True)
def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         dtype: Any = None) -> Tensor:
    """torch.norm: the vector p-norm over ``dim`` (all elements by default; ``"fro"`` is the
    2-norm), or with ``p="nuc"`` or a ``"fro"`` over more than two dims, ``linalg.matrix_norm``.

    >>> import jaxgrad
    >>> jaxgrad.tensor([3.0, 4.0]).norm()
    tensor(5.)
    """
    dims = [dim] if isinstance(dim, int) else dim
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return linalg_vector_norm(input, 2, dims, keepdim, dtype=dtype)
        return linalg_matrix_norm(input, p, list(range(input.ndim)) if dims is None else dims,
                                  keepdim, dtype=dtype)
    return linalg_vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype)


def _norm_dtype(input: Tensor, dtype: Any, name: str) -> Any:
    """torch's dtype checks of the linalg norms: floating inputs, a floating ``dtype=``."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{_dtypes.scalar_type_name(input.dtype)}")
    if dtype is None:
        return None
    d = _dtypes.to_dtype(dtype)
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{_dtypes.scalar_type_name(d)}")
    return None if d is input.dtype else d.np


def _format_scalar(x: Any) -> str:
    """A number as torch's messages print a Scalar (``-1``, ``inf``, ``0.5``)."""
    return f"{x:g}" if isinstance(x, float) else str(x)


@declare(
    'linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, '
    'ScalarType? dtype=None) -> Tensor', variants='out')
def linalg_vector_norm(input: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                       dtype: Any = None) -> Tensor:
    """The vector ``ord``-norm of ``input`` over ``dim`` (all dims by default):
    ``sum(|x| ** ord) ** (1 / ord)``; ``inf``/``-inf`` the largest/smallest ``|x|``, 0 the number
    of non-zeros.

    >>> import jaxgrad
    >>> jaxgrad.linalg.vector_norm(jaxgrad.tensor([[3.0, -4.0], [0.0, 1.0]]), ord=1, dim=1)
    tensor([7., 1.])
    """
    ord = scalar(ord)
    if isinstance(ord, complex):
        raise TypeError("ord must be a real number")
    compute = _norm_dtype(input, dtype, "linalg.vector_norm")
    dims = tuple(range(input.ndim)) if dim is None or (
        not isinstance(dim, int) and not len(dim)) else wrap_dims(dim, input.ndim)
    if (ord < 0 or math.isinf(ord)) and not input.numel():
        if dim is None or not input.ndim:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_format_scalar(ord)} norm "
                               "on an empty tensor because the operation does not have an "
                               "identity")
        for d in ([dim] if isinstance(dim, int) else dim):
            if input.shape[d] == 0:  # torch's message lacks the space before "because"
                raise RuntimeError(f"linalg.vector_norm cannot compute the {_format_scalar(ord)} "
                                   f"norm on the dimension {_wrap_dim(d, input.ndim)}because this "
                                   "dimension is empty and the operation does not have an "
                                   "identity")
    return apply(R.VECTOR_NORM, input, ord=float(ord), dim=dims, keepdim=bool(keepdim),
                 dtype=compute)


@declare(
    'linalg_matrix_norm(Tensor self, Any ord="fro", int[] dim=[-2, -1], bool keepdim=False, *, '
    'ScalarType? dtype=None) -> Tensor', variants='out')
def linalg_matrix_norm(input: Tensor, ord: Any = "fro", dim: Any = (-2, -1),
                       keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The matrix norm over the two dims ``dim``: ``"fro"`` (Frobenius), 1/-1 (largest/smallest
    column sum of ``|x|``), ``inf``/``-inf`` (largest/smallest row sum), 2/-2/``"nuc"``
    (largest/smallest/summed singular values), composed as torch composes them.

    >>> import jaxgrad
    >>> jaxgrad.linalg.matrix_norm(jaxgrad.tensor([[1.0, -2.0], [3.0, 4.0]]), ord=1)
    tensor(6.)
    """
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif builtins.abs(ord) not in (1, 2, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {_format_scalar(ord)} not supported.")
    dims = [dim] if isinstance(dim, int) else list(dim)
    if input.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    _norm_dtype(input, None, "linalg.matrix_norm")
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dims)}")
    dims = [_wrap_dim(d, input.ndim) for d in dims]
    if dims[0] == dims[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, "
                           f"{dims[1]})")
    _norm_dtype(input, dtype, "linalg.matrix_norm")
    if ord == "fro":
        return linalg_vector_norm(input, 2, dims, keepdim, dtype=dtype)
    if ord == "nuc" or builtins.abs(ord) == 2:
        return _singular_value_norm(input, ord, dims, keepdim, dtype)
    if math.isinf(ord):
        dims.reverse()
    if not keepdim and dims[0] < dims[1]:
        dims[1] -= 1
    rows = linalg_vector_norm(input, 1.0, [dims[0]], keepdim, dtype=dtype)
    return (amax if ord > 0 else amin)(rows, dims[1], keepdim)


def _singular_value_norm(input: Tensor, ord: Any, dims: list, keepdim: bool,
                         dtype: Any) -> Tensor:
    """torch's 2, -2 and nuclear matrix norms: the largest, smallest or summed singular values
    of the input with the two dims moved last (``permute``, then ``svdvals``)."""
    if dtype is not None:
        input = to_dtype(input, dtype)
    order = [d for d in range(input.ndim) if d not in dims] + dims
    values = apply(DC.LINALG_SVD, permute(input, *order), full_matrices=False)[1]
    result = sum(values, -1) if ord == "nuc" else (amax if ord > 0 else amin)(values, -1)
    if keepdim:
        back = sorted(range(len(order)), key=order.__getitem__)
        result = permute(unsqueeze(unsqueeze(result, -1), -1), *back)
    return result


@declare(
    'linalg_norm(Tensor self, Any ord=None, int[1]? dim=None, bool keepdim=False, *, '
    'ScalarType? dtype=None) -> Tensor', variants='out')
def linalg_norm(input: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """A vector norm (``dim`` an int, or a 1-d input) or a matrix norm (``dim`` a 2-tuple, or a
    2-d input with ``ord`` given); with neither ``ord`` nor ``dim``, the 2-norm of all elements.

    >>> import jaxgrad
    >>> jaxgrad.linalg.norm(jaxgrad.tensor([[3.0, 4.0], [0.0, 0.0]]))
    tensor(5.)
    """
    dims = [dim] if isinstance(dim, int) else dim
    if dims is not None:
        if len(dims) not in (1, 2):
            raise RuntimeError("linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {list(dims)}")
    elif ord is not None and input.ndim not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {input.ndim}D.")
    if isinstance(ord, str):
        return linalg_matrix_norm(input, ord, [0, 1] if dims is None else dims, keepdim,
                                  dtype=dtype)
    if ord is not None and (len(dims) == 2 if dims is not None else input.ndim == 2):
        return linalg_matrix_norm(input, ord, [0, 1] if dims is None else dims, keepdim,
                                  dtype=dtype)
    return linalg_vector_norm(input, 2.0 if ord is None else ord, dims, keepdim, dtype=dtype)


def _same_dtype(a: Tensor, b: Tensor) -> None:
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype.name} != {b.dtype.name}".replace("float32", "float")
                           .replace("float64", "double"))


@declare('mm(Tensor self, Tensor mat2) -> Tensor', variants='function method out')
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Matrix product of two 2-d tensors.

    >>> import jaxgrad
    >>> jaxgrad.mm(jaxgrad.ones(2, 3), jaxgrad.ones(3, 1))
    tensor([[3.],
            [3.]])
    """
    if input.ndim != 2 or mat2.ndim != 2:
        bad = input if input.ndim != 2 else mat2
        raise RuntimeError(f"{'self' if bad is input else 'mat2'} must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})")
    _same_dtype(input, mat2)
    return apply(L.MM, input, mat2)


@declare('bmm(Tensor self, Tensor mat2) -> Tensor', variants='function method out')
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product of two 3-d tensors.

    >>> import jaxgrad
    >>> jaxgrad.bmm(jaxgrad.ones(4, 2, 3), jaxgrad.ones(4, 3, 5)).shape
    jaxgrad.Size([4, 2, 5])
    """
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if input.ndim != 3
                           else "batch2 must be a 3D tensor")
    batch, _, m = input.shape
    if tuple(mat2.shape[:2]) != (batch, m):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch}, {m}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    _dtypes.check_scalar_type(mat2.dtype, input.dtype)
    return apply(L.BMM, input, mat2)


@declare('mv(Tensor self, Tensor vec) -> Tensor', variants='function method out')
def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product.

    >>> import jaxgrad
    >>> jaxgrad.mv(jaxgrad.ones(2, 3), jaxgrad.tensor([1.0, 2.0, 3.0]))
    tensor([6., 6.])
    """
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    rows, cols = input.shape
    if cols != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{cols}), vec "
                           f"({vec.shape[0]})")
    if input.dtype is not vec.dtype:
        # torch's mv is addmv into a result of vec's dtype: (result, mat, vec)
        names = [_dtypes.scalar_type_name(d) for d in (vec.dtype, input.dtype, vec.dtype)]
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {names[0]}, "
                           f"{names[1]}, and {names[2]}")
    return apply(L.MV, input, vec)


@declare('dot(Tensor self, Tensor tensor) -> Tensor', variants='function method out')
def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Dot product of two 1-d tensors.

    >>> import jaxgrad
    >>> jaxgrad.dot(jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([3.0, 4.0]))
    tensor(11.)
    """
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D "
                           "tensors")
    if input.shape[0] != tensor.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
            f"[{tensor.shape[0]}] to have the same number of elements, but got {input.shape[0]} "
            f"and {tensor.shape[0]} elements respectively")
    if input.dtype is not tensor.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_dtypes.scalar_type_name(input.dtype)} and "
                           f"{_dtypes.scalar_type_name(tensor.dtype)}")
    return apply(L.DOT, input, tensor)


@declare('matmul(Tensor self, Tensor other) -> Tensor', variants='function method out')
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """torch.matmul, composed of dot/mv/mm/bmm and views exactly as torch's ``_matmul_impl``.

    >>> import jaxgrad
    >>> jaxgrad.matmul(jaxgrad.ones(5, 2, 3), jaxgrad.ones(3)).shape
    jaxgrad.Size([5, 2])
    """
    d1, d2 = input.ndim, other.ndim
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return dot(input, other)
    if d1 == 2 and d2 == 1:
        return mv(input, other)
    if d1 == 1 and d2 == 2:
        return apply_inplace(V.SQUEEZE_INPLACE, mm(unsqueeze(input, 0), other), dims=(0,))
    if d1 == 2 and d2 == 2:
        return mm(input, other)
    if _should_fold(input, other):
        return _folded_matmul(input, other)
    return _batched_matmul(input, other)


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """torch's should_fold: can the larger operand be folded into a matrix for mm/mv?"""
    a_larger = a.ndim >= b.ndim
    big, small = (a, b) if a_larger else (b, a)
    if big.ndim < 3 or small.ndim > 2:
        return False
    if small._requires_grad:  # folding keeps the gradient of the small operand small
        return True
    if a.ndim == 2:
        return False
    if big.numel() == 0:
        return True
    g = big._geometry()
    shape, strides = list(g.shape), list(g.strides)
    if not a_larger:  # torch checks the strides of b.mT
        shape[-2], shape[-1] = shape[-1], shape[-2]
        strides[-2], strides[-1] = strides[-1], strides[-2]
    return builtins.all(strides[i] == strides[i + 1] * shape[i + 1]
                        for i in range(len(shape) - 2))


def _folded_matmul(a: Tensor, b: Tensor) -> Tensor:
    """N-D @ 1-D/2-D as one mm/mv on the folded N-D operand (b.mT when b is the larger)."""
    transposed = b.ndim > a.ndim
    t1 = transpose(b, -2, -1) if transposed else a
    t2 = (t(a) if a.ndim == 2 else a) if transposed else b
    lead = tuple(t1.shape[:-1])
    folded = reshape(t1, (math.prod(lead), t1.shape[-1]))
    if t2.ndim == 1:
        return _unsafe_view(mv(folded, t2), lead)
    out = _unsafe_view(mm(folded, t2), lead + (t2.shape[1],))
    return contiguous(transpose(out, -2, -1)) if transposed else out


def _batched_matmul(a: Tensor, b: Tensor) -> Tensor:
    """Broadcast batch dims, then one bmm (torch's last matmul case)."""
    d1, d2 = a.ndim, b.ndim
    batch1, batch2 = tuple(a.shape[:-2]), tuple(b.shape[:-2])
    if d1 == 3 and d2 == 3 and batch1[0] != batch2[0]:
        if batch1[0] == 1 and a._requires_grad:
            return matmul(squeeze(a, 0), b)
        if batch2[0] == 1 and b._requires_grad:
            return matmul(a, squeeze(b, 0))
    n, m1 = (a.shape[-2] if d1 > 1 else 1), a.shape[-1]
    m2, p = (b.shape[-2], b.shape[-1]) if d2 > 1 else (b.shape[0], 1)
    batch = broadcast_shapes(batch1, batch2)
    size = math.prod(batch)
    if m1 != m2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size}, {m1}] but got: [{size}, {m2}].")
    a3 = reshape(expand(a, batch + (n, m1)), (size, n, m1))
    shape = batch + ((n,) if d1 > 1 else ()) + ((p,) if d2 > 1 else ())
    if d2 == 1:
        b3 = unsqueeze(reshape(expand(b, batch + (m2,)), (size, m2)), 2)
        return _unsafe_view(squeeze(bmm(a3, b3), -1), shape)
    b3 = reshape(expand(b, batch + (m2, p)), (size, m2, p))
    return _unsafe_view(bmm(a3, b3), shape)


def _expand_input(input: Tensor, shape: tuple) -> None:
    """torch's expand_size check of addmm-like ops' ``input`` against the result's shape."""
    _expanded_shape(input, shape)


def _check_inplace_size(input: Tensor, shape: tuple) -> None:
    if tuple(input.shape) != tuple(shape):
        raise RuntimeError(f"Bad in-place call: input tensor size {sizes_text(input)} and output "
                           f"tensor size {list(shape)} should match")


def _addmm(input: Tensor, mat1: Tensor, mat2: Tensor, beta: Any, alpha: Any,
           inplace: bool) -> Tensor:
    require_tensors(mat1, mat2)
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    shape = (mat1.shape[0], mat2.shape[1])
    if inplace:
        _check_inplace_size(input, shape)
    else:
        _expand_input(input, shape)
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})")
    for name, a in (("self", input), ("mat1", mat1)):
        if a.dtype is not mat2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                               f"{_dtypes.scalar_type_name(a.dtype)} and "
                               f"{_dtypes.scalar_type_name(mat2.dtype)}")
    run = apply_inplace if inplace else apply
    return run(L.ADDMM, input, mat1, mat2, aux=(scalar(beta), scalar(alpha)))


@declare(
    'addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor',
    variants='function method out')
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` (``input`` broadcasts to the product's shape).

    >>> import jaxgrad
    >>> jaxgrad.addmm(jaxgrad.ones(2), jaxgrad.ones(3, 2), jaxgrad.ones(2, 2), alpha=2)
    tensor([[5., 5.],
            [5., 5.],
            [5., 5.]])
    """
    return _addmm(input, mat1, mat2, beta, alpha, inplace=False)


@declare(
    'addmm_(Tensor(a!) self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> '
    'Tensor(a!)', variants='method')
def addmm_(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``addmm``, in place.

    >>> import jaxgrad
    >>> jaxgrad.ones(1, 1).addmm_(jaxgrad.ones(1, 2), jaxgrad.ones(2, 1), beta=0.5)
    tensor([[2.5000]])
    """
    return _addmm(input, mat1, mat2, beta, alpha, inplace=True)


def _check_batches(input: Tensor, batch1: Tensor, batch2: Tensor) -> None:
    """torch's baddbmm checks after the input's expand: 3-d batches of matching sizes/dtypes."""
    for name, b in (("batch1", batch1), ("batch2", batch2)):
        if b.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    bs, _, contraction = batch1.shape
    if tuple(batch2.shape[:2]) != (bs, contraction):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{bs}, {contraction}] but got: [{batch2.shape[0]}, "
                           f"{batch2.shape[1]}].")
    _dtypes.check_scalar_type(batch2.dtype, batch1.dtype)
    if input.dtype is not batch1.dtype:
        names = [_dtypes.c_type_name(t.dtype) for t in (input, batch1, batch2)]
        raise RuntimeError(f"Input dtypes must be the same, got: input {names[0]}, batch1: "
                           f"{names[1]}, batch2: {names[2]}")


def _baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, beta: Any, alpha: Any,
             inplace: bool) -> Tensor:
    require_tensors(batch1, batch2)
    shape = (size_of(batch1, 0), size_of(batch1, 1), size_of(batch2, 2))
    if inplace:
        _check_inplace_size(input, shape)
    else:
        _expand_input(input, shape)
    _check_batches(input, batch1, batch2)
    run = apply_inplace if inplace else apply
    return run(L.BADDBMM, input, batch1, batch2, aux=(scalar(beta), scalar(alpha)))


@declare(
    'baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> '
    'Tensor', variants='function method out')
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` for 3-d batches of matrices.

    >>> import jaxgrad
    >>> jaxgrad.baddbmm(jaxgrad.zeros(1), jaxgrad.ones(2, 1, 3), jaxgrad.ones(2, 3, 1))
    tensor([[[3.]],
    <BLANKLINE>
            [[3.]]])
    """
    return _baddbmm(input, batch1, batch2, beta, alpha, inplace=False)


@declare(
    'baddbmm_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) '
    '-> Tensor(a!)', variants='method')
def baddbmm_(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
             alpha: Any = 1) -> Tensor:
    """``baddbmm``, in place.

    >>> import jaxgrad
    >>> jaxgrad.ones(1, 1, 1).baddbmm_(jaxgrad.ones(1, 1, 2), jaxgrad.ones(1, 2, 1), alpha=3)
    tensor([[[7.]]])
    """
    return _baddbmm(input, batch1, batch2, beta, alpha, inplace=True)


def _addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, beta: Any, alpha: Any,
            inplace: bool) -> Tensor:
    require_tensors(batch1, batch2)
    shape = (size_of(batch1, 1), size_of(batch2, 2))
    if inplace:
        _check_inplace_size(input, shape)
    else:
        _expand_input(input, shape)
    for name, b in (("batch1", batch1), ("batch2", batch2)):
        if b.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")
    for a, b in ((input, batch2), (batch1, batch2)):
        if a.dtype is not b.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                               f"{_dtypes.scalar_type_name(a.dtype)} and "
                               f"{_dtypes.scalar_type_name(b.dtype)}")
    run = apply_inplace if inplace else apply
    return run(L.ADDBMM, input, batch1, batch2, aux=(scalar(beta), scalar(alpha)))


@declare(
    'addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> '
    'Tensor', variants='function method out')
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
           alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``.

    >>> import jaxgrad
    >>> jaxgrad.addbmm(jaxgrad.zeros(1), jaxgrad.ones(2, 1, 3), jaxgrad.ones(2, 3, 1))
    tensor([[6.]])
    """
    return _addbmm(input, batch1, batch2, beta, alpha, inplace=False)


@declare(
    'addbmm_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) '
    '-> Tensor(a!)', variants='method')
def addbmm_(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1) -> Tensor:
    """``addbmm``, in place.

    >>> import jaxgrad
    >>> jaxgrad.ones(1, 1).addbmm_(jaxgrad.ones(2, 1, 2), jaxgrad.ones(2, 2, 1))
    tensor([[5.]])
    """
    return _addbmm(input, batch1, batch2, beta, alpha, inplace=True)


@declare('diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor')
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices (in dims ``dim1``/``dim2``) whose ``offset``-th diagonal holds the last dim of
    ``input``, zero elsewhere; DiagEmbedBackward0.

    >>> import jaxgrad
    >>> jaxgrad.diag_embed(jaxgrad.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    """
    n = input.ndim + 1
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(V.DIAG_EMBED, input, offset=offset, dim1=d1, dim2=d2)


@declare('diag(Tensor self, int diagonal=0) -> Tensor', variants='function method out')
def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A vector's square matrix with it on the ``diagonal``-th diagonal, or a matrix's
    ``diagonal``-th diagonal (a copy).

    >>> import jaxgrad
    >>> jaxgrad.diag(jaxgrad.tensor([[1, 2], [3, 4]]))
    tensor([1, 4])
    """
    if input.ndim == 1:
        return apply(V.DIAG_EMBED, input, offset=diagonal, dim1=0, dim2=1)
    if input.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    return apply(V.DIAGONAL_COPY, input, offset=diagonal, dim1=0, dim2=1)


@declare('diagflat(Tensor self, int offset=0) -> Tensor', variants='function method')
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A square matrix with the flattened ``input`` on its ``offset``-th diagonal
    (DiagEmbedBackward0 over a ViewBackward0, as torch builds it).

    >>> import jaxgrad
    >>> jaxgrad.diagflat(jaxgrad.tensor([[1, 2]]), 1)
    tensor([[0, 1, 0],
            [0, 0, 2],
            [0, 0, 0]])
    """
    return apply(V.DIAG_EMBED, input.contiguous().view(-1), offset=offset, dim1=0, dim2=1)


@declare('trace(Tensor self) -> Tensor')
def trace(input: Tensor) -> Tensor:
    """The sum of a matrix's diagonal (integers sum to int64); TraceBackward0.

    >>> import jaxgrad
    >>> jaxgrad.trace(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor(5.)
    """
    if input.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim "
                           f"{input.ndim}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        input = to_dtype(input, _dtypes.int64)
    return apply(V.TRACE, input)


def _indices(name: str, row: int, col: int, offset: int, dtype: Any, device: Any,
             lower: bool) -> Tensor:
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    d = _dtypes.to_dtype(dtype) if dtype is not None else _dtypes.int64
    if d not in (_dtypes.int64, _dtypes.int32):
        raise NotImplementedError(f"\"{name}\" not implemented for '{_dtypes.scalar_type_name(d)}'")
    mask = np.tri(row, col, offset, dtype=bool) if lower else ~np.tri(row, col, offset - 1,
                                                                         dtype=bool)
    out = Tensor._make(host_to_device(np.stack(np.nonzero(mask)), d.np).reshape(2, -1))
    return out if device is None else out.to(device)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The (row, column) indices of the lower triangle (on and below the ``offset``-th
    diagonal) of a ``row`` x ``col`` matrix, as a 2 x N int64 tensor.

    >>> import jaxgrad
    >>> jaxgrad.tril_indices(2, 2)
    tensor([[0, 1, 1],
            [0, 0, 1]])
    """
    return _indices("tril_indices", row, col, offset, dtype, device, lower=True)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The (row, column) indices of the upper triangle (on and above the ``offset``-th
    diagonal) of a ``row`` x ``col`` matrix, as a 2 x N int64 tensor.

    >>> import jaxgrad
    >>> jaxgrad.triu_indices(2, 2)
    tensor([[0, 0, 1],
            [0, 1, 1]])
    """
    return _indices("triu_indices", row, col, offset, dtype, device, lower=False)


@declare('kron(Tensor self, Tensor other) -> Tensor', variants='function method out')
def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: blocks ``input[i, j] * other``.

    >>> import jaxgrad
    >>> jaxgrad.kron(jaxgrad.tensor([1, 2]), jaxgrad.tensor([1, 10]))
    tensor([ 1, 10,  2, 20])
    """
    n = builtins.max(input.ndim, other.ndim)
    a_shape = (1,) * (n - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (n - other.ndim) + tuple(other.shape)
    a_view = tuple(x for s in a_shape for x in (s, 1))
    b_view = tuple(x for s in b_shape for x in (1, s))
    product = mul(_unsafe_view(input, a_view), _unsafe_view(other, b_view))
    return _unsafe_view(product, tuple(a * b for a, b in zip(a_shape, b_shape)))


@declare('cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) '
         '-> Tensor', variants='function method')
def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``input`` (observations in its
    columns), weighted by observation counts ``fweights`` and importances ``aweights``; a
    composite of jaxgrad ops, as torch's (its gradient is theirs).

    >>> import jaxgrad
    >>> jaxgrad.cov(jaxgrad.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    if input.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input.dtype is _dtypes.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    rows = input if input.ndim == 2 else input.view(1, -1)
    n = rows.size(1)
    if fweights is not None:
        _check_weights("fweights", fweights, n, integral=True)
    if aweights is not None:
        _check_weights("aweights", aweights, n, integral=False)
    weights = aweights if fweights is None else (
        fweights if aweights is None else fweights * aweights)
    if weights is None:
        total = Tensor._make(jnp.asarray(n, jnp.int64))
    else:
        total = weights.sum()
        if not bool(total.ne(0)):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    mean = (rows if weights is None else rows * weights).sum(1) / total
    norm = _cov_norm(n, correction, weights, total, fweights, aweights)
    if bool(norm.le(0)):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=3)
        norm = norm.zero_()
    if n == 1 and (fweights is None) != (aweights is None):
        rows.zero_()  # (torch's corner case writes zeros into the input itself)
        centred = rows if rows.is_floating_point() or rows.is_complex() else rows.float()
    else:
        centred = rows - mean.unsqueeze(1)
    c = centred.mm((centred if weights is None else centred * weights).t().conj())
    return c.true_divide(norm).squeeze()


def _check_weights(name: str, w: Tensor, n: int, integral: bool) -> None:
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.ndim} dimensions")
    if integral and (w.is_floating_point() or w.is_complex() or w.dtype is _dtypes.bool_):
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} with "
                           f"{_dtypes.scalar_type_name(w.dtype)} dtype")
    if not integral and not w.is_floating_point():
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got {name} "
                           f"with {_dtypes.scalar_type_name(w.dtype)} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if n and not bool(w.min().ge(0)):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def _cov_norm(n: int, correction: int, weights: Tensor | None, total: Tensor,
              fweights: Tensor | None, aweights: Tensor | None) -> Tensor:
    """cov's divisor: observations (or the weight total) less ``correction`` degrees of
    freedom, which importance weights scale."""
    if weights is None:
        return Tensor._make(jnp.asarray(n - correction, jnp.int64))
    if correction == 0:
        return total
    if aweights is None:
        return total - correction
    if fweights is None and n == 1 and correction == 1:
        return Tensor._make(jnp.asarray(0, jnp.int64))
    return total - correction * (weights * aweights).sum() / total


@declare('corrcoef(Tensor self) -> Tensor', variants='function method')
def corrcoef(input: Tensor) -> Tensor:
    """Pearson's correlation coefficients of the variables in the rows of ``input``: ``cov``
    normalised by the standard deviations, clipped to [-1, 1].

    >>> import jaxgrad
    >>> jaxgrad.corrcoef(jaxgrad.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    if input.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    std = (d.real if d.is_complex() else d).sqrt()
    c = c / std.view(-1, 1) / std.view(1, -1)
    if c.is_complex():
        return jaxgrad_complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:
    """Contract dims of ``a`` with dims of ``b``: the last ``dims`` of ``a`` with the first
    ``dims`` of ``b``, or the two lists in ``dims``.

    >>> import jaxgrad
    >>> jaxgrad.tensordot(jaxgrad.ones(2, 3), jaxgrad.ones(3, 4), 1).shape
    jaxgrad.Size([2, 4])
    """
    require_tensors(a, b)
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > builtins.min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        dims_a, dims_b = _dim_list(dims[0]), _dim_list(dims[1])
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    result = _tensordot(a, b, dims_a, dims_b)
    return result if out is None else out.copy_(result)


def _tensordot(a: Tensor, b: Tensor, dims_a: list, dims_b: list) -> Tensor:
    csize, t1, t2 = 1, a, b
    for da, db in zip(dims_a, dims_b):
        s1, s2 = a.shape[_wrap_dim(da, a.ndim)], b.shape[_wrap_dim(db, b.ndim)]
        if s2 == 1:
            t1 = sum(t1, da, True)
        elif s1 == 1:
            t2 = sum(t2, db, True)
        else:
            if s1 != s2:
                raise RuntimeError(f"contracted dimensions need to match, but first has size "
                                   f"{s1} in dim {da} and second has size {s2} in dim {db}")
            csize *= s1
    wrapped_a = wrap_dims(dims_a, a.ndim) if dims_a else ()
    wrapped_b = wrap_dims(dims_b, b.ndim) if dims_b else ()
    p1 = [i for i in range(a.ndim) if i not in wrapped_a] + dims_a
    p2 = dims_b + [i for i in range(b.ndim) if i not in wrapped_b]
    size1 = math.prod(t1.shape[i] for i in range(a.ndim) if i not in wrapped_a)
    size2 = math.prod(t2.shape[i] for i in range(b.ndim) if i not in wrapped_b)
    rsizes = ([t1.shape[i] for i in range(a.ndim) if i not in wrapped_a]
              + [t2.shape[i] for i in range(b.ndim) if i not in wrapped_b])
    if size1 != 1 or size2 != 1:
        t1 = reshape(permute(t1, tuple(p1)), (size1, csize))
        t2 = reshape(permute(t2, tuple(p2)), (csize, size2))
        return reshape(mm(t1, t2), tuple(rsizes))
    t1, t2 = permute(t1, tuple(p1)), permute(t2, tuple(p2))
    if t1.is_contiguous() and t2.is_contiguous():
        return reshape(dot(flatten(t1), flatten(t2)), tuple(rsizes))
    return reshape(sum(mul(squeeze(t1), squeeze(t2)), dtype=t1.dtype), tuple(rsizes))


@declare('inner(Tensor self, Tensor other) -> Tensor', variants='function method out')
def inner(input: Tensor, other: Tensor) -> Tensor:
    """Sum of products over the last dims of both (a product when one is a scalar).

    >>> import jaxgrad
    >>> jaxgrad.inner(jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([3.0, 4.0]))
    tensor(11.)
    """
    if input.ndim == 0 or other.ndim == 0:
        return mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(input.shape)} and {list(other.shape)}")
    return _tensordot(input, other, [-1], [-1])


def _linalg_cross(input: Tensor, other: Tensor, dim: int) -> Tensor:
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    shape = broadcast_shapes(tuple(input.shape), tuple(other.shape))
    d = _wrap_dim(dim, len(shape))
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    return apply(V.LINALG_CROSS, input, other, dim=d)


@declare('linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor', variants='out')
def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (broadcasting the other dims);
    LinalgCrossBackward0.

    >>> import jaxgrad
    >>> jaxgrad.linalg.cross(jaxgrad.tensor([1.0, 0.0, 0.0]), jaxgrad.tensor([0.0, 1.0, 0.0]))
    tensor([0., 0., 1.])
    """
    return _linalg_cross(input, other, dim)


_CROSS_WARNING = (
    "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
    "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
    "with that of linalg.cross in a future release.")


@declare('cross(Tensor self, Tensor other, int? dim=None) -> Tensor',
         variants='function method out')
def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (by default, with torch's deprecation
    warning, the first dim of size 3).

    >>> import jaxgrad
    >>> jaxgrad.cross(jaxgrad.tensor([1.0, 0.0, 0.0]), jaxgrad.tensor([0.0, 1.0, 0.0]), dim=0)
    tensor([0., 0., 1.])
    """
    if dim is None:
        warn_once_as_jaxgrad(_CROSS_WARNING)
        shape = broadcast_shapes(tuple(input.shape), tuple(other.shape))
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return _linalg_cross(input, other, dim)
