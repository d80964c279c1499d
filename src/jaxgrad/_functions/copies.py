"""The ``*_copy`` ops (``transpose_copy``, ``split_copy``...): a view op's result as a fresh,
contiguous tensor that shares nothing with its input, recorded under the view's node name with
``_copy`` appended (``TransposeBackward0_copy``); ``detach``/``detach_`` as functions; and
``as_strided_scatter``.

Every ``*_copy`` is declared from one table (:data:`_VIEWS`: its schema and the view function it
copies): the view function runs on an ``arange`` probe, which gives torch's argument errors,
the node name of the overload it took (``SqueezeBackward1``) and, in the probe's values, the
flat input index of every element of the result; one row per node (``_ops.views.copy_row``)
gathers those elements and scatter-adds the gradient back.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from .._core.grad_mode import enable_grad, is_grad_enabled
from .._core.tensor import Tensor, _wrap_dim
from .._engine.dispatch import apply
from .._ops import views as V
from . import complex_numbers, joins, shapes
from .opgen import declare


def _slice(input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
           step: int = 1) -> Tensor:
    return shapes.narrow_slice(input, _wrap_dim(dim, input.ndim), start, end, step)


def _expand(input: Tensor, size: Any, *, implicit: bool = False) -> Tensor:
    return shapes.expand(input, size)


def _split(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    return joins.split(input, split_size, dim)


# name -> (torch's schema, the view function it copies, a doctest call and its output)
_VIEWS: dict[str, tuple[str, Callable, str, str]] = {
    "as_strided_copy": (
        "as_strided_copy(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None)"
        " -> Tensor", shapes.as_strided,
        "jaxgrad.as_strided_copy(jaxgrad.arange(4), (2, 2), (1, 2))",
        "tensor([[0, 2],\n            [1, 3]])"),
    "diagonal_copy": (
        "diagonal_copy(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor",
        shapes.diagonal, "jaxgrad.diagonal_copy(jaxgrad.arange(4).reshape(2, 2))",
        "tensor([0, 3])"),
    "expand_copy": (
        "expand_copy(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor", _expand,
        "jaxgrad.expand_copy(jaxgrad.arange(2), (2, 2))",
        "tensor([[0, 1],\n            [0, 1]])"),
    "permute_copy": (
        "permute_copy(Tensor self, int[] dims) -> Tensor", shapes.permute,
        "jaxgrad.permute_copy(jaxgrad.arange(4).reshape(2, 2), (1, 0))",
        "tensor([[0, 2],\n            [1, 3]])"),
    "select_copy": (
        "select_copy.int(Tensor self, int dim, SymInt index) -> Tensor", shapes.select,
        "jaxgrad.select_copy(jaxgrad.arange(4).reshape(2, 2), 1, 0)", "tensor([0, 2])"),
    "slice_copy": (
        "slice_copy.Tensor(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, "
        "SymInt step=1) -> Tensor", _slice, "jaxgrad.slice_copy(jaxgrad.arange(5), 0, 1, 5, 2)",
        "tensor([1, 3])"),
    "split_copy": (
        "split_copy.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]", _split,
        "jaxgrad.split_copy(jaxgrad.arange(3), 2)", "(tensor([0, 1]), tensor([2]))"),
    "split_with_sizes_copy": (
        "split_with_sizes_copy(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]",
        joins.split_with_sizes, "jaxgrad.split_with_sizes_copy(jaxgrad.arange(3), [1, 2])",
        "(tensor([0]), tensor([1, 2]))"),
    "squeeze_copy": (
        "squeeze_copy.dims(Tensor self, int[]? dim=None) -> Tensor", shapes.squeeze,
        "jaxgrad.squeeze_copy(jaxgrad.zeros(2, 1)).shape", "jaxgrad.Size([2])"),
    "t_copy": (
        "t_copy(Tensor self) -> Tensor", shapes.t,
        "jaxgrad.t_copy(jaxgrad.arange(4).reshape(2, 2))",
        "tensor([[0, 2],\n            [1, 3]])"),
    "transpose_copy": (
        "transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor", shapes.transpose,
        "jaxgrad.transpose_copy(jaxgrad.arange(4).reshape(2, 2), 0, 1).is_contiguous()",
        "True"),
    "unbind_copy": (
        "unbind_copy.int(Tensor self, int dim=0) -> Tensor[]", joins.unbind,
        "jaxgrad.unbind_copy(jaxgrad.arange(4).reshape(2, 2), 1)",
        "(tensor([0, 2]), tensor([1, 3]))"),
    "unfold_copy": (
        "unfold_copy(Tensor self, int dimension, int size, int step) -> Tensor", shapes.unfold,
        "jaxgrad.unfold_copy(jaxgrad.arange(4), 0, 2, 2)",
        "tensor([[0, 1],\n            [2, 3]])"),
    "unsqueeze_copy": (
        "unsqueeze_copy(Tensor self, int dim) -> Tensor", shapes.unsqueeze,
        "jaxgrad.unsqueeze_copy(jaxgrad.arange(2), 0)", "tensor([[0, 1]])"),
    "view_copy": (
        "view_copy(Tensor self, SymInt[] size) -> Tensor", shapes.view,
        "jaxgrad.view_copy(jaxgrad.arange(4), (2, 2))",
        "tensor([[0, 1],\n            [2, 3]])"),
}


def _copy_of(view: Callable, input: Tensor, args: tuple, kwargs: dict) -> Any:
    """``view(input, ...)`` as fresh tensors under the view's node name + ``_copy``."""
    if not isinstance(input, Tensor):
        raise TypeError("input is not a Tensor")  # (replaced by torch's argument error)
    n = input.numel()
    with enable_grad():
        probe = Tensor._make(jnp.arange(n, dtype=jnp.float64).reshape(tuple(input.shape)),
                             requires_grad=True)
        out = view(probe, *args, **kwargs)
    pieces = isinstance(out, (tuple, list))
    outs = tuple(out) if pieces else (out,)
    node = type(outs[0].grad_fn).__name__ if outs and outs[0].grad_fn is not None else None
    if node is None:
        node = {"_split": "SplitBackward0", "split_with_sizes": "SplitWithSizesBackward0",
                "unbind": "UnbindBackward0"}.get(view.__name__, "AliasBackward0")
    index = jnp.concatenate([jnp.asarray(o.detach()._value).reshape(-1) for o in outs]
                            ) if outs else jnp.zeros((0,))
    result = apply(V.copy_row(node, pieces), input,
                   aux=(Tensor._make(index.astype(jnp.int64)),),
                   shapes=tuple(tuple(o.shape) for o in outs))
    if pieces:
        return tuple(result) if isinstance(result, (tuple, list)) else (result,)
    return result


def _declare_copy(name: str, schema: str, view: Callable, call: str, output: str) -> Callable:
    def copy(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        return _copy_of(view, input, args, kwargs)

    copy.__name__ = copy.__qualname__ = name
    params = list(inspect.signature(view).parameters.values())
    copy.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [params[0].replace(name="input"), *params[1:]], return_annotation="Any")
    copy.__doc__ = (f"``{view.__name__}`` of ``input`` as a new tensor (contiguous, sharing no "
                    f"memory with ``input``), recorded as torch records it.\n\n"
                    f"    >>> import jaxgrad\n    >>> {call}\n    {output}\n")
    return declare(schema, variants="function")(copy)


globals().update({name: _declare_copy(name, *row) for name, row in _VIEWS.items()})


@declare("alias_copy(Tensor self) -> Tensor", variants="function")
def alias_copy(input: Tensor) -> Tensor:
    """A copy of ``input`` (``AliasBackward0_copy``).

    >>> import jaxgrad
    >>> jaxgrad.alias_copy(jaxgrad.tensor([1.0, 2.0]))
    tensor([1., 2.])
    """
    return apply(V.ALIAS_COPY, input)


@declare("detach_copy(Tensor self) -> Tensor", variants="function")
def detach_copy(input: Tensor) -> Tensor:
    """A copy of ``input`` that, as torch's, still records a node: one whose backward raises
    (torch has no derivative for it).

    >>> import jaxgrad
    >>> jaxgrad.detach_copy(jaxgrad.ones(2, requires_grad=True)).grad_fn.name()
    'NotImplemented'
    """
    return apply(V.DETACH_COPY, input)


@declare("view_as_real_copy(Tensor self) -> Tensor", variants="function")
def view_as_real_copy(input: Tensor) -> Tensor:
    """``view_as_real`` of ``input`` as a new tensor (``ViewAsRealBackward0_copy``).

    >>> import jaxgrad
    >>> jaxgrad.view_as_real_copy(jaxgrad.tensor([1 + 2j]))
    tensor([[1., 2.]])
    """
    complex_numbers.view_as_real(input.detach())  # (torch's errors)
    return apply(V.VIEW_AS_REAL_COPY, input)


@declare("view_as_complex_copy(Tensor self) -> Tensor", variants="function")
def view_as_complex_copy(input: Tensor) -> Tensor:
    """``view_as_complex`` of ``input`` as a new tensor; torch records no gradient for it (it
    refuses an input that requires grad).

    >>> import jaxgrad
    >>> jaxgrad.view_as_complex_copy(jaxgrad.tensor([[1.0, 2.0]]))
    tensor([1.+2.j])
    """
    if is_grad_enabled() and input.requires_grad:
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation for "
                           "outputs with complex dtype.")
    return shapes.clone(complex_numbers.view_as_complex(input))


@declare("detach(Tensor(a) self) -> Tensor(a)", variants="function")
def detach(input: Tensor) -> Tensor:
    """``input.detach()``: the same storage and version counter, no history.

    >>> import jaxgrad
    >>> jaxgrad.detach(jaxgrad.ones(2, requires_grad=True)).requires_grad
    False
    """
    return input.detach()


@declare("detach_(Tensor(a!) self) -> Tensor(a!)", variants="function")
def detach_(input: Tensor) -> Tensor:
    """``input.detach_()``: ``input`` loses its history, in place.

    >>> import jaxgrad
    >>> t = jaxgrad.ones(2, requires_grad=True) * 2
    >>> jaxgrad.detach_(t) is t, t.grad_fn
    (True, None)
    """
    return input.detach_()


@declare("as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, "
         "SymInt? storage_offset=None) -> Tensor")
def as_strided_scatter(input: Tensor, src: Tensor, size: Any, stride: Any,
                       storage_offset: int | None = None) -> Tensor:
    """A copy of ``input`` with ``src`` written where ``input.as_strided(size, stride,
    storage_offset)`` would read (``AsStridedScatterBackward0``).

    >>> import jaxgrad
    >>> jaxgrad.zeros(4).as_strided_scatter(jaxgrad.ones(2), (2,), (2,), 1)
    tensor([0., 1., 0., 1.])
    """
    if not isinstance(src, Tensor):
        raise TypeError("src is not a Tensor")
    probe = shapes.as_strided(Tensor._make(jnp.arange(input.numel(), dtype=jnp.int64).reshape(
        tuple(input.shape))), size, stride, storage_offset)
    if tuple(probe.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(probe.shape)}")
    return apply(V.AS_STRIDED_SCATTER_OP, input, src, layout_out=probe._geometry())
