"""Layer 0: what every other layer stands on.

dtypes, devices, storage cells with their version counters, grad modes, the one cache policy,
JAX setup, the autograd graph (nodes, saved-tensor records, hooks on nodes), the tensor's data
and autograd fields and its printing. Nothing here imports another jaxgrad layer.
"""

# JAX's explicit 64-bit dtypes before any module of the package creates an array
from . import jax_setup as jax_setup
from . import kernel_cache as kernel_cache
