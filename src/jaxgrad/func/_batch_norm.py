"""``torch.func.replace_all_batch_norm_modules_``: batch norm without running statistics, so a
model runs under ``vmap`` (whose per-example batches must not update shared buffers)."""

from __future__ import annotations

from ..nn import Module
from ..nn.modules.batchnorm import _BatchNorm


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """In place, make every batch norm module in ``root`` stop tracking running statistics
    (``running_mean``, ``running_var`` and ``num_batches_tracked`` become None); returns
    ``root``.

    >>> import jaxgrad
    >>> from jaxgrad.func import replace_all_batch_norm_modules_
    >>> net = replace_all_batch_norm_modules_(jaxgrad.nn.Sequential(jaxgrad.nn.BatchNorm1d(3)))
    >>> net[0].running_mean is None, net[0].track_running_stats
    (True, False)
    """
    for module in root.modules():  # root itself first
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
