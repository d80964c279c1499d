"""``torch.autograd.profiler``: ``profile``, ``record_function``, range emitters, event lists."""

from .._engine.profiling import EventList as EventList
from .._engine.profiling import FunctionEvent as FunctionEvent
from .._engine.profiling import FunctionEventAvg as FunctionEventAvg
from .._engine.profiling import emit_itt as emit_itt
from .._engine.profiling import emit_nvtx as emit_nvtx
from .._engine.profiling import kineto_available as kineto_available
from .._engine.profiling import profile as profile
from .._engine.profiling import record_function as record_function
