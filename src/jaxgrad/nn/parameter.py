"""``jaxgrad.nn.parameter``: ``Parameter`` and ``Buffer`` (torch.nn.parameter's path).

They are defined below the ``nn`` package (serialization needs them too) and live here by name.
"""

from .._parameter import Buffer as Buffer
from .._parameter import Parameter as Parameter
from .._parameter import _rebuild_parameter as _rebuild_parameter  # noqa: F401 - pickles name it

__all__ = ["Buffer", "Parameter"]
