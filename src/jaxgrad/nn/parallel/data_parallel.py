"""``DataParallel``: torch's single-process data-parallel wrapper.

Where JAX has no GPU (torch's CPU build, as its ``DataParallel`` finds no CUDA device), the
wrapper keeps the module as ``.module``, sets ``device_ids = []`` and its forward is the module's:
outputs, gradients, hooks and the state dict (keys prefixed ``module.``) are the module's. With
GPUs it records torch's ``device_ids``, ``output_device``, ``dim`` and ``src_device_obj``, moves
the module to the first device and runs the whole batch there, the output moved to
``output_device``: the values and gradients of torch's scatter, replicate and gather, without
splitting the batch (XLA already uses the whole device; ``DistributedDataParallel`` spreads work
over several).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any

from ... import cuda as _cuda
from ..._core.device import device as _device
from ..._core.tensor import Tensor
from ..._engine.profiling import record_function
from ..modules.module import Module

__all__ = ["DataParallel"]


def _device_index(d: int | _device | str) -> int:
    """A CUDA device's index (torch's ``_get_device_index(d, optional=True)``)."""
    if isinstance(d, int):
        return d
    d = _device(d)
    return d.index if d.index is not None else _cuda.current_device()


def _to(x: Any, where: _device) -> Any:
    """``x`` with its tensors (in tuples, lists and dicts) moved to ``where``."""
    if isinstance(x, Tensor):
        return x.to(where)
    if isinstance(x, (tuple, list)):
        return type(x)(_to(v, where) for v in x)
    if isinstance(x, dict):
        return {k: _to(v, where) for k, v in x.items()}
    return x


class DataParallel(Module):
    """Runs ``module`` over the visible devices, as torch's ``nn.DataParallel`` (see the module
    docstring for how jaxgrad does it); on a machine without a GPU it is the module itself.

    >>> import jaxgrad
    >>> net = jaxgrad.nn.DataParallel(jaxgrad.nn.Linear(2, 1))
    >>> list(net.state_dict())
    ['module.weight', 'module.bias']
    >>> net(jaxgrad.ones(3, 2)).shape
    jaxgrad.Size([3, 1])
    """

    def __init__(self, module: Module, device_ids: Sequence[int | _device] | None = None,
                 output_device: int | _device | None = None, dim: int = 0) -> None:
        super().__init__()
        if not _cuda.is_available():
            self.module = module
            self.device_ids: list[int] = []
            return
        if device_ids is None:
            device_ids = list(range(_cuda.device_count()))
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_device_index(x) for x in device_ids]
        self.output_device = _device_index(output_device)
        self.src_device_obj = _device("cuda", self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """The module's forward (inputs moved to ``device_ids[0]`` where there are GPUs).

        >>> import jaxgrad
        >>> lin = jaxgrad.nn.Linear(2, 1)
        >>> x = jaxgrad.ones(1, 2)
        >>> bool((jaxgrad.nn.DataParallel(lin)(x) == lin(x)).all())
        True
        """
        with record_function("DataParallel.forward"):
            if not self.device_ids:
                return self.module(*inputs, **kwargs)
            for t in chain(self.module.parameters(), self.module.buffers()):
                if t.device != self.src_device_obj:
                    raise RuntimeError(
                        "module must have its parameters and buffers "
                        f"on device {self.src_device_obj} (device_ids[0]) but found one of "
                        f"them on device: {t.device}")
            out = self.module(*_to(inputs, self.src_device_obj),
                              **_to(kwargs, self.src_device_obj))
            return _to(out, _device("cuda", self.output_device))
