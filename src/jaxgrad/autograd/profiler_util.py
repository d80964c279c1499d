"""``torch.autograd.profiler_util``: the profiler's event classes, where torch defines them."""

from .._profiler import EventList as EventList
from .._profiler import FunctionEvent as FunctionEvent
from .._profiler import FunctionEventAvg as FunctionEventAvg
