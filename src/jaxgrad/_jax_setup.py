"""JAX configuration jaxgrad needs: 64-bit types, so float64/int64 exist as in torch.

This flips JAX's global ``jax_enable_x64`` flag when jaxgrad is imported. Effect on plain JAX
code in the same process: ``jnp.array(1.0)`` becomes float64 and ``jnp.arange(3)`` int64 (the
numpy defaults) instead of 32-bit. Code that names its dtypes is unaffected. jaxgrad itself
always names its dtypes, so its results do not depend on the flag's default.
"""

import jax

jax.config.update("jax_enable_x64", True)
