"""``jaxgrad.compiler``: torch.compiler's helpers for ``jaxgrad.compile``.

>>> import jaxgrad
>>> jaxgrad.compiler.is_compiling()
False
"""

from .._compile import Config as Config
from .._compile import GraphBreak as GraphBreak
from .._compile import callback as callback
from .._compile import config as config
from .._compile import is_compiling as is_compiling
from .._compile import reset as reset

__all__ = ["Config", "GraphBreak", "callback", "config", "is_compiling", "reset"]
