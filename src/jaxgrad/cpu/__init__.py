"""``jaxgrad.cpu``: torch.cpu's namespace; ``jaxgrad.cpu.amp`` holds the deprecated CPU-only
spellings of ``jaxgrad.amp.autocast`` and ``GradScaler``.

>>> import jaxgrad
>>> jaxgrad.cpu.is_available()
True
"""

from . import amp as amp


def is_available() -> bool:
    """Always True: a CPU is always there (JAX's CPU backend).

    >>> import jaxgrad
    >>> jaxgrad.cpu.is_available()
    True
    """
    return True
