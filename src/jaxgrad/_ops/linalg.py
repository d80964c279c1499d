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
# torch's formulas take conjugate transposes (``mat2.mH``): gradients of complex products are
# conjugate Wirtinger derivatives (a conjugate is a no-op on real arrays)

def _mH(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


MM = Op("mm", "MmBackward0", jnp.matmul, inputs=("self", "mat2"),
        grads={"self": lambda grad, mat2: grad @ _mH(mat2),
               "mat2": lambda grad, self: _mH(self) @ grad})
BMM = Op("bmm", "BmmBackward0", jnp.matmul, inputs=("self", "mat2"),
         grads={"self": lambda grad, mat2: grad @ _mH(mat2),
                "mat2": lambda grad, self: _mH(self) @ grad})
MV = Op("mv", "MvBackward0", jnp.matmul, inputs=("self", "vec"),
        grads={"self": lambda grad, vec: jnp.outer(grad, jnp.conj(vec)),
               "vec": lambda grad, self: _mH(self) @ grad})
DOT = Op("dot", "DotBackward0", jnp.dot, inputs=("self", "tensor"),
         grads={"self": lambda grad, tensor: grad * jnp.conj(tensor),
                "tensor": lambda grad, self: grad * jnp.conj(self)})


# --- beta * self + alpha * product (addmm, baddbmm, addbmm); beta and alpha are traced -----------
# torch reads neither ``self`` when beta is 0 nor the product when alpha is 0 (NaNs there vanish)

def _scaled(scale, x):
    return jnp.where(scale == 0, jnp.zeros((), x.dtype), (scale * x).astype(x.dtype))


def _maybe_multiply(grad, scale):
    return (grad * jnp.conj(scale)).astype(grad.dtype)


def _add_product(product):
    def forward(self, a, b, beta, alpha):
        p = product(a, b)
        return _scaled(beta, jnp.broadcast_to(self, p.shape)) + _scaled(alpha, p)
    return forward


ADDMM = Op("addmm", "AddmmBackward0", _add_product(jnp.matmul), inputs=("self", "mat1", "mat2"),
           aux=("beta", "alpha"),
           grads={"self": lambda grad, beta: _maybe_multiply(grad, beta),
                  "mat1": lambda grad, mat2, alpha: _maybe_multiply(grad @ _mH(mat2), alpha),
                  "mat2": lambda grad, mat1, alpha: _maybe_multiply(_mH(mat1) @ grad, alpha)})
BADDBMM = Op("baddbmm", "BaddbmmBackward0", _add_product(jnp.matmul),
             inputs=("self", "batch1", "batch2"), aux=("beta", "alpha"),
             grads={"self": lambda grad, beta: _maybe_multiply(grad, beta),
                    "batch1": lambda grad, batch2, alpha: _maybe_multiply(
                        grad @ _mH(batch2), alpha),
                    "batch2": lambda grad, batch1, alpha: _maybe_multiply(
                        _mH(batch1) @ grad, alpha)},
             overlap="allow")  # (torch's baddbmm_ has no overlap check)
ADDBMM = Op("addbmm", "AddbmmBackward0", _add_product(lambda a, b: jnp.sum(a @ b, axis=0)),
            inputs=("self", "batch1", "batch2"), aux=("beta", "alpha"),
            grads={"self": lambda grad, beta: _maybe_multiply(grad, beta),
                   "batch1": lambda grad, batch2, alpha: _maybe_multiply(
                       grad[None] @ _mH(batch2), alpha),
                   "batch2": lambda grad, batch1, alpha: _maybe_multiply(
                       _mH(batch1) @ grad[None], alpha)})
