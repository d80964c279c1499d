"""The ``torch.autograd`` namespace: ``backward``, ``grad``, ``Function``, grad modes."""

import sys as _sys

from .._autograd.function import Function as Function
from .._core.grad_mode import enable_grad as enable_grad
from .._core.grad_mode import inference_mode as inference_mode
from .._core.grad_mode import no_grad as no_grad
from .._core.grad_mode import set_grad_enabled as set_grad_enabled
from .._core.graph import SavedTensor as SavedTensor
from .._engine.engine import _calculate_shape as _calculate_shape
from .._engine.engine import backward as backward
from .._engine.engine import grad as grad
from .._engine.profiling import kineto_available as kineto_available
from .._engine.profiling import profiler_enabled as _profiler_enabled  # noqa: F401 - torch's private name
from . import _functions as _functions
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
from .grad_mode import _force_original_view_tracking as _force_original_view_tracking
from .grad_mode import _unsafe_preserve_version_counter as _unsafe_preserve_version_counter
from .grad_mode import is_multithreading_enabled as is_multithreading_enabled
from .grad_mode import is_view_replay_enabled as is_view_replay_enabled
from .grad_mode import set_multithreading_enabled as set_multithreading_enabled
from .gradcheck import gradcheck as gradcheck
from .gradcheck import gradgradcheck as gradgradcheck
from .variable import Variable as Variable


def __getattr__(name: str):
    """``jaxgrad.autograd.torch`` is the jaxgrad module (torch's ``torch.autograd.torch``),
    looked up when asked for, so that the package does not import its parent."""
    if name == "torch":
        return _sys.modules[__name__.rpartition(".")[0]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
