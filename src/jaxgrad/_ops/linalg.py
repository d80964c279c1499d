"""Matrix ops: tril/triu, and the products mm, bmm, mv, dot (matmul composes them the way torch
does)."""

from __future__ import annotations

import jax.numpy as jnp

from ._table import Op
from ._table import example_doc as _doc


def _triangle(name: str, keep, where: str, call: str, output: str) -> Op:
    """tril/triu: ``keep`` (jnp.tril/jnp.triu) on the last two dims, forward and backward."""

    def forward(x, diagonal):
        if x.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return keep(x, diagonal)

    return Op(f"{name}(Tensor self, int diagonal=0) -> Tensor", f"{name.title()}Backward0",
              forward, grads={"self": lambda grad, diagonal: keep(grad, diagonal)},
              variants="function method out", inplace="method",
              doc=_doc(f"The elements {where} the ``diagonal``-th diagonal of the last two dims; "
                       "the rest zero.", call, output))


TRIL = _triangle("tril", jnp.tril, "on and below", "jaxgrad.tril(jaxgrad.ones(2, 3))",
                 "tensor([[1., 0., 0.],\n        [1., 1., 0.]])")
TRIU = _triangle("triu", jnp.triu, "on and above", "jaxgrad.triu(jaxgrad.ones(2, 3), 1)",
                 "tensor([[0., 1., 1.],\n        [0., 0., 1.]])")
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
