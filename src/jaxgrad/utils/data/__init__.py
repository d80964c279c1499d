"""``jaxgrad.utils.data``: torch.utils.data's datasets, samplers, DataLoader and collation.

>>> import jaxgrad
>>> from jaxgrad.utils.data import DataLoader, TensorDataset
>>> x = jaxgrad.arange(6.0).reshape(3, 2)
>>> for xb, yb in DataLoader(TensorDataset(x, x.sum(1)), batch_size=2):
...     print(xb.shape, yb)
jaxgrad.Size([2, 2]) tensor([1., 5.])
jaxgrad.Size([1, 2]) tensor([9.])
"""

from . import distributed as distributed
from ._utils.collate import default_collate as default_collate
from ._utils.collate import default_convert as default_convert
from ._utils.worker import get_worker_info as get_worker_info
from .dataloader import DataLoader as DataLoader
from .dataset import ChainDataset as ChainDataset
from .dataset import ConcatDataset as ConcatDataset
from .dataset import Dataset as Dataset
from .dataset import IterableDataset as IterableDataset
from .dataset import StackDataset as StackDataset
from .dataset import Subset as Subset
from .dataset import TensorDataset as TensorDataset
from .dataset import random_split as random_split
from .distributed import DistributedSampler as DistributedSampler
from .sampler import BatchSampler as BatchSampler
from .sampler import RandomSampler as RandomSampler
from .sampler import Sampler as Sampler
from .sampler import SequentialSampler as SequentialSampler
from .sampler import SubsetRandomSampler as SubsetRandomSampler
from .sampler import WeightedRandomSampler as WeightedRandomSampler
