"""The ``torch.autograd`` namespace: ``backward``, ``grad``, ``Function``, grad modes."""

from .._engine import _calculate_shape as _calculate_shape
from .._engine import backward as backward
from .._engine import execution_engine as _execution_engine
from .._engine import grad as grad
from .._function import Function as Function
from .._grad_mode import enable_grad as enable_grad
from .._grad_mode import inference_mode as inference_mode
from .._grad_mode import no_grad as no_grad
from .._grad_mode import set_grad_enabled as set_grad_enabled
from .._profiler import kineto_available as kineto_available
from .._profiler import profiler_enabled as _profiler_enabled  # noqa: F401 - torch's private name
from .._tensor import Tensor as Variable
from . import anomaly_mode as anomaly_mode
from . import forward_ad as forward_ad
from . import function as function
from . import functional as functional
from . import grad_mode as grad_mode
from . import graph as graph
from . import profiler as profiler
from . import profiler_util as profiler_util
from .anomaly_mode import detect_anomaly as detect_anomaly
from .anomaly_mode import set_detect_anomaly as set_detect_anomaly
from .gradcheck import gradcheck as gradcheck
from .gradcheck import gradgradcheck as gradgradcheck

# torch's legacy ``Variable`` is the tensor class here; torch keeps its engine object on it
Variable._execution_engine = _execution_engine
