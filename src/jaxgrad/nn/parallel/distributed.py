"""``DistributedDataParallel``: torch's data-parallel wrapper, one rank per process.

At construction rank 0's parameters and buffers are broadcast to every rank (one fused
broadcast per dtype). Each ``backward()`` that reaches the parameters queues, through their
post-accumulate-grad hooks, one callback that runs when the engine has finished: it averages
every parameter's ``.grad`` across the ranks with one fused all-reduce per dtype (torch's
reducer buckets, as a single bucket) and writes the result into the same ``.grad`` tensors.
Inside ``jaxgrad.compile`` the same callback runs in the traced step, its all-reduce an XLA
collective of the step's one program over the processes. ``no_sync()`` skips the averaging:
gradients accumulate locally and the next synchronised backward averages the sum.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import jax.numpy as jnp

from ..._core.grad_mode import is_grad_enabled, no_grad
from ..._core.tensor import Tensor
from ..._distributed import collectives as _collectives
from ..._distributed.process_group import ProcessGroup, resolve
from ...autograd.variable import Variable
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


def _fused(pg: ProcessGroup, tensors: list[Tensor], collective) -> list:
    """Run ``collective`` (on one flat tensor) over ``tensors`` grouped by dtype; returns each
    tensor's part of the result, reshaped, in order."""
    results: list = [None] * len(tensors)
    by_dtype: dict = {}
    for i, t in enumerate(tensors):
        by_dtype.setdefault(t._value.dtype, []).append(i)
    for indices in by_dtype.values():
        flat = Tensor._make(jnp.concatenate([tensors[i]._value.reshape(-1) for i in indices]))
        collective(flat, pg)
        start = 0
        for i in indices:
            size = tensors[i]._value.size
            results[i] = flat._value[start:start + size].reshape(tensors[i]._value.shape)
            start += size
    return results


_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \n"
    "If you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` "
    "function. Please include the loss function and the structure of the return value of "
    "`forward` of your module when reporting this issue (e.g. list, dict, iterable).\n"
    "Parameter indices which did not receive grad for rank {rank}: {indices}\n In addition, "
    "you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL "
    "to print out information about which particular parameters did not receive gradient on "
    "this rank as part of this error")


class DistributedDataParallel(Module):
    """Data parallelism across processes (torch's ``nn.parallel.DistributedDataParallel``):
    every rank runs ``module`` on its share of the batch; ``backward()`` leaves every rank
    with the gradients averaged over all ranks, so an optimizer step keeps the replicas equal.

    Requires ``jaxgrad.distributed.init_process_group()`` first. ``device_ids`` and
    ``output_device`` must be None (each process uses its own device, as torch's CPU modules).

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> from jaxgrad.nn.parallel import DistributedDataParallel as DDP
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29513", rank=0,
    ...                         world_size=1)
    >>> model = DDP(jaxgrad.nn.Linear(2, 1))
    >>> model(jaxgrad.ones(4, 2)).sum().backward()
    >>> model.module.weight.grad.shape, list(model.state_dict())
    (jaxgrad.Size([1, 2]), ['module.weight', 'module.bias'])
    >>> dist.destroy_process_group()
    """

    def __init__(self, module: Module, device_ids: list | None = None,
                 output_device: Any = None, dim: int = 0, broadcast_buffers: bool = True,
                 init_sync: bool = True, process_group: ProcessGroup | None = None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False, delay_all_reduce_named_params: Any = None,
                 param_to_hook_all_reduce: Any = None, mixed_precision: Any = None,
                 device_mesh: Any = None, skip_all_reduce_unused_params: bool = False,
                 forward_sync_buffers: bool | None = None,
                 bucket_cap_mb_list: list | None = None,
                 batched_grad_copy: bool = False) -> None:
        super().__init__()
        parameters = [p for p in module.parameters() if p.requires_grad]
        if not parameters:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        if device_ids is not None or output_device is not None:
            raise ValueError(
                f"DistributedDataParallel device_ids and output_device arguments only work "
                f"with single-device/multiple-device GPU modules or CPU modules, but got "
                f"device_ids {device_ids}, output_device {output_device}, and module "
                f"parameters {({p.device for p in parameters})}.")
        self.module = module
        self.process_group = resolve(process_group)
        self.dim = dim
        self.broadcast_buffers = (broadcast_buffers if forward_sync_buffers is None
                                  else forward_sync_buffers)
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024**2)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._parameters_to_average = parameters
        self._sync_queued = False
        self._armed = False  # whether the last forward prepared a gradient reduction
        # parameters without a gradient when it was due (a tuple: a compiled step that sets it
        # anew each call keeps one signature)
        self._unreduced: tuple[int, ...] = ()
        if init_sync:
            buffers = list(module.buffers()) if broadcast_buffers else []
            self._broadcast_from_rank0(list(module.parameters()) + buffers)
        for p in parameters:
            p.register_post_accumulate_grad_hook(self._on_grad_ready)

    def _broadcast_from_rank0(self, tensors: list[Tensor]) -> None:
        tensors = [t for t in tensors if t is not None]
        if not tensors or self.process_group.size == 1:
            return
        src = self.process_group.ranks[0]
        values = _fused(self.process_group, tensors,
                        lambda flat, pg: _collectives.broadcast(flat, src, group=pg))
        with no_grad():
            for t, value in zip(tensors, values):
                t._write_inplace(value, ops=0)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Run the wrapped module, after broadcasting rank 0's buffers (``broadcast_buffers``).
        As torch's, the forward decides whether the next backward averages gradients: when
        grad mode is on and not inside :meth:`no_sync`.

        >>> import jaxgrad, jaxgrad.distributed as dist
        >>> from jaxgrad.nn.parallel import DistributedDataParallel as DDP
        >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
        ...                         world_size=1)
        >>> DDP(jaxgrad.nn.Linear(2, 1))(jaxgrad.ones(3, 2)).shape
        jaxgrad.Size([3, 1])
        >>> dist.destroy_process_group()
        """
        self._sync_queued = False
        if self._unreduced:
            raise RuntimeError(_UNFINISHED.format(rank=self.process_group.rank, indices=" ".join(
                str(i) for i in self._unreduced)))
        if self.broadcast_buffers and self.require_forward_param_sync:
            self._broadcast_from_rank0(list(self.module.buffers()))
        self._armed = is_grad_enabled() and self.require_backward_grad_sync
        self.require_forward_param_sync = self._armed
        return self.module(*inputs, **kwargs)

    def _on_grad_ready(self, parameter: Tensor) -> None:
        if self._armed and not self._sync_queued:
            self._sync_queued = True
            Variable._execution_engine.queue_callback(self._average_gradients)

    def _average_gradients(self) -> None:
        """Every parameter's ``.grad`` averaged over the ranks, one fused all-reduce per
        dtype, written into the same ``.grad`` tensors. With ``find_unused_parameters`` a
        parameter without a gradient on this rank contributes zeros, one more all-reduce counts
        the ranks that used each parameter, and one no rank used keeps ``.grad`` None (as
        torch's reducer); without it, a parameter without a gradient leaves the reduction
        unfinished, and the next forward raises torch's error."""
        self._sync_queued, self._armed = False, False  # (one reduction per forward)
        pg = self.process_group
        params = self._parameters_to_average
        if not self.find_unused_parameters:
            self._unreduced = tuple(i for i, p in enumerate(params) if p.grad is None)
            if self._unreduced:
                return
        if pg.size == 1:
            return
        scale = 1.0 / pg.size  # (torch scales each rank's part, then sums)
        parts = [Tensor._make(jnp.zeros(p._value.shape, p._value.dtype) if p.grad is None
                              else p.grad._value * jnp.asarray(scale, p.grad._value.dtype))
                 for p in params]
        averaged = _fused(pg, parts, lambda flat, group: _collectives.all_reduce(flat, group=group))
        used = [True] * len(params)
        if self.find_unused_parameters:
            count = Tensor._make(jnp.asarray([p.grad is not None for p in params], jnp.int32))
            _collectives.all_reduce(count, group=pg)
            used = [bool(c) for c in count.tolist()]
        with no_grad():
            for p, value, anyone in zip(params, averaged, used):
                if p.grad is not None:
                    p.grad._write_inplace(value)
                elif anyone:
                    p.grad = Tensor._make(value)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Forward passes within this block prepare no gradient averaging: their backward
        passes accumulate locally, and the first synchronised one after it averages the sum.

        >>> import jaxgrad, jaxgrad.distributed as dist
        >>> from jaxgrad.nn.parallel import DistributedDataParallel as DDP
        >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
        ...                         world_size=1)
        >>> model = DDP(jaxgrad.nn.Linear(2, 1))
        >>> with model.no_sync():
        ...     model(jaxgrad.ones(3, 2)).sum().backward()
        >>> model(jaxgrad.ones(3, 2)).sum().backward()
        >>> model.module.bias.grad
        tensor([6.])
        >>> dist.destroy_process_group()
        """
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous
