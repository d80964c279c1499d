"""The special functions: the rows of ``_ops/special.py`` generated whole (``i0``, ``sinc``,
``logit``, ``polygamma``, ``mvlgamma`` and ``torch.special``'s own ``special_*`` ops), and the
``special_*`` functions written on top of rows: the ones with a number overload (``xlog1py``,
``zeta``), the ones torch composes (``ndtr``) and the ones that only rename an op with other
defaults (``round``, ``softmax``, ``log_softmax``, ``logsumexp``); and the non-differentiable
Bessel functions and orthogonal polynomials (``_ops/special_bessel.py``,
``_ops/special_polynomials.py``), whose ``out=`` torch allows on inputs that require grad.
``jaxgrad.special`` exports them under torch's short names.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from .._core.tensor import Tensor
from .._core.typename import type_name
from .._engine.dispatch import apply
from .._ops import scalar_overloads as _scalar_ops
from .._ops import special as S
from .._ops import special_bessel as _bessel
from .._ops import special_polynomials as _polynomials
from .._ops._table import Op
from .arguments import broadcast_operands, number_or_tensor, require_tensors
from .opgen import declare, generate
from .pointwise import _promote_with_scalars, _scalar_or_tensor, erf
from .pointwise import round as _round
from .reductions import log_softmax as _log_softmax
from .reductions import logsumexp as _logsumexp
from .reductions import softmax as _softmax

_GENERATED = generate(S)
globals().update(_GENERATED)


def _number_first(row: Any, tensor_row: Any, scalar_self_row: Any, input: Any,
                  other: Any) -> Tensor:
    """torch's three overloads of a binary special function: Tensor-Tensor, Scalar self,
    Scalar other (their nodes end in 0, 1, 2)."""
    if not isinstance(input, Tensor):
        require_tensors(other)
        input = number_or_tensor(input)
        return apply(scalar_self_row, _promote_with_scalars(other, input), aux=(input,))
    return _scalar_or_tensor(row, tensor_row, input, other)


@declare('special_xlog1py(Tensor self, Tensor other) -> Tensor', numbers_as_tensors=True,
         variants='out')
def special_xlog1py(input: Any, other: Any) -> Tensor:
    """``input * log1p(other)``: 0 where ``input`` is 0 (unless ``other`` is NaN); either
    may be a number (SpecialXlog1PyBackward1/2).

    >>> import jaxgrad
    >>> jaxgrad.special.xlog1py(jaxgrad.tensor([0.0, 2.0]), jaxgrad.tensor([-1.0, 1.0]))
    tensor([0.0000, 1.3863])
    """
    return _number_first(S.SPECIAL_XLOG1PY_SCALAR_OTHER, S.SPECIAL_XLOG1PY,
                         S.SPECIAL_XLOG1PY_SCALAR_SELF, input, other)


@declare('special_zeta(Tensor self, Tensor other) -> Tensor', numbers_as_tensors=True,
         variants='out')
def special_zeta(input: Any, other: Any) -> Tensor:
    """The Hurwitz zeta function ``sum_k (k + other) ** -input``, differentiable in ``other``
    only (the derivative for ``input`` raises torch's NotImplementedError); either may be a
    number.

    >>> import jaxgrad
    >>> jaxgrad.special.zeta(jaxgrad.tensor([2.0, 4.0]), 1.0)
    tensor([1.6449, 1.0823])
    """
    return _number_first(S.SPECIAL_ZETA_SCALAR_OTHER, S.SPECIAL_ZETA,
                         S.SPECIAL_ZETA_SCALAR_SELF, input, other)


@declare('special_ndtr(Tensor self) -> Tensor', variants='out')
def special_ndtr(input: Tensor) -> Tensor:
    """The standard normal distribution function, composed as torch composes it:
    ``(1 + erf(x / sqrt(2))) * 0.5``.

    >>> import jaxgrad
    >>> jaxgrad.special.ndtr(jaxgrad.tensor([0.0, 1.0]))
    tensor([0.5000, 0.8413])
    """
    half_sqrt = math.sqrt(0.5)
    scaled = apply(_scalar_ops.MUL_SCALAR, _promote_with_scalars(input, half_sqrt),
                   aux=(half_sqrt,))
    return apply(_scalar_ops.MUL_SCALAR, apply(_scalar_ops.ADD_SCALAR, erf(scaled),
                                               aux=(1, 1)), aux=(0.5,))


@declare('special_round(Tensor self, *, int decimals=0) -> Tensor', variants='out')
def special_round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """``round`` with ``decimals`` 0 by default (RoundBackward1).

    >>> import jaxgrad
    >>> jaxgrad.special.round(jaxgrad.tensor([0.5, 1.26]), decimals=1)
    tensor([0.5000, 1.3000])
    """
    return _round(input, decimals=decimals)


@declare('special_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor',
         variants='')
def special_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``softmax``, under torch.special's name.

    >>> import jaxgrad
    >>> jaxgrad.special.softmax(jaxgrad.tensor([0.0, 0.0]), 0)
    tensor([0.5000, 0.5000])
    """
    return _softmax(input, dim, dtype)


@declare('special_log_softmax(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor',
         variants='')
def special_log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """``log_softmax``, under torch.special's name (``dtype`` by keyword only).

    >>> import jaxgrad
    >>> jaxgrad.special.log_softmax(jaxgrad.tensor([0.0, 0.0]), 0)
    tensor([-0.6931, -0.6931])
    """
    return _log_softmax(input, dim, dtype)


@declare('special_logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor',
         variants='')
def special_logsumexp(input: Tensor, dim: Any, keepdim: bool = False, *,
                      out: Tensor | None = None) -> Tensor:
    """``logsumexp``, under torch.special's name (``out=`` is logsumexp's).

    >>> import jaxgrad
    >>> jaxgrad.special.logsumexp(jaxgrad.tensor([[0.0, 0.0]]), 1)
    tensor([0.6931])
    """
    return _logsumexp(input, dim, keepdim, out=out)


def polygamma_method(self: Tensor, n: int) -> Tensor:
    """``Tensor.polygamma(n)``: ``polygamma(n, self)`` (torch's method takes ``n`` after the
    tensor).

    >>> import jaxgrad
    >>> jaxgrad.tensor([1.0]).polygamma(1)
    tensor([1.6449])
    """
    return _GENERATED["polygamma"](n, self)


# --- Bessel functions and orthogonal polynomials (non-differentiable) ---------------------------

def _bessel_function(row: Any) -> Any:
    """``jaxgrad.special.<name>(input, *, out=None)`` of a one-tensor row (its parameter is
    ``input`` or ``x``, as torch's schema names it)."""
    if row.schema.params[0].python_name == "x":
        def impl(x: Tensor) -> Tensor:
            return apply(row, x)
    else:
        def impl(input: Tensor) -> Tensor:
            return apply(row, input)
    impl.__name__ = impl.__qualname__ = row.name
    impl.__doc__ = row.doc
    return declare(str(row.schema), variants="out", differentiable=False)(impl)


def _is_number(value: Any) -> bool:
    return isinstance(value, (bool, int, float, complex, np.number, np.bool_))


def _polynomial(rows: Any, x: Any, n: Any, out: Any) -> Tensor:
    """torch's three overloads: Tensor x and n, a number x, a number n."""
    if isinstance(x, Tensor) and isinstance(n, Tensor):
        broadcast_operands(x, n)
        return apply(rows.tensor, x, n)
    if isinstance(n, Tensor) and _is_number(x):
        x = number_or_tensor(x)
        return apply(rows.scalar_x, _promote_with_scalars(n, x), aux=(x,))
    if isinstance(x, Tensor) and _is_number(n):
        n = number_or_tensor(n)
        return apply(rows.scalar_n, _promote_with_scalars(x, n), aux=(n,))
    raise _invalid_combination(rows.name, x, n, out)


def _invalid_combination(name: str, x: Any, n: Any, out: Any) -> TypeError:
    """torch's parser error for arguments that fit none of a polynomial's overloads."""
    got = ", ".join([*("Tensor" if isinstance(v, Tensor) else type_name(v) for v in (x, n)),
                     *([] if out is None else [f"out={type_name(out)}"])])
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({got}), but "
        "expected one of:\n * (Tensor x, Tensor n, *, Tensor out = None)\n"
        " * (Number x, Tensor n, *, Tensor out = None)\n"
        " * (Tensor x, Number n, *, Tensor out = None)\n")


def _polynomial_function(rows: Any) -> Any:
    """``jaxgrad.special.<name>(x, n, *, out=None)``: x or n may be a number."""

    def impl(x: Any, n: Any) -> Tensor:
        return _polynomial(rows, x, n, None)

    impl.__name__ = impl.__qualname__ = rows.name
    impl.__doc__ = rows.doc
    function = declare(str(rows.tensor.schema), variants="out", numbers_as_tensors=True,
                       differentiable=False)(impl)

    def polynomial(x: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
        if out is not None and not isinstance(out, Tensor):  # torch's overload error
            raise _invalid_combination(rows.name, x, n, out)
        return function(x, n, out=out)

    return functools.wraps(function)(polynomial)


BESSEL = {row.name: _bessel_function(row) for row in vars(_bessel).values()
          if isinstance(row, Op)}
POLYNOMIALS = {rows.name: _polynomial_function(rows) for rows in _polynomials.POLYNOMIALS}
