"""The JAX transformations of jaxgrad code active on this thread (layer 0: no jaxgrad imports).

``jaxgrad.func``'s transforms and the traced backward of ``compile(model)`` push their kind here
while JAX traces the function; ``autograd.Function.apply`` reads the stack to route its own
``backward``/``jvp`` through the transform (Note [Function under a transform] in
``_autograd/function.py``).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import jax.numpy as jnp

from .storage import new_birth_mark

REVERSE_KINDS = ("grad", "eager")  # functorch reverse mode; the outer graph / compile(model)
FORWARD_KINDS = ("jvp", "jacfwd")
# torch.func's own differentiating levels (torch's jacfwd: a jvp level inside vmap)
FUNCTORCH_DIFFERENTIATING = ("grad", "jvp", "jacfwd")
VMAP_KINDS = ("vmap", "jacfwd")  # torch's jacfwd runs the function under vmap


class _Stack(threading.local):
    def __init__(self) -> None:
        self.kinds: list[str] = []  # outermost first
        self.marks: list[int] = []  # each level's storage birth mark (storage.new_birth_mark)
        self.randomness: list[str] = []  # each vmap level's randomness, outermost first
        self.legacy_vmap = 0  # inside torch._vmap_internals' vmap (gradcheck's batched checks)
        self.functionalizing = 0  # inside jaxgrad.func.functionalize (not a JAX transform)


stack = _Stack()


@contextlib.contextmanager
def under_transform(kind: str) -> Iterator[None]:
    """Mark a JAX transformation of jaxgrad code as active while its function is traced:
    ``grad`` (torch.func's reverse mode: grad, vjp, jacrev), ``jvp``, ``jacfwd``, ``vmap``, or
    ``eager`` (a reverse-mode trace that is not torch.func's: the VJP connecting a transform to
    the outer graph, the backward of ``compile(model)``). See Note [Function under a transform].

    >>> import jaxgrad
    >>> from jaxgrad._core.transform_stack import under_transform, stack
    >>> with under_transform("vmap"):
    ...     stack.kinds
    ['vmap']
    """
    stack.kinds.append(kind)
    stack.marks.append(new_birth_mark())
    try:
        yield
    finally:
        stack.kinds.pop()
        stack.marks.pop()


@contextlib.contextmanager
def legacy_vmap() -> Iterator[None]:
    """Run a ``vmap`` as torch's legacy ``torch._vmap_internals._vmap``, which gradcheck's
    batched checks use: its batched tensors carry forward AD's dual tensors, which
    torch.func.vmap refuses."""
    stack.legacy_vmap += 1
    try:
        yield
    finally:
        stack.legacy_vmap -= 1


CAPTURED_MUTATION = (
    "During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to call "
    "in-place operation ({}) that would mutate a captured Tensor. This is not supported; please "
    "rewrite the function being transformed to explicitly accept the mutated Tensor(s) as "
    "inputs.")


def check_not_captured(cell: Any, op_name: str) -> None:
    """torch.func's error for an in-place op, inside a grad or jvp level, on a tensor the
    transformed function captured from outside (its storage is older than the level)."""
    kinds = stack.kinds
    if kinds and kinds[-1] in FUNCTORCH_DIFFERENTIATING and cell.born < stack.marks[-1]:
        raise RuntimeError(CAPTURED_MUTATION.format(op_name))


class _Captures(threading.local):
    def __init__(self) -> None:
        # while the outermost jaxgrad.func transform traces: id -> tensor of each tensor from
        # outside it (a concrete array) that requires grad and that an op recorded
        self.found: dict[int, Any] | None = None


captures = _Captures()


@contextlib.contextmanager
def capturing_outer_tensors() -> Iterator[dict[int, Any]]:
    """Collect the tensors from outside that the traced function uses and that require grad
    (the op recorder, ``dispatch._record``, adds them to ``captures.found``), so that the
    transform's results connect to their history as in torch.func.

    >>> from jaxgrad._core.transform_stack import capturing_outer_tensors
    >>> with capturing_outer_tensors() as found:
    ...     found
    {}
    """
    previous = captures.found
    captures.found = found = {}
    try:
        yield found
    finally:
        captures.found = previous


def in_functorch_transform() -> bool:
    """Whether a ``jaxgrad.func`` transform is tracing the code running now (not only the
    reverse-mode traces ``eager`` marks)."""
    return any(kind != "eager" for kind in stack.kinds)


def refuses_requires_grad() -> bool:
    """Whether torch.func refuses ``requires_grad_()`` (and ``autograd.functional``) here: under
    its grad and vmap levels, not when forward mode is innermost (``jacfwd`` of a reverse-mode
    ``autograd.functional.jacobian``: a forward-over-reverse Hessian)."""
    return in_functorch_transform() and not in_forward_mode()


def unsupported_inside_transform(what: str) -> RuntimeError:
    """torch.func's error for ``requires_grad_()``/``retain_grad()`` on a transformed tensor."""
    extra = " (or perhaps using torch.autograd.functional.* APIs)" if what == "requires_grad_" \
        else ""
    return RuntimeError(
        f"You are attempting to call Tensor.{what}(){extra} inside of a function being "
        "transformed by a functorch transform. This is unsupported, please attempt to use the "
        "functorch transforms (e.g. grad, vjp, jacrev, jacfwd, hessian) or call "
        f"{what}() outside of a function being transformed instead.")


BACKWARD_INSIDE_TRANSFORM = (
    "backward() called inside a functorch transform. This is not supported, please use "
    "functorch.grad or functorch.vjp instead or call backward() outside of functorch transforms.")


def in_forward_mode() -> bool:
    """Whether the innermost active transform is forward mode (``jvp``, ``jacfwd``): a row's
    kernel traced now differentiates with torch's forward formula (``Op.tangent``)."""
    kinds = stack.kinds
    return bool(kinds) and kinds[-1] in FORWARD_KINDS


def is_differentiable_array(a: Any) -> bool:
    """Whether array ``a`` (None: no array) has a floating or complex dtype: what JAX
    differentiates (shared with jaxgrad.func's transforms)."""
    return a is not None and (jnp.issubdtype(a.dtype, jnp.floating)
                              or jnp.issubdtype(a.dtype, jnp.complexfloating))
