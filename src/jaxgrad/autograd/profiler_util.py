"""``torch.autograd.profiler_util``: the profiler's event classes, where torch defines them."""

from .._engine.profiling import EventList as EventList
from .._engine.profiling import FunctionEvent as FunctionEvent
from .._engine.profiling import FunctionEventAvg as FunctionEventAvg
from .._engine.profiling import Interval as Interval
from .._engine.profiling import _format_time as _format_time
from .._engine.profiling import _format_time_share as _format_time_share
