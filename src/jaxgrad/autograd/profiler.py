"""``torch.autograd.profiler``: ``profile``, ``record_function`` and their event lists."""

from .._profiler import EventList as EventList
from .._profiler import FunctionEvent as FunctionEvent
from .._profiler import FunctionEventAvg as FunctionEventAvg
from .._profiler import profile as profile
from .._profiler import record_function as record_function
