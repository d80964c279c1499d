"""``torch.func.functionalize``: the function run on private copies of its tensor arguments, so
that its in-place writes and views touch nothing outside; writes to an argument reach the
tensor passed in at the end, as torch's ``copy_`` back.

jaxgrad's kernels are already functional (JAX arrays are immutable; an in-place op swaps the
array in a storage cell), so there is no program to rewrite: what remains observable is the
aliasing, and that is what this transform keeps out.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

from .._core.grad_mode import _force_original_view_tracking, is_grad_enabled
from .._core.tensor import Tensor
from .._core.transform_stack import stack
from .._engine.dispatch import remake_view
from . import torch_pytree as P

_REMOVE_OPTIONS = ("mutations", "mutations_and_views")


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """``func`` with its mutations and aliasing of its inputs kept inside: it sees copies of its
    tensor arguments (with their autograd history), its results are fresh tensors that alias
    none of them (an argument returned untouched is itself), and each argument it wrote in
    place is written back with ``copy_`` when it returns (torch.func.functionalize).

    >>> import jaxgrad
    >>> from jaxgrad.func import functionalize
    >>> def f(x):
    ...     y = x.view(-1)
    ...     y.add_(1)
    ...     return x * 2
    >>> x = jaxgrad.zeros(2)
    >>> functionalize(f)(x), x
    (tensor([2., 2.]), tensor([1., 1.]))
    """
    if remove not in _REMOVE_OPTIONS:
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for "
            f"remove={remove}. Valid options are:\n"
            "     remove='mutations': all inplace and out= operators will be removed from the "
            "program, and replaced with their out-of-place equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all aliasing operators "
            "{view} will be replaced with their non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        leaves, spec = P.flatten((args, kwargs))
        copies = {i: _private_copy(x) for i, x in enumerate(leaves) if isinstance(x, Tensor)}
        marks = {i: (c._vc.value, c._cell.generation) for i, c in copies.items()}
        inner_args, inner_kwargs = P.unflatten(
            [copies.get(i, x) for i, x in enumerate(leaves)], spec)
        stack.functionalizing += 1
        try:
            with _force_original_view_tracking(True):  # views keep the ops that made them
                out = func(*inner_args, **inner_kwargs)
        finally:
            stack.functionalizing -= 1
        written = {i for i, c in copies.items() if (c._vc.value, c._cell.generation) != marks[i]}
        for i in sorted(written):
            leaves[i].copy_(copies[i])
        results = {id(c): leaves[i] for i, c in copies.items() if i not in written}
        bases = {id(c): leaves[i] for i, c in copies.items() if leaves[i]._layout is None}
        return P.tree_map(lambda o: _result(o, results, bases), out)

    return wrapped


def _result(out: Any, results: dict[int, Tensor], bases: dict[int, Tensor]) -> Any:
    """An output as torch.func's functionalize unwraps it: an argument returned untouched is the
    tensor passed in; a view is remade on its base's result (an argument's view a view of the
    tensor passed in) by its view ops, on the base's final history; any other tensor is a fresh
    one (version 0) with its history. The same tensor returned twice is one result."""
    if not isinstance(out, Tensor):
        return out
    if id(out) not in results:
        base = out._base
        if base is not None and (id(base) in bases or base._layout is None):
            base_result = bases[id(base)] if id(base) in bases else _result(base, results, bases)
            results[id(out)] = remake_view(out, base_result, is_grad_enabled())
        else:
            results[id(out)] = _private_copy(out)
    return results[id(out)]


def _private_copy(t: Tensor) -> Tensor:
    """``t``'s value in a storage of its own, with ``t``'s autograd identity: its grad_fn, or,
    for a leaf, its gradient accumulator (an in-place write to it is refused as on ``t``)."""
    copy = Tensor._make(t._value)
    copy._requires_grad, copy._grad_node, copy._output_nr = (t._requires_grad, t._grad_node,
                                                           t._output_nr)
    copy._inference = t._inference
    if t._requires_grad and t._grad_node is None:
        accumulator = t._grad_accumulator
        if accumulator is not None:  # held by the copy while it lives (the leaf holds it weakly)
            copy._grad_acc = weakref.ref(accumulator)
            copy.__dict__["_functionalize_accumulator"] = accumulator
    return copy
