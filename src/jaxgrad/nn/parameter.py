"""``jaxgrad.nn.parameter``: ``Parameter``, ``Buffer`` and the lazy modules'
``UninitializedParameter`` / ``UninitializedBuffer`` (torch.nn.parameter's path).

They are defined below the ``nn`` package (serialization needs them too) and live here by name.
"""

from .._functions.parameter import Buffer as Buffer
from .._functions.parameter import Parameter as Parameter
from .._functions.parameter import UninitializedBuffer as UninitializedBuffer
from .._functions.parameter import UninitializedParameter as UninitializedParameter
from .._functions.parameter import _rebuild_parameter as _rebuild_parameter
from .._functions.parameter import is_lazy as is_lazy

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "is_lazy"]
