"""Matrix products: mm, bmm, mv, dot (matmul composes them the way torch does)."""

from __future__ import annotations

import jax.numpy as jnp

from ._table import Op

MM = Op("mm", "MmBackward0", jnp.matmul, inputs=("self", "mat2"),
        grads={"self": lambda grad, mat2: grad @ mat2.T, "mat2": lambda grad, self: self.T @ grad})
BMM = Op("bmm", "BmmBackward0", jnp.matmul, inputs=("self", "mat2"),
         grads={"self": lambda grad, mat2: grad @ jnp.swapaxes(mat2, -1, -2),
                "mat2": lambda grad, self: jnp.swapaxes(self, -1, -2) @ grad})
MV = Op("mv", "MvBackward0", jnp.matmul, inputs=("self", "vec"),
        grads={"self": lambda grad, vec: jnp.outer(grad, vec),
               "vec": lambda grad, self: self.T @ grad})
DOT = Op("dot", "DotBackward0", jnp.dot, inputs=("self", "tensor"),
         grads={"self": lambda grad, tensor: grad * tensor,
                "tensor": lambda grad, self: grad * self})
