"""Complex numbers: complex memory seen as real (``view_as_real``, ``real``, ``imag``) and real
memory as complex (``view_as_complex``), torch's conjugate and negative bits (``conj``,
``resolve_conj``, ``resolve_neg``, ``adjoint``/``mH``), and the ops that build complex tensors
(``complex``, ``polar``) or take them apart (``angle``, ``conj_physical``).

The views share their input's memory and version counter, through a lens
(``_core.storage.ReinterpretedStorage``): an in-place change of ``z.real`` changes ``z``, and a
conjugate view reads ``z``'s memory conjugated, as torch's conjugate bit does. Their rows are in
``_ops/views.py`` (``CONJ``, ``NEG_VIEW``, ``VIEW_AS_REAL``, ``VIEW_AS_COMPLEX``); the other rows
are in ``_ops/elementwise.py``.
"""

from __future__ import annotations

import jax.numpy as jnp

from .._core import dtypes as _dtypes
from .._core.tensor import Tensor
from .._engine.dispatch import apply, apply_inplace, apply_view
from .._ops import elementwise as E
from .._ops import views as V
from .opgen import declare
from .shapes import clone, select, transpose

CONJ_VIEW_AS_REAL = (
    "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
    "tensor so you can view it as real, use self.resolve_conj(); however, be warned that the "
    "resulting tensor will NOT alias the original.")


@declare('view_as_real(Tensor(a) self) -> Tensor(a)', variants='function')
def view_as_real(input: Tensor) -> Tensor:
    """A complex tensor's memory as real numbers: a view with a trailing dim of 2 (the real and
    imaginary parts), sharing storage and version counter.

    >>> import jaxgrad
    >>> z = jaxgrad.tensor([1 + 2j, 3 - 4j])
    >>> r = jaxgrad.view_as_real(z); _ = r[0, 1].fill_(7.0)
    >>> r, z
    (tensor([[ 1.,  7.],
            [ 3., -4.]]), tensor([1.+7.j, 3.-4.j]))
    """
    if not input.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if input.is_conj():
        raise RuntimeError(CONJ_VIEW_AS_REAL)
    return apply_view(V.VIEW_AS_REAL, V.as_real_geometry, input)


@declare('view_as_complex(Tensor(a) self) -> Tensor(a)', variants='function')
def view_as_complex(input: Tensor) -> Tensor:
    """A real tensor whose last dim is 2 (and has stride 1) seen as complex numbers: a view
    sharing its storage and version counter.

    >>> import jaxgrad
    >>> jaxgrad.view_as_complex(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([1.+2.j, 3.+4.j])
    """
    dtype = input.dtype
    if dtype not in (_dtypes.float16, _dtypes.float32, _dtypes.float64):
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           "tensors, but got a tensor of scalar type: "
                           f"{_dtypes.scalar_type_name(dtype)}")
    if dtype is _dtypes.float16:
        raise NotImplementedError("view_as_complex of a half tensor: JAX has no complex32")
    if input.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    layout = input._geometry()
    if layout.strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in layout.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if layout.offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return apply_view(V.VIEW_AS_COMPLEX, V.as_complex_geometry, input)


@declare('real(Tensor(a) self) -> Tensor(a)', variants='function')
def real(input: Tensor) -> Tensor:
    """The real parts of a complex tensor as a view (``view_as_real(input)[..., 0]``); a real
    tensor itself.

    >>> import jaxgrad
    >>> z = jaxgrad.tensor([1 + 2j]); _ = z.real.mul_(3)
    >>> z
    tensor([3.+2.j])
    """
    if not input.is_complex():
        return input
    parts = view_as_real(_conj(input) if input.is_conj() else input)
    return select(parts, -1, 0)


@declare('imag(Tensor(a) self) -> Tensor(a)', variants='function')
def imag(input: Tensor) -> Tensor:
    """The imaginary parts of a complex tensor as a view (``view_as_real(input)[..., 1]``; of a
    conjugate view, a negative view of its base's).

    >>> import jaxgrad
    >>> jaxgrad.imag(jaxgrad.tensor([1 + 2j, 3 - 4j]))
    tensor([ 2., -4.])
    """
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    if input.is_conj():
        parts = apply_view(V.NEG_VIEW, V.alias_geometry, view_as_real(_conj(input)))
    else:
        parts = view_as_real(input)
    return select(parts, -1, 1)


def _conj(input: Tensor) -> Tensor:
    """torch's ``_conj``: a view with the conjugate bit flipped (ConjBackward0)."""
    return apply_view(V.CONJ, V.alias_geometry, input)


@declare('conj(Tensor(a) self) -> Tensor(a)')
def conj(input: Tensor) -> Tensor:
    """The complex conjugate as a view (torch's conjugate bit: ``is_conj()`` is True and the
    values are conjugated when read); a real tensor itself.

    >>> import jaxgrad
    >>> z = jaxgrad.tensor([1 + 2j]); c = jaxgrad.conj(z)
    >>> c, c.is_conj(), c.data_ptr() == z.data_ptr()
    (tensor([1.-2.j]), True, True)
    """
    return _conj(input) if input.is_complex() else input


@declare('resolve_conj(Tensor(a) self) -> Tensor(a)')
def resolve_conj(input: Tensor) -> Tensor:
    """A conjugate view's values in memory of their own (a copy without the bit); any other
    tensor itself.

    >>> import jaxgrad
    >>> c = jaxgrad.tensor([1 + 2j]).conj()
    >>> r = jaxgrad.resolve_conj(c); r, r.is_conj()
    (tensor([1.-2.j]), False)
    """
    return clone(input) if input.is_conj() else input


@declare('resolve_neg(Tensor(a) self) -> Tensor(a)')
def resolve_neg(input: Tensor) -> Tensor:
    """A negative view's values in memory of their own; any other tensor itself.

    >>> import jaxgrad
    >>> n = jaxgrad.tensor([1 + 2j]).conj().imag
    >>> jaxgrad.resolve_neg(n), jaxgrad.resolve_neg(n).is_neg()
    (tensor([-2.]), False)
    """
    return clone(input) if input.is_neg() else input


@declare('is_conj(Tensor self) -> bool', variants='function')
def is_conj(input: Tensor) -> bool:
    """Whether ``input`` is a conjugate view (see :func:`conj`).

    >>> import jaxgrad
    >>> jaxgrad.is_conj(jaxgrad.tensor([1j]).conj())
    True
    """
    return input.is_conj()


@declare('is_complex(Tensor self) -> bool', variants='function')
def is_complex(input: Tensor) -> bool:
    """Whether ``input``'s dtype is complex (``complex32``, ``complex64`` or ``complex128``).

    >>> import jaxgrad
    >>> jaxgrad.is_complex(jaxgrad.tensor([1j])), jaxgrad.is_complex(jaxgrad.tensor([1.0]))
    (True, False)
    """
    return input.is_complex()


@declare('is_neg(Tensor self) -> bool', variants='function')
def is_neg(input: Tensor) -> bool:
    """Whether ``input`` is a negative view (the ``imag`` of a conjugate view).

    >>> import jaxgrad
    >>> jaxgrad.is_neg(jaxgrad.tensor([1j]))
    False
    """
    return input.is_neg()


@declare('conj_physical(Tensor self) -> Tensor', variants='function method out')
def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate computed into new memory (ConjPhysicalBackward0); a real tensor
    itself.

    >>> import jaxgrad
    >>> c = jaxgrad.conj_physical(jaxgrad.tensor([1 + 2j])); c, c.is_conj()
    (tensor([1.-2.j]), False)
    """
    return apply(E.CONJ_PHYSICAL, input) if input.is_complex() else input


@declare('conj_physical_(Tensor(a!) self) -> Tensor(a!)')
def conj_physical_(input: Tensor) -> Tensor:
    """:func:`conj_physical` in place (a real tensor is left as it is).

    >>> import jaxgrad
    >>> jaxgrad.tensor([1 + 2j]).conj_physical_()
    tensor([1.-2.j])
    """
    return apply_inplace(E.CONJ_PHYSICAL, input) if input.is_complex() else input


@declare('adjoint(Tensor(a) self) -> Tensor(a)')
def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims, as a view (``mH``).

    >>> import jaxgrad
    >>> jaxgrad.adjoint(jaxgrad.tensor([[1 + 1j, 2.0]]))
    tensor([[1.-1.j],
            [2.-0.j]])
    """
    if input.ndim < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor.")
    return conj(transpose(input, -2, -1))


def _real_floating(name: str, a: Tensor, b: Tensor) -> None:
    """torch's checks of ``complex``/``polar``'s operands: one dtype, half/float/double."""
    floating = (_dtypes.float16, _dtypes.float32, _dtypes.float64)
    first, second = _dtypes.scalar_type_name(a.dtype), _dtypes.scalar_type_name(b.dtype)
    if a.dtype not in floating or b.dtype not in floating:
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{first} and {second}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {first} but got scalar type "
                           f"{second} for second argument")
    if a.dtype is _dtypes.float16:
        raise NotImplementedError(f"{name} of half tensors: JAX has no complex32")


@declare('complex(Tensor real, Tensor imag) -> Tensor', variants='function out')
def complex(real: Tensor, imag: Tensor) -> Tensor:
    """The complex tensor ``real + imag * 1j`` (broadcast; both float or both double).

    >>> import jaxgrad
    >>> jaxgrad.complex(jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([3.0, 4.0]))
    tensor([1.+3.j, 2.+4.j])
    """
    _real_floating("complex", real, imag)
    return apply(E.COMPLEX, real, imag)


@declare('polar(Tensor abs, Tensor angle) -> Tensor', variants='function out')
def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """The complex tensor with absolute values ``abs`` and angles ``angle``:
    ``abs * (cos(angle) + sin(angle) * 1j)``.

    >>> import math
    >>> import jaxgrad
    >>> jaxgrad.polar(jaxgrad.tensor([2.0]), jaxgrad.tensor([math.pi / 2])).imag
    tensor([2.])
    """
    _real_floating("polar", abs, angle)
    return apply(E.POLAR, abs, angle)


@declare('isreal(Tensor self) -> Tensor')
def isreal(input: Tensor) -> Tensor:
    """Whether each element is real: everywhere for a real dtype, where the imaginary part is 0
    for a complex one (a bool tensor, no history).

    >>> import jaxgrad
    >>> jaxgrad.isreal(jaxgrad.tensor([1 + 0j, 1j]))
    tensor([ True, False])
    """
    if not input.is_complex():
        return Tensor._make(jnp.ones(tuple(input.shape), jnp.bool_))
    return imag(input) == 0
