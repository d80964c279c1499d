"""Helpers of the distributions (torch's ``torch.distributions.utils``): broadcasting
parameters, probabilities to logits and back, and ``lazy_property``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import update_wrapper
from typing import Any, Final, Generic, TypeVar

from . import _functions as T
from ._functions import Tensor

euler_constant: Final[float] = 0.57721566490153286060  # Euler-Mascheroni constant

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits", "tril_matrix_to_vec", "vec_to_tril_matrix"]


# what torch.distributions counts as a number (``torch.types._Number``)
NUMBER_TYPES = (int, float, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, NUMBER_TYPES)


def broadcast_all(*values: Tensor | float) -> tuple[Tensor, ...]:
    """Broadcast numbers and tensors together: numbers become tensors of the first tensor's
    dtype (the default dtype when all are numbers).

    >>> import jaxgrad
    >>> from jaxgrad.distributions.utils import broadcast_all
    >>> a, b = broadcast_all(jaxgrad.zeros(2, dtype=jaxgrad.float64), 1.0)
    >>> b
    tensor([1., 1.], dtype=jaxgrad.float64)
    """
    if not all(isinstance(v, Tensor) or _is_number(v) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "jaxgrad.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        first = next((v for v in values if isinstance(v, Tensor)), None)
        options: dict[str, Any] = ({"dtype": T.get_default_dtype()} if first is None else
                                   {"dtype": first.dtype, "device": first.device})
        values = tuple(v if isinstance(v, Tensor) else T.tensor(v, **options) for v in values)
    return tuple(T.broadcast_tensors(*values))


def _standard_normal(shape: Sequence[int], dtype: Any, device: Any) -> Tensor:
    return T.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits: a sigmoid (``is_binary``) or a softmax over the last dim.

    >>> import jaxgrad
    >>> from jaxgrad.distributions.utils import logits_to_probs
    >>> logits_to_probs(jaxgrad.tensor([0.0, 0.0]))
    tensor([0.5000, 0.5000])
    """
    if is_binary:
        return T.sigmoid(logits)
    return T.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped into ``[eps, 1 - eps]`` (``eps`` of its dtype).

    >>> import jaxgrad
    >>> from jaxgrad.distributions.utils import clamp_probs
    >>> clamp_probs(jaxgrad.tensor([0.0, 1.0])).tolist()[0] > 0
    True
    """
    eps = T.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from (clamped) probabilities: ``log p - log1p(-p)`` when ``is_binary``, else
    ``log p``.

    >>> import jaxgrad
    >>> from jaxgrad.distributions.utils import probs_to_logits
    >>> probs_to_logits(jaxgrad.tensor([0.5]), is_binary=True)
    tensor([0.])
    """
    clamped = clamp_probs(probs)
    if is_binary:
        return T.log(clamped) - T.log1p(-clamped)
    return T.log(clamped)


Inst = TypeVar("Inst", contravariant=True)
Value = TypeVar("Value", covariant=True)


class lazy_property(Generic[Inst, Value]):
    """A property computed (with grad enabled) at its first read, then stored on the instance
    as a plain attribute; read on the class, it is a property (for documentation tools).

    >>> from jaxgrad.distributions.utils import lazy_property
    >>> class A:
    ...     @lazy_property
    ...     def x(self):
    ...         return 3
    >>> a = A(); a.x, "x" in a.__dict__
    (3, True)
    """

    def __init__(self, wrapped: Callable[[Inst], Value]) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with T.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):  # type: ignore[misc]
    """A lazy_property read on its class: a property too, so that documentation tools see
    one; still recognised as a lazy_property (validation skips unset lazy arguments)."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower triangle (from diagonal ``diag``) of the last two dims, row by row.

    >>> import jaxgrad
    >>> from jaxgrad.distributions.utils import tril_matrix_to_vec
    >>> tril_matrix_to_vec(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([1., 3., 4.])
    """
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    arange = T.arange(n, device=mat.device)
    mask = arange < arange.view(-1, 1) + (diag + 1)
    return mat[..., mask]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of :func:`tril_matrix_to_vec`: a square matrix, zero above diagonal
    ``diag``.

    >>> import jaxgrad
    >>> from jaxgrad.distributions.utils import vec_to_tril_matrix
    >>> vec_to_tril_matrix(jaxgrad.tensor([1.0, 3.0, 4.0]))
    tensor([[1., 0.],
            [3., 4.]])
    """
    k = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * k + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > T.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {k} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + T.Size((n, n)))
    arange = T.arange(n, device=vec.device)
    mask = arange < arange.view(-1, 1) + (diag + 1)
    mat[..., mask] = vec
    return mat
