"""``jaxgrad.utils.benchmark``: torch's ``torch.utils.benchmark.Timer`` and ``Measurement`` for
jaxgrad statements; the timed regions wait for JAX's asynchronously dispatched work.

>>> import jaxgrad
>>> from jaxgrad.utils.benchmark import Timer
>>> m = Timer("x.exp()", globals={"x": jaxgrad.ones(16)}).timeit(20)
>>> print(repr(m).splitlines()[1:])  # doctest: +ELLIPSIS
['x.exp()', '  ...', '  1 measurement, 20 runs , 1 thread']
"""

from .utils.common import Measurement as Measurement
from .utils.common import TaskSpec as TaskSpec
from .utils.common import select_unit as select_unit
from .utils.timer import Language as Language
from .utils.timer import Timer as Timer

__all__ = ["Timer", "Measurement", "TaskSpec", "Language", "select_unit"]
