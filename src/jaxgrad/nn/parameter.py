"""``jaxgrad.nn.parameter``: ``Parameter`` and ``Buffer`` (torch.nn.parameter's path).

They are defined below the ``nn`` package (serialization needs them too) and live here by name.
"""

from .._functions.parameter import Buffer as Buffer
from .._functions.parameter import Parameter as Parameter
from .._functions.parameter import _rebuild_parameter as _rebuild_parameter

__all__ = ["Buffer", "Parameter"]
