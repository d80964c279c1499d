"""Tensor methods about the memory and device a tensor lives on, beyond ``to``/``cpu``/``cuda``:
``share_memory_``/``is_shared``, ``storage_type`` (the legacy storage class), ``record_stream``
(jaxgrad has no streams), ``module_load`` (what ``load_state_dict`` copies or assigns) and the
moves to devices jaxgrad has no backend for (``xpu``, ``ipu``, ``mtia``), which raise torch's
errors. :data:`METHODS` is attached with the other hand-written methods (``methods``).

>>> import jaxgrad
>>> t = jaxgrad.zeros(2)
>>> t.is_shared(), t.share_memory_() is t, t.is_shared(), t.storage_type()
(False, True, True, <class 'jaxgrad.FloatStorage'>)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._core.legacy_storage import storage_type
from .._core.storage import UntypedStorage, physical
from .._core.tensor import Tensor

_NO_ACCELERATOR = "Cannot access accelerator device when none is available."


def _share_memory_(self: Tensor) -> Tensor:
    UntypedStorage(physical(self._cell)).share_memory_()
    return self


def _is_shared(self: Tensor) -> bool:
    return UntypedStorage(physical(self._cell)).is_shared()


def _record_stream(self: Tensor, *args: Any, **kwargs: Any) -> None:
    if not args and "s" not in kwargs:
        raise TypeError('record_stream() missing 1 required positional arguments: "s"')
    raise RuntimeError("unknown parameter type")  # (jaxgrad has no Stream type to accept)


def _module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """How ``load_state_dict`` turns the state-dict value ``other`` into this parameter or
    buffer's new value: ``other.detach()`` when assigning, else ``self.copy_(other).detach()``.

    >>> import jaxgrad
    >>> w = jaxgrad.zeros(2)
    >>> w.module_load(jaxgrad.ones(2)), w
    (tensor([1., 1.]), tensor([1., 1.]))
    """
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def _unavailable(refusal: Callable[[], Exception]) -> Callable[..., Tensor]:
    """A move to a device type with no backend: an integer device asks for the accelerator
    (none), anything else for the backend itself."""

    def move(
        self: Tensor, device: Any = None, non_blocking: bool = False, memory_format: Any = None
    ) -> Tensor:
        if isinstance(device, int) and not isinstance(device, bool):
            raise RuntimeError(_NO_ACCELERATOR)
        raise refusal()

    return move


METHODS: dict[str, Any] = {
    "share_memory_": _share_memory_,
    "is_shared": _is_shared,
    "storage_type": lambda self: storage_type(self.dtype),
    "record_stream": _record_stream,
    "module_load": _module_load,
    "xpu": _unavailable(lambda: AssertionError("Torch not compiled with XPU enabled")),
    "ipu": _unavailable(lambda: RuntimeError("PyTorch is not linked with support for ipu devices")),
    "mtia": _unavailable(
        lambda: AssertionError(
            "Torch not compiled with MTIA enabled. Ensure you have `import "
            "mtia.host_runtime.jaxgrad_mtia.dynamic_library` in your python src file and include "
            "`//mtia/host_runtime/jaxgrad_mtia:jaxgrad_mtia` as your target dependency!"
        )
    ),
}
