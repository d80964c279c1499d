"""``torch.autograd.function``: custom Functions, their ctx and ``once_differentiable``."""

from .._function import BackwardCFunction as BackwardCFunction
from .._function import Function as Function
from .._function import FunctionCtx as FunctionCtx
from .._function import InplaceFunction as InplaceFunction
from .._function import NestedIOFunction as NestedIOFunction
from .._function import once_differentiable as once_differentiable
