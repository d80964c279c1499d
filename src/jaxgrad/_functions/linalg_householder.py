"""``geqrf`` and ``ormqr``: QR in LAPACK's compact form and products with its ``Q``, on the rows
of ``_ops/linalg_householder.py``, with torch's checks in torch's order and its messages."""

from __future__ import annotations

from typing import Any

from .._core import dtypes as _dtypes
from .._core import return_types
from .._core.tensor import Tensor
from .._engine.dispatch import apply
from .._ops import linalg_householder as HH
from .linalg_triangular import check_kernel_dtype
from .opgen import declare


@declare("geqrf(Tensor self) -> (Tensor a, Tensor tau)", variants="function method")
def geqrf(input: Tensor) -> Any:
    """LAPACK's geqrf: ``(a, tau)``, ``R`` on and above the diagonal of ``a``, the Householder
    vectors of ``Q`` below it with their scalars ``tau`` (use them with ``ormqr`` or
    ``linalg.householder_product``); torch has no derivative for it (GeqrfBackward0 raises).

    >>> import jaxgrad
    >>> a, tau = jaxgrad.geqrf(jaxgrad.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> a.diagonal().abs()
    tensor([5.0000, 0.4000])
    """
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    check_kernel_dtype(input, "geqrf_cpu")
    return return_types.geqrf(*apply(HH.GEQRF, input))


def _check_ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool) -> None:
    """torch's ormqr checks, in its order."""
    name = "torch.ormqr"
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if other.ndim < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if tau.shape[-1] != min(other.shape[side], input.shape[-1]):
        raise RuntimeError(
            f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1])"
        )
    if input.ndim - tau.ndim != 1:
        raise RuntimeError(
            f"{name}: Expected tau to have one dimension less than input, but got "
            f"tau.ndim equal to {tau.ndim} and input.ndim is equal to {input.ndim}"
        )
    if input.ndim != other.ndim:
        raise RuntimeError(
            f"{name}: Expected other to have the same number of dimensions as "
            f"input, but got other.ndim equal to {other.ndim} and input.ndim is "
            f"equal to {input.ndim}"
        )
    batch = tuple(input.shape[:-2])
    if tuple(tau.shape[:-1]) != batch:
        raise RuntimeError(
            f"{name}: Expected batch dimensions of tau to be equal to "
            f"input.shape[:-2], but got {list(tau.shape[:-1])}"
        )
    if tuple(other.shape[:-2]) != batch:
        raise RuntimeError(
            f"{name}: Expected batch dimensions of other to be equal to "
            f"input.shape[:-2], but got {list(other.shape[:-2])}"
        )
    for what, t in (("tau", tau), ("other", other)):
        if t.dtype is not input.dtype:
            raise RuntimeError(
                f"{name}: Expected input and {what} to have the same dtype, but input has dtype"
                f"{_dtypes.scalar_type_name(input.dtype)} and {what} has dtype "
                f"{_dtypes.scalar_type_name(t.dtype)}"
            )
    check_kernel_dtype(input, "ormqr_cpu")


@declare(
    "ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, "
    "bool transpose=False) -> Tensor",
    variants="function method out",
)
def ormqr(
    input: Tensor, input2: Tensor, input3: Tensor, left: bool = True, transpose: bool = False
) -> Tensor:
    """The product of ``Q`` (from ``geqrf``'s ``(input, input2)``: ``Q = H_1 ... H_k``), or of
    ``Q^H`` with ``transpose``, with ``input3``: ``op(Q) @ input3`` (``left``) or ``input3 @
    op(Q)``, without forming ``Q``; OrmqrBackward0.

    >>> import jaxgrad
    >>> A = jaxgrad.tensor([[3.0, 1.0], [4.0, 2.0]])
    >>> a, tau = jaxgrad.geqrf(A)
    >>> R = a.triu()
    >>> jaxgrad.ormqr(a, tau, R)
    tensor([[3., 1.],
            [4., 2.]])
    """
    _check_ormqr(input, input2, input3, left)
    return apply(HH.ORMQR, input, input2, input3, left=bool(left), transpose=bool(transpose))
