"""``torch.autograd.profiler``: ``profile``, ``record_function``, range emitters, event lists."""

from .._profiler import EventList as EventList
from .._profiler import FunctionEvent as FunctionEvent
from .._profiler import FunctionEventAvg as FunctionEventAvg
from .._profiler import emit_itt as emit_itt
from .._profiler import emit_nvtx as emit_nvtx
from .._profiler import kineto_available as kineto_available
from .._profiler import profile as profile
from .._profiler import record_function as record_function
