"""``torch.autograd.graph``: the Node type of every ``grad_fn`` and the saved-tensor hooks.

``saved_tensors_hooks(pack, unpack)`` makes ``pack`` run on every tensor a node saves for
backward while the block is active (the innermost block wins), and ``unpack`` on what ``pack``
returned whenever backward (or ``grad_fn._saved_<name>``) needs the tensor back. The hook stack
is thread-local, as torch's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from .._creation import empty
from .._graph import Node as Node
from .._graph import disable_saved_tensors_hooks as _disable
from .._graph import pop_saved_tensors_hooks as _pop
from .._graph import push_saved_tensors_hooks as _push
from .._graph import saved_hooks_state as _hooks_state
from .._tensor import Tensor


class saved_tensors_hooks:
    """Pack every tensor saved for backward inside the block with ``pack_hook``; unpack it with
    ``unpack_hook`` when backward needs it. Nested blocks: the innermost pair applies.

    >>> import jaxgrad
    >>> packed = []
    >>> def pack(t):
    ...     packed.append(t.shape)
    ...     return t.detach()
    >>> a = jaxgrad.ones(2, requires_grad=True)
    >>> with jaxgrad.autograd.graph.saved_tensors_hooks(pack, lambda t: t * 10):
    ...     y = a.pow(2)
    >>> packed
    [jaxgrad.Size([2])]
    >>> y.sum().backward(); a.grad
    tensor([20., 20.])
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        _push(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args: object) -> None:
        _pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep the tensors saved inside the block on the CPU and move them back to their device
    for backward (tensors already on the CPU are kept as they are).

    ``pin_memory=True`` packs into a fresh copy, as torch does; JAX exposes no pinned host
    memory, so the copy is never pinned (torch does not pin either without a CUDA device).

    >>> import jaxgrad
    >>> a = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> with jaxgrad.autograd.graph.save_on_cpu():
    ...     y = a * a
    >>> y.sum().backward(); a.grad
    tensor([2., 4.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple[Any, Tensor]:
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            packed = empty(tensor.size(), dtype=tensor.dtype)
            packed.copy_(tensor)
            return (tensor.device, packed)

        def unpack_from_cpu(packed: tuple[Any, Tensor]) -> Tensor:
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Inside the block, entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``
    (as does entering this block while such hooks are active).

    >>> import jaxgrad
    >>> with jaxgrad.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
    ...     try:
    ...         with jaxgrad.autograd.graph.save_on_cpu():
    ...             pass
    ...     except RuntimeError as e:
    ...         print(e)
    no hooks here
    """
    previous = _hooks_state.disabled_message
    try:
        _disable(error_message)
        yield
    finally:
        _disable(previous)
