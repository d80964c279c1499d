"""``jaxgrad.amp``: automatic mixed precision, as ``torch.amp``.

``autocast`` regions run each op in the precision torch's autocast chooses for it;
``GradScaler`` scales the loss so low-precision gradients do not underflow. See
functorch_notes/autocast.md for how this compares with JAX's explicit dtype policies.

>>> import jaxgrad
>>> with jaxgrad.amp.autocast("cpu"):
...     jaxgrad.mm(jaxgrad.ones(2, 2), jaxgrad.ones(2, 2)).dtype
jaxgrad.bfloat16
"""

from .autocast_mode import autocast as autocast
from .autocast_mode import custom_bwd as custom_bwd
from .autocast_mode import custom_fwd as custom_fwd
from .autocast_mode import is_autocast_available as is_autocast_available
from .grad_scaler import GradScaler as GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
