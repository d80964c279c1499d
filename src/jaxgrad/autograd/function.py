"""``torch.autograd.function``: custom Functions, their ctx and ``once_differentiable``."""

from .._autograd.function import BackwardCFunction as BackwardCFunction
from .._autograd.function import Function as Function
from .._autograd.function import FunctionCtx as FunctionCtx
from .._autograd.function import InplaceFunction as InplaceFunction
from .._autograd.function import NestedIOFunction as NestedIOFunction
from .._autograd.function import once_differentiable as once_differentiable
