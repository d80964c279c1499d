"""Helpers of the DataLoader: collation (``collate``) and worker information (``worker``), at
torch's paths (``torch.utils.data._utils.collate.default_collate_fn_map``)."""

from . import collate as collate
from . import worker as worker
