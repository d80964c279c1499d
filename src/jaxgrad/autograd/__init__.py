"""The ``torch.autograd`` namespace: ``backward``, ``grad``, ``Function``, grad modes."""

from .._engine import backward as backward
from .._engine import grad as grad
from .._function import Function as Function
from .._grad_mode import enable_grad as enable_grad
from .._grad_mode import inference_mode as inference_mode
from .._grad_mode import no_grad as no_grad
from .._grad_mode import set_grad_enabled as set_grad_enabled
from .._tensor import Tensor as Variable  # noqa: F401 - torch's legacy alias
from . import function as function
from . import functional as functional
from . import grad_mode as grad_mode
from . import graph as graph
from . import profiler as profiler
from . import profiler_util as profiler_util
from .gradcheck import gradcheck as gradcheck
from .gradcheck import gradgradcheck as gradgradcheck
