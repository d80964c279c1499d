"""Matrix ops: tril/triu, and the products mm, bmm, mv, dot (matmul composes them the way torch
does)."""

from __future__ import annotations

import jax.numpy as jnp

from ._table import Op
from ._table import example_doc as _doc


def _triangle(keep, name):
    def forward(x, diagonal):
        if x.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return keep(x, diagonal)

    return forward


TRIL = Op("tril(Tensor self, int diagonal=0) -> Tensor", "TrilBackward0",
          _triangle(jnp.tril, "tril"),
          grads={"self": lambda grad, diagonal: jnp.tril(grad, diagonal)},
          variants="function method out", inplace="method",
          doc=_doc("The lower triangle (on and below the ``diagonal``-th diagonal) of the last two "
                   "dims; the rest zero.", "jaxgrad.tril(jaxgrad.ones(2, 3))",
                   "tensor([[1., 0., 0.],\n        [1., 1., 0.]])"))
TRIU = Op("triu(Tensor self, int diagonal=0) -> Tensor", "TriuBackward0",
          _triangle(jnp.triu, "triu"),
          grads={"self": lambda grad, diagonal: jnp.triu(grad, diagonal)},
          variants="function method out", inplace="method",
          doc=_doc("The upper triangle (on and above the ``diagonal``-th diagonal) of the last two "
                   "dims; the rest zero.", "jaxgrad.triu(jaxgrad.ones(2, 3), 1)",
                   "tensor([[0., 1., 1.],\n        [0., 0., 1.]])"))
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
