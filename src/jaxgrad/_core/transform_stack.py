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

REVERSE_KINDS = ("grad", "eager")  # functorch reverse mode; the outer graph / compile(model)
FORWARD_KINDS = ("jvp", "jacfwd")
VMAP_KINDS = ("vmap", "jacfwd")  # torch's jacfwd runs the function under vmap


class _Stack(threading.local):
    def __init__(self) -> None:
        self.kinds: list[str] = []  # outermost first


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
    try:
        yield
    finally:
        stack.kinds.pop()


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
