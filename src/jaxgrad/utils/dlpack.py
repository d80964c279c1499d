"""``jaxgrad.utils.dlpack``: torch.utils.dlpack's names: :func:`jaxgrad.from_dlpack`,
:func:`jaxgrad.to_dlpack` and DLPack's device-type codes.

>>> import jaxgrad
>>> from jaxgrad.utils.dlpack import DLDeviceType, from_dlpack, to_dlpack
>>> from_dlpack(to_dlpack(jaxgrad.tensor([1, 2]))), int(DLDeviceType.kDLCPU)
(tensor([1, 2]), 1)
"""

from __future__ import annotations

import enum

from .._functions.dlpack import from_dlpack as from_dlpack
from .._functions.dlpack import to_dlpack as to_dlpack


class DLDeviceType(enum.IntEnum):
    """The device types of the DLPack specification (``__dlpack_device__()[0]``).

    >>> from jaxgrad.utils.dlpack import DLDeviceType
    >>> DLDeviceType(2).name
    'kDLCUDA'
    """

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


__all__ = ["DLDeviceType", "from_dlpack"]
