"""Matrix ops: tril/triu, and the products mm, bmm, mv, dot (matmul composes them the way torch
does)."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from ._table import Op
from ._table import example_doc as _doc
from .reductions import _vector_norm_grad


def _triangle(name: str, keep, where: str, call: str, output: str) -> Op:
    """tril/triu: ``keep`` (jnp.tril/jnp.triu) on the last two dims, forward and backward."""

    def forward(x, diagonal):
        if x.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return keep(x, diagonal)

    return Op(f"{name}(Tensor self, int diagonal=0) -> Tensor", f"{name.title()}Backward0",
              forward, grads={"self": lambda grad, diagonal: keep(grad, diagonal)},
              variants="function method out", inplace="method",
              grad_nodes={"self": f"{name.title()}Backward0"},
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
               "mat2": lambda grad, self: _mH(self) @ grad},
        grad_nodes={"self": "MmBackward0", "mat2": "MmBackward0"})
BMM = Op("bmm", "BmmBackward0", jnp.matmul, inputs=("self", "mat2"),
         grads={"self": lambda grad, mat2: grad @ _mH(mat2),
                "mat2": lambda grad, self: _mH(self) @ grad},
         grad_nodes={"self": "BmmBackward0", "mat2": "BmmBackward0"})
MV = Op("mv", "MvBackward0", jnp.matmul, inputs=("self", "vec"),
        grads={"self": lambda grad, vec: jnp.outer(grad, jnp.conj(vec)),
               "vec": lambda grad, self: _mH(self) @ grad},
        grad_nodes={"self": "MulBackward0", "vec": "MvBackward0"})
DOT = Op("dot", "DotBackward0", jnp.dot, inputs=("self", "tensor"),
         grads={"self": lambda grad, tensor: grad * jnp.conj(tensor),
                "tensor": lambda grad, self: grad * jnp.conj(self)},
         grad_nodes={"self": "MulBackward0", "tensor": "MulBackward0"})


# --- beta * self + alpha * product (addmm, baddbmm, addbmm); beta and alpha are traced -----------
# torch reads neither ``self`` when beta is 0 nor the product when alpha is 0 (NaNs there vanish)

def _scaled(scale, x):
    return jnp.where(scale == 0, jnp.zeros((), x.dtype), (scale * x).astype(x.dtype))


def _scaled_by(scale: str, unscaled: str | None = None):
    """The grad_nodes entry of a formula ``maybe_multiply(x, scale)``: ``MulBackward1`` unless
    ``scale`` is 1, where it is ``x``'s node (``unscaled``; None: the incoming grad itself,
    which jaxgrad's node cannot hand on, so the fallback name)."""
    if scale == "beta":
        return lambda beta: unscaled if beta == 1 else "MulBackward1"
    return lambda alpha: unscaled if alpha == 1 else "MulBackward1"


def _maybe_multiply(grad, scale):
    return (grad * jnp.conj(scale)).astype(grad.dtype)


def _wide_matmul(a, b):
    """``a @ b``; of half-precision operands, the float32 accumulation itself (not rounded)."""
    return jnp.matmul(a, b, preferred_element_type=jnp.float32 if a.dtype in _HALF else None)


_HALF = (jnp.bfloat16, jnp.float16)


def _add_product(product):
    """``beta * self + alpha * product(a, b)``, rounded once: in half precision the product's
    float32 accumulation and the scaled sum are rounded together, as torch's GEMM with ``beta``
    does (oneDNN's bias post-op on CPU, cuBLAS's epilogue on GPU)."""
    def forward(self, a, b, beta, alpha):
        p = product(a, b)
        out = _scaled(beta, jnp.broadcast_to(self.astype(p.dtype), p.shape)) + _scaled(alpha, p)
        return out.astype(self.dtype)
    return forward


def _addmm(self, a, b, beta, alpha):
    """addmm; in half precision ``alpha * (a @ b)`` (its float32 accumulation) is rounded to
    float32 and ``beta * self`` fused into it with one rounding (oneDNN's sum post-op, an FMA),
    then rounded to the half dtype: two roundings of ``beta * self`` land one ulp off at ties."""
    if self.dtype not in _HALF:
        return _add_product(_wide_matmul)(self, a, b, beta, alpha)
    p = _scaled(alpha, _wide_matmul(a, b)).astype(jnp.float64)
    c = jnp.broadcast_to(self, p.shape).astype(jnp.float64)
    out = jnp.where(beta == 0, p, jnp.asarray(beta).astype(jnp.float32).astype(jnp.float64) * c + p)
    return out.astype(jnp.float32).astype(self.dtype)


ADDMM = Op("addmm", "AddmmBackward0", _addmm, inputs=("self", "mat1", "mat2"),
           aux=("beta", "alpha"),
           grads={"self": lambda grad, beta: _maybe_multiply(grad, beta),
                  "mat1": lambda grad, mat2, alpha: _maybe_multiply(grad @ _mH(mat2), alpha),
                  "mat2": lambda grad, mat1, alpha: _maybe_multiply(_mH(mat1) @ grad, alpha)},
           grad_nodes={"self": _scaled_by("beta"), "mat1": _scaled_by("alpha", "MmBackward0"),
                       "mat2": _scaled_by("alpha", "MmBackward0")})
BADDBMM = Op("baddbmm", "BaddbmmBackward0", _add_product(_wide_matmul),
             inputs=("self", "batch1", "batch2"), aux=("beta", "alpha"),
             grads={"self": lambda grad, beta: _maybe_multiply(grad, beta),
                    "batch1": lambda grad, batch2, alpha: _maybe_multiply(
                        grad @ _mH(batch2), alpha),
                    "batch2": lambda grad, batch1, alpha: _maybe_multiply(
                        _mH(batch1) @ grad, alpha)},
             grad_nodes={"self": _scaled_by("beta"), "batch1": _scaled_by("alpha", "BmmBackward0"),
                         "batch2": _scaled_by("alpha", "BmmBackward0")},
             overlap="allow")  # (torch's baddbmm_ has no overlap check)
def _addbmm(self, a, b, beta, alpha):
    """torch's addbmm: one addmm per batch into the result (``beta`` on the first only), so in
    half precision the result is rounded after each batch."""
    if a.dtype not in _HALF or not a.shape[0]:
        return _add_product(lambda a, b: jnp.sum(a @ b, axis=0))(self, a, b, beta, alpha)
    addmm = _add_product(_wide_matmul)
    return lax.fori_loop(1, a.shape[0], lambda i, out: addmm(out, a[i], b[i], 1, alpha),
                         addmm(self, a[0], b[0], beta, alpha))


ADDBMM = Op("addbmm", "AddbmmBackward0", _addbmm,
            inputs=("self", "batch1", "batch2"), aux=("beta", "alpha"),
            grads={"self": lambda grad, beta: _maybe_multiply(grad, beta),
                   "batch1": lambda grad, batch2, alpha: _maybe_multiply(
                       grad[None] @ _mH(batch2), alpha),
                   "batch2": lambda grad, batch1, alpha: _maybe_multiply(
                       _mH(batch1) @ grad[None], alpha)},
            grad_nodes={"self": _scaled_by("beta"), "batch1": _scaled_by("alpha", "BmmBackward0"),
                        "batch2": _scaled_by("alpha", "BmmBackward0")})


# --- vdot, addmv, addr, renorm -------------------------------------------------------------------

VDOT = Op("vdot", "VdotBackward0", lambda a, b: jnp.vdot(a, b), inputs=("self", "other"),
          grads={"self": lambda grad, other: jnp.conj(grad) * other,
                 "other": lambda grad, self: grad * self},
          grad_nodes={"self": "MulBackward0", "other": "MulBackward0"})
ADDMV = Op("addmv", "AddmvBackward0", _add_product(_wide_matmul),
           inputs=("self", "mat", "vec"), aux=("beta", "alpha"),
           grads={"self": lambda grad, beta: _maybe_multiply(grad, beta),
                  "mat": lambda grad, vec, alpha: _maybe_multiply(
                      jnp.outer(grad, jnp.conj(vec)), alpha),
                  "vec": lambda grad, mat, alpha: _maybe_multiply(_mH(mat) @ grad, alpha)},
           grad_nodes={"self": _scaled_by("beta"), "mat": _scaled_by("alpha", "MulBackward0"),
                       "vec": _scaled_by("alpha", "MvBackward0")})


def _addr(self, vec1, vec2, beta, alpha):
    """``beta * self + alpha * outer(vec1, vec2)`` (torch's addr kernel: logical for bool)."""
    outer = jnp.outer(vec1, vec2)
    if outer.dtype == jnp.bool_:
        keep = jnp.logical_and(beta != 0, self)
        return jnp.logical_or(keep, jnp.logical_and(alpha != 0, outer))
    return _scaled(beta, jnp.broadcast_to(self, outer.shape)) + _scaled(alpha, outer)


ADDR = Op("addr", "AddrBackward0", _addr, inputs=("self", "vec1", "vec2"), aux=("beta", "alpha"),
          promote="common",
          grads={"self": lambda grad, beta: _maybe_multiply(grad, beta),
                 "vec1": lambda grad, vec2, alpha: _maybe_multiply(grad @ jnp.conj(vec2), alpha),
                 "vec2": lambda grad, vec1, alpha: _maybe_multiply(
                     jnp.swapaxes(grad, -1, -2) @ jnp.conj(vec1), alpha)},
          grad_nodes={"self": _scaled_by("beta"), "vec1": _scaled_by("alpha", "MvBackward0"),
                      "vec2": _scaled_by("alpha", "MvBackward0")})


def _renorm_dims(ndim: int, dim: int) -> tuple[int, ...]:
    return tuple(i for i in range(ndim) if i != dim)


def _renorm(x, maxnorm, p, dim):
    """torch's renorm: each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled by
    ``maxnorm / (norm + 1e-7)``."""
    norm = jnp.linalg.vector_norm(x, ord=p, axis=_renorm_dims(x.ndim, dim), keepdims=True)
    factor = jnp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(norm.dtype)
    return (x * factor).astype(x.dtype)


def _renorm_grad(grad, self, maxnorm, p, dim):
    """torch's renorm_backward: ``maxnorm / n * (grad - nb / n)`` where the norm ``n`` exceeds
    ``maxnorm`` (``nb`` the norm's backward of ``sum(conj(self) * grad)``), else ``grad``."""
    dims = _renorm_dims(self.ndim, dim)
    norm = jnp.linalg.vector_norm(self, ord=p, axis=dims, keepdims=True)
    out = jnp.real(jnp.conj(self) * grad).sum(axis=dims, keepdims=True)
    nb = _vector_norm_grad(out, self, norm, p, dims, True)
    invnorm = 1.0 / (norm + 1e-7)
    scaled = maxnorm * invnorm * (grad - invnorm * nb)
    return jnp.where(norm > maxnorm, scaled.astype(grad.dtype), grad)


RENORM = Op("renorm", "RenormBackward0", _renorm, aux=("maxnorm",),
            grads={"self": _renorm_grad}, grad_nodes={"self": "WhereBackward0"})
