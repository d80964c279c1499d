"""``torch.testing._internal``: the helpers PyTorch's own test files import (``common_utils``,
``common_device_type``, ``common_dtype``), so those files run with jaxgrad bound as ``torch``."""
