"""``jaxgrad.utils``: torch.utils's data loading, as ``jaxgrad.utils.data``, and activation
checkpointing, as ``jaxgrad.utils.checkpoint``; hook handles and helpers, as
``jaxgrad.utils.hooks``; DLPack exchange, as ``jaxgrad.utils.dlpack``.

>>> import jaxgrad
>>> data = jaxgrad.utils.data.TensorDataset(jaxgrad.arange(4))
>>> [batch for (batch,) in jaxgrad.utils.data.DataLoader(data, batch_size=2)]
[tensor([0, 1]), tensor([2, 3])]
"""

from . import checkpoint as checkpoint
from . import data as data
from . import dlpack as dlpack
from . import hooks as hooks
