"""``torch.func`` on JAX's transformations: ``jaxgrad.func.grad`` is ``jax.grad`` of a function
written with jaxgrad ops, with torch.func's signatures and errors.

>>> import jaxgrad
>>> from jaxgrad.func import grad, vmap
>>> vmap(grad(lambda x: (x ** 2).sum()))(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
tensor([[2., 4.],
        [6., 8.]])
"""

from .._compile.cached_transforms import cached as _cached
from .._func import transforms as _transforms
from .._func.functional_call import functional_call as functional_call
from .._func.functional_call import stack_module_state as stack_module_state
from .._func.functionalize import functionalize as functionalize
from .._func.to_jax import JaxModuleFunction as JaxModuleFunction
from .._func.to_jax import extract_jax as extract_jax
from .._func.to_jax import load_jax_state as load_jax_state
from .._func.to_jax import to_jax as to_jax
from .._func.transforms import debug_unwrap as debug_unwrap
from .._func.transforms import jvp as jvp
from .._func.transforms import linearize as linearize
from .._func.transforms import vjp as vjp
from ._batch_norm import replace_all_batch_norm_modules_ as replace_all_batch_norm_modules_

__all__ = ["JaxModuleFunction", "debug_unwrap", "extract_jax", "functional_call",
           "functionalize", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "load_jax_state", "replace_all_batch_norm_modules_",
           "stack_module_state", "to_jax", "vjp", "vmap"]

# eager calls run as one cached XLA program per signature (see _compile/cached_transforms.py)
grad = _cached(_transforms.grad)
grad_and_value = _cached(_transforms.grad_and_value)
hessian = _cached(_transforms.hessian)
jacfwd = _cached(_transforms.jacfwd)
jacrev = _cached(_transforms.jacrev)
vmap = _cached(_transforms.vmap)
