"""``torch.autograd.profiler_util``: the profiler's event classes, where torch defines them."""

from .._profiler import EventList as EventList
from .._profiler import FunctionEvent as FunctionEvent
from .._profiler import FunctionEventAvg as FunctionEventAvg
from .._profiler import Interval as Interval
from .._profiler import _format_time as _format_time
from .._profiler import _format_time_share as _format_time_share
