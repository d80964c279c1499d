"""``torch.autograd.grad_mode``: the grad-mode context managers, where torch defines them."""

from .._core.grad_mode import _force_original_view_tracking as _force_original_view_tracking
from .._core.grad_mode import _unsafe_preserve_version_counter as _unsafe_preserve_version_counter
from .._core.grad_mode import enable_grad as enable_grad
from .._core.grad_mode import inference_mode as inference_mode
from .._core.grad_mode import is_multithreading_enabled as is_multithreading_enabled
from .._core.grad_mode import is_view_replay_enabled as is_view_replay_enabled
from .._core.grad_mode import no_grad as no_grad
from .._core.grad_mode import set_grad_enabled as set_grad_enabled
from .._core.grad_mode import set_multithreading_enabled as set_multithreading_enabled
