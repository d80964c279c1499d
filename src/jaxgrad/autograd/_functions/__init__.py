"""``torch.autograd._functions``: torch's legacy Python Functions (``Resize``, ``Type``)."""

from .tensor import Resize as Resize
from .tensor import Type as Type
