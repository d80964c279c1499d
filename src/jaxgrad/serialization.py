"""``jaxgrad.serialization``: torch's checkpoint format (``jaxgrad.save``/``jaxgrad.load``) and
the allow-list of globals that ``jaxgrad.load(..., weights_only=True)`` may build.

>>> import jaxgrad
>>> jaxgrad.serialization.get_safe_globals()
[]
"""

from ._serialization.save_load import DEFAULT_PROTOCOL as DEFAULT_PROTOCOL
from ._serialization.save_load import load as load
from ._serialization.save_load import save as save
from ._serialization.unpickler import add_safe_globals as add_safe_globals
from ._serialization.unpickler import clear_safe_globals as clear_safe_globals
from ._serialization.unpickler import get_safe_globals as get_safe_globals
from ._serialization.unpickler import safe_globals as safe_globals
