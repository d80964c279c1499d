"""Gradients of complex inputs follow torch's conjugate Wirtinger convention (the gradient of a
real loss L w.r.t. z is dL/d(conj z); a holomorphic op's backward multiplies by the conjugate of
its derivative), on the eager engine and under jaxgrad.func.grad, compared with torch."""

from __future__ import annotations

import numpy as np
import pytest

from differential import ok

_RNG = np.random.default_rng(0)
A = (_RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3))).astype(np.complex64)
B = (_RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3))).astype(np.complex64)

CASES = {
    "mul": lambda T, a, b: a * b,
    "mul_scalar": lambda T, a, b: a * (2 + 3j),
    "div": lambda T, a, b: a / b,
    "mm": lambda T, a, b: a @ b,
    "mv": lambda T, a, b: T.mv(a, b[0]),
    "bmm": lambda T, a, b: T.bmm(a[None], b[None]),
    "addmm": lambda T, a, b: T.addmm(a, a, b, alpha=2, beta=0.5),
    "dot": lambda T, a, b: T.dot(a[0], b[0]),
    "outer": lambda T, a, b: T.outer(a[0], b[0]),
    "einsum": lambda T, a, b: T.einsum("ij,jk->ik", a, b),
    "linear": lambda T, a, b: T.nn.functional.linear(a, b, b[0]),
    "sum_mean": lambda T, a, b: a.sum(0) * b[0] + a.mean(),
    "prod": lambda T, a, b: a.prod(1) * b[0],
    "cumsum": lambda T, a, b: a.cumsum(1) * b,
    "cumprod": lambda T, a, b: a.cumprod(1) * b,
    "views": lambda T, a, b: a.t()[1:, :2] * b.reshape(9)[:4].reshape(2, 2),
    "cat_stack": lambda T, a, b: T.cat([a, b]).sum(0) * 2j + T.stack([a, b]).sum(0),
    "exp_log": lambda T, a, b: a.exp() * b.log(),
    "trig": lambda T, a, b: a.sin() * a.cos() + a.tan(),
    "hyperbolic": lambda T, a, b: a.sinh() + a.cosh() + a.tanh(),
    "inverse_trig": lambda T, a, b: a.asin() + a.acos() + a.atan(),
    "roots": lambda T, a, b: a.sqrt() + a.rsqrt() + a.reciprocal(),
    "powers": lambda T, a, b: a ** 2 + a ** b + a.square(),
    "sigmoid": lambda T, a, b: a.sigmoid() * b,
    "abs_sgn": lambda T, a, b: a.abs() * b + a.sgn(),
    "addcmul_lerp": lambda T, a, b: T.addcmul(a, a, b, value=2) + T.lerp(a, b, 0.3),
    "sub_alpha": lambda T, a, b: T.sub(a, b, alpha=2 + 1j),
    "norm_var": lambda T, a, b: T.linalg.vector_norm(a) * b + a.var(),
}


def _loss(T, name, a, b):
    return (CASES[name](T, a, b).abs() ** 2).sum()


@pytest.mark.parametrize("route", ["backward", "func.grad"])
@pytest.mark.parametrize("name", CASES)
def test_complex_gradients_conjugate_as_torch(name, route):
    def program(T):
        if route == "func.grad":
            return [g.clone() for g in T.func.grad(lambda a, b: _loss(T, name, a, b),
                                                   argnums=(0, 1))(T.tensor(A), T.tensor(B))]
        a, b = T.tensor(A, requires_grad=True), T.tensor(B, requires_grad=True)
        _loss(T, name, a, b).backward()
        # values: .grad's _version after a sliced transposed view or abs+sgn differs from torch
        # for real inputs too (the grad-version model, not complex conjugation)
        return [None if g is None else g.clone() for g in (a.grad, b.grad)]
    ok(program, rtol=1e-4)


@pytest.mark.parametrize("name", CASES)
def test_complex_second_order_as_torch(name):
    """The gradient of the first gradients' squared norm (create_graph=True), in float64."""
    def program(T):
        a = T.tensor(A.astype(np.complex128), requires_grad=True)
        b = T.tensor(B.astype(np.complex128), requires_grad=True)
        first = T.autograd.grad(_loss(T, name, a, b), (a, b), create_graph=True,
                                allow_unused=True)
        total = sum((g.abs() ** 2).sum() for g in first if g is not None)
        return [None if g is None else g.resolve_conj().clone()
                for g in T.autograd.grad(total, (a, b), allow_unused=True)]
    ok(program, rtol=1e-8)


def test_holomorphic_vjp_is_conjugated():
    def program(T):
        z = T.tensor([1.0 + 1j], requires_grad=True)
        x = T.tensor([1.0], requires_grad=True)
        (x * (2 + 3j)).abs().sum().backward()
        return T.autograd.grad(z * (2 + 3j), z, grad_outputs=T.tensor([1 + 0j])), x.grad
    ok(program)
