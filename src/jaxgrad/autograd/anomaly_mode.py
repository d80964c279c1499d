"""``torch.autograd.anomaly_mode``: ``detect_anomaly`` and ``set_detect_anomaly``."""

from __future__ import annotations

import warnings

from .._core.anomaly import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from .._core.typename import public_path

__all__ = ["detect_anomaly", "set_detect_anomaly"]


@public_path("jaxgrad.autograd.anomaly_mode")
class detect_anomaly:
    """Within the block, anomaly mode is on: nodes record the forward traceback that made them
    (shown when their backward fails) and, with ``check_nan``, a backward node returning NaN
    raises. Warns that the mode is for debugging when made.

    >>> import warnings, jaxgrad
    >>> x = jaxgrad.tensor([0.0], requires_grad=True)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with jaxgrad.autograd.detect_anomaly():
    ...         y = x.sqrt() * 0.0
    ...         try:
    ...             y.sum().backward()
    ...         except RuntimeError as e:
    ...             print(e)
    Function 'SqrtBackward0' returned nan values in its 0th output.
    """


    def __init__(self, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


@public_path("jaxgrad.autograd.anomaly_mode")
class set_detect_anomaly:
    """Set anomaly mode on or off now; used as a context manager, the previous setting comes
    back at the end of the block.

    >>> import jaxgrad
    >>> with jaxgrad.autograd.set_detect_anomaly(True, check_nan=False):
    ...     jaxgrad.is_anomaly_enabled(), jaxgrad.is_anomaly_check_nan_enabled()
    (True, False)
    >>> jaxgrad.is_anomaly_enabled()
    False
    """


    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)
