"""``jaxgrad.nn.parallel``: torch's data-parallel wrappers.

>>> from jaxgrad.nn.parallel import DistributedDataParallel
>>> DistributedDataParallel.__name__
'DistributedDataParallel'
"""

from .distributed import DistributedDataParallel as DistributedDataParallel

__all__ = ["DistributedDataParallel"]
