"""``jaxgrad.nn.parallel``: torch's data-parallel wrappers.

>>> from jaxgrad.nn.parallel import DataParallel, DistributedDataParallel
>>> DataParallel.__name__, DistributedDataParallel.__name__
('DataParallel', 'DistributedDataParallel')
"""

from .data_parallel import DataParallel as DataParallel
from .distributed import DistributedDataParallel as DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
