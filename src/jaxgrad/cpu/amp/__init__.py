"""``jaxgrad.cpu.amp``: the deprecated ``jaxgrad.cpu.amp.autocast(...)`` and
``jaxgrad.cpu.amp.GradScaler(...)``, which warn and then are ``jaxgrad.amp``'s with ``"cpu"``.

>>> import jaxgrad, warnings
>>> with warnings.catch_warnings(action="ignore"), jaxgrad.cpu.amp.autocast():
...     jaxgrad.is_autocast_enabled("cpu")
True
"""

from .autocast_mode import autocast as autocast
from .grad_scaler import GradScaler as GradScaler

__all__ = ["GradScaler", "autocast"]
