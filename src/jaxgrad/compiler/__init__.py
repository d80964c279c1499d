"""``jaxgrad.compiler``: torch.compiler's helpers for ``jaxgrad.compile``.

>>> import jaxgrad
>>> jaxgrad.compiler.is_compiling()
False
"""

from .._compile.compiler import Config as Config
from .._compile.compiler import GraphBreak as GraphBreak
from .._compile.compiler import callback as callback
from .._compile.compiler import config as config
from .._compile.compiler import is_compiling as is_compiling
from .._compile.compiler import reset as reset

__all__ = ["Config", "GraphBreak", "callback", "config", "is_compiling", "reset"]
