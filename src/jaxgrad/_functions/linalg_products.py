"""More products: ``vdot``, ``addmv``/``addmv_``, ``addr``/``addr_``, ``linalg.vecdot``,
``linalg.multi_dot`` and ``chain_matmul`` (composed of ``mm`` and views as torch composes them),
``linalg.matmul``/``linalg.diagonal`` (torch's aliases), on the rows of ``_ops/linalg.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._core import dtypes as _dtypes
from .._core.tensor import Tensor
from .._engine.dispatch import apply, apply_inplace
from .._ops import linalg as L
from .arguments import require_tensors, scalar, sizes_text, warn_once_as_jaxgrad
from .complex_numbers import conj
from .linalg import _check_inplace_size, _expand_input, matmul, mm
from .opgen import declare
from .pointwise import mul
from .reductions import sum
from .shapes import clone, diagonal, unsqueeze


def _check_vdot(input: Tensor, other: Tensor) -> None:
    """torch's dot checks (vdot shares them, and the message naming ``dot``)."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_dtypes.scalar_type_name(input.dtype)} and "
                           f"{_dtypes.scalar_type_name(other.dtype)}")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
            f"[{other.shape[0]}] to have the same number of elements, but got {input.shape[0]} "
            f"and {other.shape[0]} elements respectively")


@declare('vdot(Tensor self, Tensor other) -> Tensor', variants='function method out')
def vdot(input: Tensor, other: Tensor) -> Tensor:
    """The dot product of two 1-d tensors with the first one conjugated:
    ``sum(conj(input) * other)``; VdotBackward0.

    >>> import jaxgrad
    >>> jaxgrad.vdot(jaxgrad.tensor([1j, 2.0]), jaxgrad.tensor([1.0, 1j]))
    tensor(0.+1.j)
    """
    require_tensors(other)
    _check_vdot(input, other)
    return apply(L.VDOT, input, other)


# --- addmv, addr ---------------------------------------------------------------------------------

def _addmv(input: Tensor, mat: Tensor, vec: Tensor, beta: Any, alpha: Any,
           inplace: bool) -> Tensor:
    require_tensors(mat, vec)
    if not (mat.ndim == 2 and vec.ndim == 1 and input.ndim <= 1):
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    rows, cols = mat.shape
    if cols != vec.shape[0] or (input.numel() != rows and input.numel() != 1):
        size = input.shape[0] if input.ndim else 1
        raise RuntimeError(f"size mismatch, got input ({size}), mat ({rows}x{cols}), vec "
                           f"({vec.shape[0]})")
    if inplace:
        _check_inplace_size(input, (rows,))
    if not (input.dtype is mat.dtype is vec.dtype):
        names = [_dtypes.scalar_type_name(t.dtype) for t in (input, mat, vec)]
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {names[0]}, "
                           f"{names[1]}, and {names[2]}")
    run = apply_inplace if inplace else apply
    return run(L.ADDMV, input, mat, vec, aux=(scalar(beta), scalar(alpha)))


@declare(
    'addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor',
    variants='function method out')
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``; ``input`` is not read where ``beta`` is 0.

    >>> import jaxgrad
    >>> jaxgrad.addmv(jaxgrad.ones(2), jaxgrad.ones(2, 3), jaxgrad.ones(3), alpha=2)
    tensor([7., 7.])
    """
    return _addmv(input, mat, vec, beta, alpha, inplace=False)


@declare(
    'addmv_(Tensor(a!) self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> '
    'Tensor(a!)', variants='function method')
def addmv_(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``addmv``, in place.

    >>> import jaxgrad
    >>> jaxgrad.ones(2).addmv_(jaxgrad.ones(2, 3), jaxgrad.ones(3), beta=0.5)
    tensor([3.5000, 3.5000])
    """
    return _addmv(input, mat, vec, beta, alpha, inplace=True)


def _check_addr_scalar(dtype: Any, value: Any, name: str) -> None:
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, bool) and dtype is not _dtypes.bool_:
        raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
    if not (dtype.is_floating_point or dtype.is_complex) and not isinstance(value, int):
        raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating "
                           "point number.")


def _addr(input: Tensor, vec1: Tensor, vec2: Tensor, beta: Any, alpha: Any,
          inplace: bool) -> Tensor:
    require_tensors(vec1, vec2)
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    shape = (vec1.shape[0], vec2.shape[0])
    if not inplace:
        _expand_input(input, shape)
    if (not inplace and input.ndim > 2) or (inplace and input.ndim != 2):
        raise RuntimeError(f"2D tensor expected, got {input.ndim}D tensor for input")
    if inplace and tuple(input.shape) != shape:
        raise RuntimeError(f"size mismatch, input: {sizes_text(input)}, v1: {sizes_text(vec1)}, "
                           f"v2: {sizes_text(vec2)}")
    dtype = _dtypes.promote_types(_dtypes.promote_types(input.dtype, vec1.dtype), vec2.dtype)
    _check_addr_scalar(dtype, beta, "beta")
    _check_addr_scalar(dtype, alpha, "alpha")
    run = apply_inplace if inplace else apply
    return run(L.ADDR, input, vec1, vec2, aux=(scalar(beta), scalar(alpha)))


@declare(
    'addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor',
    variants='function method out')
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)`` (``input`` broadcasts to the outer product's
    shape and is not read where ``beta`` is 0; bool tensors combine logically).

    >>> import jaxgrad
    >>> jaxgrad.addr(jaxgrad.zeros(2, 2), jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([1.0, 3.0]))
    tensor([[1., 3.],
            [2., 6.]])
    """
    return _addr(input, vec1, vec2, beta, alpha, inplace=False)


@declare(
    'addr_(Tensor(a!) self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> '
    'Tensor(a!)', variants='method')
def addr_(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``addr``, in place.

    >>> import jaxgrad
    >>> jaxgrad.ones(1, 2).addr_(jaxgrad.tensor([2.0]), jaxgrad.tensor([1.0, 3.0]))
    tensor([[3., 7.]])
    """
    return _addr(input, vec1, vec2, beta, alpha, inplace=True)


# --- linalg.vecdot, linalg.multi_dot, chain_matmul, aliases --------------------------------------

@declare('linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor', variants='out')
def linalg_vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of ``x`` (conjugated) and ``y`` over ``dim`` (broadcasting the rest):
    ``vdot`` for two vectors, else ``(x.conj() * y).sum(dim)``, as torch composes it.

    >>> import jaxgrad
    >>> jaxgrad.linalg.vecdot(jaxgrad.ones(2, 3), jaxgrad.tensor([1.0, 2.0, 3.0]))
    tensor([6., 6.])
    """
    require_tensors(y)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. "
                           f"Got {_dtypes.scalar_type_name(x.dtype)}")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x "
                           f"of type {_dtypes.scalar_type_name(x.dtype)} and y of type "
                           f"{_dtypes.scalar_type_name(y.dtype)} instead")
    if x.ndim == 1 and y.ndim == 1:
        return vdot(x, y)
    return sum(mul(conj(x), y), dim)


def _multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """torch's multi_dot_impl: 1-d ends as a row/column, the cheapest order of ``mm``s (one
    comparison for three matrices, the matrix-chain order for more), then a ``view``."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    mats, out_shape = list(tensors), []
    for where, index, unsqueezed in (("first", 0, 0), ("last", n - 1, -1)):
        t = tensors[index]
        if t.ndim == 1:
            mats[index] = unsqueeze(t, unsqueezed)
        elif t.ndim == 2:
            out_shape.append(t.shape[0] if index == 0 else t.shape[1])
        else:
            raise RuntimeError(f"multi_dot(): the {where} tensor must be 1D or 2D but got "
                               f"{t.ndim}D")
    for i in range(1, n - 1):
        if tensors[i].ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].ndim}D")
    for i in range(1, n):
        if mats[i].dtype is not mats[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {_dtypes.c_type_name(mats[0].dtype)} and tensor {i} "
                               f"{_dtypes.c_type_name(mats[i].dtype)}")
        if mats[i - 1].shape[-1] != mats[i].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes "
                               f"{sizes_text(tensors[i - 1])} and {sizes_text(tensors[i])} "
                               "cannot be multiplied")
    if n == 2:
        out = mm(mats[0], mats[1])
    elif n == 3:
        a, b, c, d = mats[0].shape[0], mats[1].shape[0], mats[2].shape[0], mats[2].shape[1]
        if a * c * (b + d) > b * d * (a + c):
            out = mm(mats[0], mm(mats[1], mats[2]))
        else:
            out = mm(mm(mats[0], mats[1]), mats[2])
    else:
        out = _chain(mats, _chain_order(mats), 0, n - 1)
    return out.view(out_shape)


def _chain_order(mats: list) -> list:
    """The split points of the cheapest multiplication order (Cormen's matrix-chain order)."""
    n = len(mats)
    p = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain(mats: list, split: list, i: int, j: int) -> Tensor:
    if i == j:
        return mats[i]
    k = split[i][j]
    return mm(_chain(mats, split, i, k), _chain(mats, split, k + 1, j))


@declare('linalg_multi_dot(Tensor[] tensors) -> Tensor', variants='out')
def linalg_multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """The product of two or more matrices in the cheapest order (the first and last may be
    vectors), composed of ``mm`` as torch composes it.

    >>> import jaxgrad
    >>> jaxgrad.linalg.multi_dot([jaxgrad.ones(3), jaxgrad.ones(3, 2), jaxgrad.ones(2)])
    tensor(6.)
    """
    return _multi_dot(tensors)


_CHAIN_MATMUL_WARNING = (
    "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
    "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
    "multiple parameters.")


@declare('chain_matmul(Tensor[] matrices) -> Tensor', variants='function')
def chain_matmul(*matrices: Any) -> Tensor:
    """torch's deprecated ``chain_matmul(*matrices)`` (with its warning, once): a clone of one
    matrix, else ``linalg.multi_dot`` of 2-d tensors.

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     jaxgrad.chain_matmul(jaxgrad.ones(1, 2), jaxgrad.ones(2, 1))
    tensor([[2.]])
    """
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    warn_once_as_jaxgrad(_CHAIN_MATMUL_WARNING)
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        return clone(matrices[0])
    return _multi_dot(matrices)


@declare('linalg_matmul(Tensor self, Tensor other) -> Tensor', variants='out',
         out_name='matmul')
def linalg_matmul(input: Tensor, other: Tensor) -> Tensor:
    """``matmul`` (torch's alias in ``linalg``).

    >>> import jaxgrad
    >>> jaxgrad.linalg.matmul(jaxgrad.ones(2, 3), jaxgrad.ones(3))
    tensor([3., 3.])
    """
    return matmul(input, other)


@declare('linalg_diagonal(Tensor(a) A, *, int offset=0, int dim1=-2, int dim2=-1) -> Tensor(a)',
         variants='')
def linalg_diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``diagonal`` with the last two dims as the default matrix dims (torch's alias).

    >>> import jaxgrad
    >>> jaxgrad.linalg.diagonal(jaxgrad.tensor([[1, 2], [3, 4]]))
    tensor([1, 4])
    """
    return diagonal(A, offset, dim1, dim2)
