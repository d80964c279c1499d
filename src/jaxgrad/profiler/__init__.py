"""``torch.profiler``: the profiler with schedules, trace handlers and activities.

>>> import jaxgrad
>>> from jaxgrad.profiler import ProfilerActivity, profile, record_function
>>> x = jaxgrad.ones(3)
>>> with profile(activities=[ProfilerActivity.CPU]) as prof:
...     with record_function("forward"):
...         y = x * 2
>>> [e.key for e in prof.key_averages()]
['forward', 'aten::mul']
"""

from ..autograd.profiler import kineto_available as kineto_available
from ..autograd.profiler import record_function as record_function
from . import itt as itt
from .profiler import ProfilerAction as ProfilerAction
from .profiler import ProfilerActivity as ProfilerActivity
from .profiler import _KinetoProfile as _KinetoProfile
from .profiler import profile as profile
from .profiler import schedule as schedule
from .profiler import supported_activities as supported_activities
from .profiler import tensorboard_trace_handler as tensorboard_trace_handler

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "kineto_available", "record_function"]
